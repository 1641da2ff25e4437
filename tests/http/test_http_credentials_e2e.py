"""Credentials end to end over loopback: a rotated token is picked up after a 401, exec certs, redaction."""

from __future__ import annotations

import logging
import ssl
import sys
from pathlib import Path

import pytest
import trustme
from _servers import Exchange, TinyServer

from cloudcoil_cache import errors
from cloudcoil_cache.client._kubeconfig import build_transport, load_connection

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "config"))
from _kubeconfigs import b64, exec_user, runs, simple_kubeconfig  # noqa: E402

UNAUTHORIZED = (
    b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
    b'"message":"Unauthorized","reason":"Unauthorized","code":401}'
)


class TokenChecker:
    """A server-side handler accepting exactly one bearer token, which a test can rotate."""

    def __init__(self, valid: str) -> None:
        self.valid = valid
        self.seen: list[str] = []

    def __call__(self, ex: Exchange) -> None:
        auth = ex.headers.get("Authorization", "")
        self.seen.append(auth)
        if auth == f"Bearer {self.valid}":
            ex.reply(200, b'{"kind":"PodList","items":[]}')
        else:
            ex.reply(401, UNAUTHORIZED)


@pytest.fixture
def checker():
    check = TokenChecker("token-1")
    with TinyServer(check) as server:
        check.url = server.url
        yield check


def test_a_rotated_in_cluster_service_account_token_is_re_read_after_a_401(tmp_path, monkeypatch):
    ca = trustme.CA()
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_ctx)
    check = TokenChecker("token-1")
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("token-1")
    (sa / "ca.crt").write_bytes(ca.cert_pem.bytes())
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with TinyServer(check, ssl_context=server_ctx) as server:
        monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
        monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(server.port))
        with build_transport(load_connection(service_account_dir=sa)) as t:
            t.request("GET", "/api/v1/pods")
            check.valid = "token-2"
            (sa / "token").write_text("token-2")
            t.request("GET", "/api/v1/pods")
    assert check.seen == ["Bearer token-1", "Bearer token-1", "Bearer token-2"]


def test_an_exec_plugin_is_re_run_after_a_401_and_not_before(checker, tmp_path):
    state = tmp_path / "plugin"
    conn = load_connection(kubeconfig=simple_kubeconfig(tmp_path / "config", exec_user(state), server=checker.url))
    checker.valid = "exec-token-1"
    with build_transport(conn) as t:
        for _ in range(3):
            t.request("GET", "/api/v1/pods")
        assert runs(state) == 1
        checker.valid = "exec-token-2"
        t.request("GET", "/api/v1/pods")
    assert runs(state) == 2
    assert checker.seen[-2:] == ["Bearer exec-token-1", "Bearer exec-token-2"]


def test_a_token_rewritten_in_the_kubeconfig_is_used_after_a_401(checker, tmp_path):
    path = simple_kubeconfig(tmp_path / "config", {"token": "token-1"}, server=checker.url)
    with build_transport(load_connection(kubeconfig=path)) as t:
        t.request("GET", "/api/v1/pods")
        checker.valid = "token-2"
        simple_kubeconfig(path, {"token": "token-2"}, server=checker.url)
        t.request("GET", "/api/v1/pods")
    assert checker.seen == ["Bearer token-1", "Bearer token-1", "Bearer token-2"]


def test_an_unchanged_credential_gets_one_401_and_no_retry(checker, tmp_path):
    path = simple_kubeconfig(tmp_path / "config", {"token": "wrong"}, server=checker.url)
    with build_transport(load_connection(kubeconfig=path)) as t, pytest.raises(errors.Unauthorized):
        t.request("GET", "/api/v1/pods")
    assert checker.seen == ["Bearer wrong"]


def test_an_exec_plugin_client_certificate_is_presented_to_the_server(tmp_path):
    ca = trustme.CA()
    leaf = ca.issue_cert("plugin-user", common_name="plugin-user")
    state = tmp_path / "plugin"
    state.mkdir()
    (state / "client.crt").write_bytes(leaf.cert_chain_pems[0].bytes())
    (state / "client.key").write_bytes(leaf.private_key_pem.bytes())
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_ctx)
    server_ctx.verify_mode = ssl.CERT_REQUIRED
    ca.configure_trust(server_ctx)

    def whoami(ex: Exchange) -> None:
        subject = dict(x[0] for x in ex.peer_cert["subject"])
        ex.reply(200, b'{"user":"%s"}' % subject["commonName"].encode())

    with TinyServer(whoami, ssl_context=server_ctx) as server:
        path = simple_kubeconfig(
            tmp_path / "config",
            exec_user(state, mode="cert"),
            server=server.url,
            cluster={"certificate-authority-data": b64(ca.cert_pem.bytes())},
        )
        with build_transport(load_connection(kubeconfig=path)) as t:
            assert t.request("GET", "/version").json() == {"user": "plugin-user"}


def test_no_secret_appears_in_logs_reprs_or_errors(checker, tmp_path, caplog):
    ca = trustme.CA()
    leaf = ca.issue_cert("x")
    key_pem = leaf.private_key_pem.bytes()
    key_body = key_pem.decode().splitlines()[1]
    path = simple_kubeconfig(
        tmp_path / "config",
        {
            "token": "tok-SECRET-1",
            "client-certificate-data": b64(leaf.cert_chain_pems[0].bytes()),
            "client-key-data": b64(key_pem),
        },
        server=checker.url.replace("http:", "https:"),
        cluster={"insecure-skip-tls-verify": True},
    )
    secrets = ["tok-SECRET-1", key_body, b64(key_pem)[:40]]
    texts: list[str] = []
    caplog.set_level(logging.DEBUG)
    conn = load_connection(kubeconfig=path)
    http_conn = load_connection(kubeconfig=path, server=checker.url)
    with build_transport(conn, connect_timeout=2, read_timeout=2) as t, build_transport(http_conn) as plain:
        texts += [repr(conn), repr(conn.credentials), repr(conn.tls), repr(t), repr(plain), str(conn)]
        with pytest.raises(errors.TransportError) as tls_failure:  # https to a plain HTTP server
            t.request("GET", "/api/v1/pods")
        with pytest.raises(errors.Unauthorized) as unauthorized:
            plain.request("GET", "/api/v1/pods")
        texts += [str(tls_failure.value), repr(tls_failure.value), str(unauthorized.value), repr(unauthorized.value)]
    texts.append(caplog.text)
    assert "401 Unauthorized" in caplog.text  # the logs did record the events
    for text in texts:
        for secret in secrets:
            assert secret not in text
