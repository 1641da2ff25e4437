"""TLS and credentials (issue 8, F): verification on by default, skip-verify works and warns once
per Config, secrets never in logs/reprs/errors/status, key material on disk 0600 and removed."""

from __future__ import annotations

import base64
import logging
import os
import ssl
import stat
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest
import trustme
import yaml
from _servers import Exchange, TinyServer

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import CloudcoilError, ConnectError, ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


def https_server(ca: trustme.CA, handler: Any, *, client_ca: trustme.CA | None = None) -> TinyServer:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(ctx)
    if client_ca is not None:
        ctx.verify_mode = ssl.CERT_REQUIRED
        client_ca.configure_trust(ctx)
    return TinyServer(handler, ssl_context=ctx)


def ok(ex: Exchange) -> None:
    if ex.path.endswith("/missing"):
        ex.reply(404, b'{"kind":"Status","code":404,"reason":"NotFound","message":"pods \\"missing\\" not found"}')
        return
    ex.reply(
        200, b'{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default","resourceVersion":"1"}}'
    )


def kubeconfig(
    path: Path, server: str, *, cluster: dict[str, Any] | None = None, user: dict[str, Any] | None = None
) -> str:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": {"server": server, **(cluster or {})}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u", "namespace": "default"}}],
        "users": [{"name": "u", "user": user or {}}],
    }
    path.write_text(yaml.safe_dump(doc))
    return str(path)


# -- verification -------------------------------------------------------------------------------


@pytest.mark.parametrize("trust", ["system-only", "another-ca"])
def test_tls_is_verified_by_default_and_an_unknown_ca_fails_clearly(ca, tmp_path, trust):
    with https_server(ca, ok) as server:
        cluster = (
            {}
            if trust == "system-only"
            else {"certificate-authority-data": base64.b64encode(trustme.CA().cert_pem.bytes()).decode()}
        )
        config = Config(kubeconfig=kubeconfig(tmp_path / "kc", server.url, cluster=cluster))
        try:
            with pytest.raises(ConnectError, match=r"TLS handshake failed: .*CERTIFICATE_VERIFY_FAILED"):
                with config:
                    Pod.get("p")
        finally:
            config.close()


def test_the_right_ca_verifies(ca, tmp_path):
    with https_server(ca, ok) as server:
        cluster = {"certificate-authority-data": base64.b64encode(ca.cert_pem.bytes()).decode()}
        config = Config(kubeconfig=kubeconfig(tmp_path / "kc", server.url, cluster=cluster))
        with config:
            assert Pod.get("p").metadata.name == "p"
        config.close()


def test_insecure_skip_tls_verify_works_and_warns_once_per_config(ca, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    with https_server(ca, ok) as server:
        path = kubeconfig(tmp_path / "kc", server.url, cluster={"insecure-skip-tls-verify": True})
        warnings = []
        for _ in range(2):
            config = Config(kubeconfig=path)
            with config:
                for _ in range(3):
                    assert Pod.get("p").metadata.name == "p"
            config.close()
            warnings.append(
                [
                    r
                    for r in caplog.records
                    if r.levelno == logging.WARNING and "insecure-skip-tls-verify" in r.getMessage()
                ]
            )
        assert len(warnings[0]) == 1 and len(warnings[1]) == 2  # one per Config, not per request
        assert server.url.removeprefix("https://") in warnings[0][0].getMessage()


# -- secrets never shown ------------------------------------------------------------------------

PLUGIN = r"""
import json, pathlib, sys
state = pathlib.Path(sys.argv[1])
runs = state / "runs"
n = len(runs.read_text().splitlines()) + 1 if runs.exists() else 1
runs.write_text("run\n" * n)
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {"token": f"exec-SECRET-{n}-f00d"}}))
"""


def all_log_text(caplog: pytest.LogCaptureFixture) -> str:
    parts = []
    for r in caplog.records:
        parts.append(r.getMessage())
        if r.exc_info and r.exc_info[1] is not None:
            parts.append(repr(r.exc_info[1]))
            parts.append(str(r.exc_info[1]))
    return "\n".join(parts)


def test_exec_tokens_never_appear_in_logs_reprs_errors_or_status(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    state = tmp_path / "plugin"
    state.mkdir()
    (state / "plugin.py").write_text(PLUGIN)
    secrets = ["exec-SECRET-1-f00d", "exec-SECRET-2-f00d", "env-SECRET-arg"]
    with FakeAPIServer(expected_token="exec-SECRET-2-f00d") as server:
        server.create("pods", make_pod("p0", "default"), "default")
        user = {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": sys.executable,
                "args": [str(state / "plugin.py"), str(state)],
                "interactiveMode": "Never",
                "env": [{"name": "HIDDEN", "value": "env-SECRET-arg"}],
            }
        }
        path = kubeconfig(tmp_path / "kc", server.url, user=user)
        config = Config(kubeconfig=path, cache=Cache(resources=[Pod]))
        errors: list[BaseException] = []
        with config:  # the first token gets a 401: the plugin runs again, the sync succeeds
            assert [p.metadata.name for p in Pod.list().items] == ["p0"]
            with config.cache.pause():
                try:
                    Pod.get("missing")
                except ResourceNotFound as e:
                    errors.append(e)
            server.fail_next(1, 403, verb="get")
            with config.cache.pause():
                try:
                    Pod.get("p0")
                except CloudcoilError as e:
                    errors.append(e)
            status = config.cache.status()
            texts = [
                repr(config),
                str(config.connection),
                repr(config.transport),
                repr(status),
                *map(str, errors),
                *map(repr, errors),
            ]
        server.expected_token = "rotated-away"  # now every request is refused, refresh cannot help
        bad = Config(kubeconfig=path)
        try:
            with bad:
                Pod.get("p0")
        except CloudcoilError as e:
            texts += [str(e), repr(e), repr(bad)]
        finally:
            bad.close()
        config.close()
    assert len(errors) == 2 and (state / "runs").read_text().count("run") >= 2
    leaks = {s for s in secrets for t in [*texts, all_log_text(caplog)] if s in t}
    assert leaks == set()


def test_a_client_key_never_appears_in_logs_reprs_or_errors(ca, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    client_ca = trustme.CA()
    leaf = client_ca.issue_cert("alice")
    key_pem = leaf.private_key_pem.bytes()
    key_b64 = base64.b64encode(key_pem).decode()
    with https_server(ca, ok, client_ca=client_ca) as server:
        user = {
            "client-certificate-data": base64.b64encode(leaf.cert_chain_pems[0].bytes()).decode(),
            "client-key-data": key_b64,
        }
        cluster = {"certificate-authority-data": base64.b64encode(ca.cert_pem.bytes()).decode()}
        config = Config(kubeconfig=kubeconfig(tmp_path / "kc", server.url, cluster=cluster, user=user))
        texts = []
        with config:
            assert Pod.get("p").metadata.name == "p"
            with pytest.raises(ResourceNotFound) as info:
                Pod.get("missing")
            texts += [repr(config), repr(config.connection), repr(config.transport), str(info.value)]
        config.close()
    body = key_pem.decode().split("-----")[2].strip().splitlines()[0]  # a line of the key itself
    for text in [*texts, all_log_text(caplog)]:
        assert body not in text and key_b64[:40] not in text


# -- key material on disk -----------------------------------------------------------------------

_created: list[str] = []
_removed: list[tuple[str, int, int]] = []  # (path, mode, size) just before the removal
_armed = threading.Event()


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _armed.is_set():
        return
    if event == "tempfile.mkstemp" and os.path.basename(os.fspath(args[0])).startswith("cloudcoil-"):
        _created.append(os.fspath(args[0]))  # raised just before the file is created
    elif event == "os.remove" and os.fspath(args[0]) in _created:
        st = os.stat(args[0])  # raised just before the removal: the file still holds the key
        _removed.append((os.fspath(args[0]), stat.S_IMODE(st.st_mode), st.st_size))


sys.addaudithook(_audit)  # cannot be removed: inert unless a test arms it


@pytest.fixture
def disk_audit() -> Iterator[tuple[list[str], list[tuple[str, int, int]]]]:
    _created.clear()
    _removed.clear()
    _armed.set()
    try:
        yield _created, _removed
    finally:
        _armed.clear()


def test_key_material_written_to_disk_is_0600_and_removed(ca, tmp_path, disk_audit):
    created, removed = disk_audit
    client_ca = trustme.CA()
    leaf = client_ca.issue_cert("alice")
    with https_server(ca, ok, client_ca=client_ca) as server:
        user = {
            "client-certificate-data": base64.b64encode(leaf.cert_chain_pems[0].bytes()).decode(),
            "client-key-data": base64.b64encode(leaf.private_key_pem.bytes()).decode(),
        }
        cluster = {"certificate-authority-data": base64.b64encode(ca.cert_pem.bytes()).decode()}
        config = Config(kubeconfig=kubeconfig(tmp_path / "kc", server.url, cluster=cluster, user=user))
        with config:
            assert Pod.get("p").metadata.name == "p"
            assert created, "the key data was expected to go through temporary files"
            # removed already: as soon as the SSL context loaded them, not only at close/exit
            assert [p for p in created if os.path.exists(p)] == []
            assert sorted(p for p, _, _ in removed) == sorted(created)
            assert all(mode == 0o600 and size > 0 for _, mode, size in removed), removed
        config.close()
