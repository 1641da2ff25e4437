"""The client over HTTPS (trustme CA): server verification, token and client-certificate auth."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

import pytest
import trustme
from _client_support import last, pod

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import CloudcoilError, ConnectError, Unauthorized
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod

TOKEN = "s3cret-token-value"


@pytest.fixture(scope="module")
def alice(ca: trustme.CA) -> trustme.LeafCert:
    return ca.issue_cert("alice.example.com", common_name="alice")


def cert_and_key(leaf: trustme.LeafCert) -> tuple[bytes, bytes]:
    return leaf.cert_chain_pems[0].bytes(), leaf.private_key_pem.bytes()


def test_a_kubeconfig_with_ca_data_and_a_token_reaches_the_https_server(
    make_https_server: Callable[..., FakeAPIServer], make_config: Callable[..., Config], tmp_path: Path
) -> None:
    server = make_https_server(expected_token=TOKEN)
    assert server.url.startswith("https://127.0.0.1:")
    config = make_config(kubeconfig=server.write_kubeconfig(tmp_path / "kc"))
    created = Pod.client(config).create(pod("web"))
    assert Pod.client(config).get("web").metadata.uid == created.metadata.uid
    assert {r.user for r in server.requests} == {"token-user"}
    assert last(server, "get").headers["Authorization"] == f"Bearer {TOKEN}"


def test_explicit_server_token_and_cafile_reach_the_https_server(
    make_https_server: Callable[..., FakeAPIServer], make_config: Callable[..., Config], ca: trustme.CA, tmp_path: Path
) -> None:
    server = make_https_server(expected_token=TOKEN)
    server.create("pods", make_pod("web"), "default")
    cafile = tmp_path / "ca.crt"
    ca.cert_pem.write_to_path(str(cafile))
    config = make_config(server=server.url, token=TOKEN, cafile=str(cafile))
    assert [p.metadata.name for p in Pod.client(config).list()] == ["web"]


@pytest.mark.parametrize("how", ["kubeconfig-data", "files"])
def test_a_client_certificate_authenticates_as_its_common_name(
    make_https_server: Callable[..., FakeAPIServer],
    make_config: Callable[..., Config],
    ca: trustme.CA,
    alice: trustme.LeafCert,
    tmp_path: Path,
    how: str,
) -> None:
    server = make_https_server(client_ca=ca.cert_pem.bytes())
    if how == "kubeconfig-data":
        config = make_config(kubeconfig=server.write_kubeconfig(tmp_path / "kc", client_cert=cert_and_key(alice)))
    else:
        certfile, keyfile, cafile = tmp_path / "c.crt", tmp_path / "c.key", tmp_path / "ca.crt"
        alice.cert_chain_pems[0].write_to_path(str(certfile))
        alice.private_key_pem.write_to_path(str(keyfile))
        ca.cert_pem.write_to_path(str(cafile))
        config = make_config(server=server.url, cafile=str(cafile), certfile=str(certfile), keyfile=str(keyfile))
    Pod.client(config).create(pod("web"))
    assert [r.user for r in server.requests] == ["alice"]


def test_without_credentials_a_client_certificate_server_answers_401(
    make_https_server: Callable[..., FakeAPIServer], make_config: Callable[..., Config], ca: trustme.CA, tmp_path: Path
) -> None:
    server = make_https_server(client_ca=ca.cert_pem.bytes())
    config = make_config(kubeconfig=server.write_kubeconfig(tmp_path / "kc"))
    with pytest.raises(Unauthorized):
        Pod.client(config).list()


def test_a_required_client_certificate_that_is_missing_fails_the_handshake(
    make_https_server: Callable[..., FakeAPIServer], make_config: Callable[..., Config], ca: trustme.CA, tmp_path: Path
) -> None:
    server = make_https_server(client_ca=ca.cert_pem.bytes(), require_client_cert=True)
    config = make_config(kubeconfig=server.write_kubeconfig(tmp_path / "kc", token=TOKEN))
    with pytest.raises(ConnectError):
        Pod.client(config).list()
    assert server.wait_for_tls_handshake_failures(1, timeout=5.0)
    assert server.requests == []


def test_a_client_certificate_from_another_ca_is_refused(
    make_https_server: Callable[..., FakeAPIServer], make_config: Callable[..., Config], ca: trustme.CA, tmp_path: Path
) -> None:
    server = make_https_server(client_ca=ca.cert_pem.bytes(), require_client_cert=True)
    stranger = trustme.CA().issue_cert("mallory.example.com", common_name="mallory")
    config = make_config(kubeconfig=server.write_kubeconfig(tmp_path / "kc", client_cert=cert_and_key(stranger)))
    with pytest.raises(ConnectError):
        Pod.client(config).list()
    assert server.requests == []


def test_a_server_certificate_from_an_untrusted_ca_is_a_connect_error(
    make_https_server: Callable[..., FakeAPIServer], make_config: Callable[..., Config], tmp_path: Path
) -> None:
    server = make_https_server()
    other_ca = trustme.CA().cert_pem.bytes()
    config = make_config(kubeconfig=server.write_kubeconfig(tmp_path / "kc", ca_cert=other_ca))
    with pytest.raises(ConnectError, match="TLS handshake failed"):
        Pod.client(config).get("web")


def test_a_wrong_token_is_unauthorized_and_never_shown(
    make_https_server: Callable[..., FakeAPIServer], make_config: Callable[..., Config], tmp_path: Path
) -> None:
    server = make_https_server(expected_token=TOKEN)
    wrong = "wrong-token-value-xyz"
    config = make_config(kubeconfig=server.write_kubeconfig(tmp_path / "kc", token=wrong))
    with pytest.raises(Unauthorized) as info:
        Pod.client(config).list()
    assert info.value.code == 401
    for text in (str(info.value), repr(info.value), repr(config), repr(Pod.client(config))):
        assert wrong not in text and TOKEN not in text


@pytest.mark.parametrize("source", ["token-file", "kubeconfig-token"])
def test_a_rotated_token_is_picked_up_after_one_401(
    make_https_server: Callable[..., FakeAPIServer], make_config: Callable[..., Config], tmp_path: Path, source: str
) -> None:
    server = make_https_server(expected_token="token-one")
    token_file = tmp_path / "token"
    kubeconfig = tmp_path / "kc"

    def write(token: str) -> None:
        if source == "token-file":
            token_file.write_text(token)
            server.write_kubeconfig(kubeconfig, token_file=token_file)
        else:
            server.write_kubeconfig(kubeconfig, token=token)

    write("token-one")
    config = make_config(kubeconfig=str(kubeconfig))
    client = Pod.client(config)
    client.list()
    server.expected_token = "token-two"
    write("token-two")
    server.clear_requests()
    assert client.list().items == []
    statuses = [(r.verb, r.user) for r in server.requests]
    assert statuses == [("list", ""), ("list", "token-user")]
    assert last(server, "list").headers["Authorization"] == "Bearer token-two"


def test_a_watch_request_over_tls_ends_when_the_server_stops(
    make_https_server: Callable[..., FakeAPIServer], make_config: Callable[..., Config], tmp_path: Path
) -> None:
    server = make_https_server()
    config = make_config(kubeconfig=server.write_kubeconfig(tmp_path / "kc"))
    server.create("pods", make_pod("web"), "default")
    events = iter(Pod.client(config).open_watch())  # one request (watch() would reconnect)
    assert next(events)[0] == "ADDED"
    outcome: dict[str, Any] = {}

    def consume() -> None:
        try:
            outcome["rest"] = list(events)
        except CloudcoilError as exc:
            outcome["error"] = exc

    reader = threading.Thread(target=consume, name="test-tls-watch-reader")
    reader.start()
    server.wait_for_watches(1)
    server.stop()
    reader.join(5.0)
    assert not reader.is_alive()
    assert outcome.get("rest", []) == []


def test_a_cached_config_syncs_and_serves_reads_over_tls(
    make_https_server: Callable[..., FakeAPIServer], make_config: Callable[..., Config], tmp_path: Path
) -> None:
    server = make_https_server(expected_token=TOKEN)
    server.create("pods", make_pod("web"), "default")
    config = make_config(
        kubeconfig=server.write_kubeconfig(tmp_path / "kc"), cache=Cache(resources=[Pod], sync_timeout=5)
    )
    with config:
        server.wait_for_watches(1)
        server.clear_requests()
        assert [p.metadata.name for p in Pod.list()] == ["web"]
        assert Pod.get("web").metadata.name == "web"
        assert [r.verb for r in server.requests if r.verb in ("get", "list")] == []
