"""HTTPS over loopback with a trustme CA: server verification, skip-verify, SNI name, client certs."""

from __future__ import annotations

import os
import ssl
import stat
import warnings

import pytest
import trustme
import urllib3
from _servers import Exchange, StreamConsumer, TinyServer

from cloudcoil_cache import errors
from cloudcoil_cache._http import TLSConfig, Transport, build_ssl_context


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


def answer(ex: Exchange) -> None:
    subject = dict(x[0] for x in ex.peer_cert["subject"]) if ex.peer_cert else {}
    ex.reply(200, b'{"client":"%s"}' % subject.get("commonName", "").encode())


def https_server(ca: trustme.CA, *names: str, require_client_cert: bool = False, handler=answer) -> TinyServer:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*(names or ("127.0.0.1", "localhost"))).configure_cert(ctx)
    if require_client_cert:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ca.configure_trust(ctx)
    return TinyServer(handler, ssl_context=ctx)


@pytest.fixture
def server(ca):
    with https_server(ca) as s:
        yield s


def get(server: TinyServer, tls: TLSConfig) -> dict:
    with Transport(server.url, tls=tls, connect_timeout=5, read_timeout=5) as t:
        return t.request("GET", "/version").json()


def test_the_server_is_verified_with_ca_data(server, ca):
    assert get(server, TLSConfig(ca_data=ca.cert_pem.bytes())) == {"client": ""}


def test_the_server_is_verified_with_a_ca_file(server, ca, tmp_path):
    path = tmp_path / "ca.crt"
    ca.cert_pem.write_to_path(str(path))
    assert get(server, TLSConfig(ca_file=str(path))) == {"client": ""}


@pytest.mark.parametrize(
    "tls", [TLSConfig(ca_data=trustme.CA().cert_pem.bytes()), TLSConfig()], ids=["another-ca", "system-trust-only"]
)
def test_a_server_cert_from_an_untrusted_ca_fails_with_connect_error(server, tls):
    with pytest.raises(errors.ConnectError, match="GET /version: TLS handshake failed"):
        get(server, tls)


def test_skip_verify_connects_to_an_untrusted_server_without_insecure_warnings(server):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert get(server, TLSConfig(insecure_skip_verify=True)) == {"client": ""}
    assert not [w for w in caught if issubclass(w.category, urllib3.exceptions.InsecureRequestWarning)]


def test_server_name_overrides_the_name_checked_in_the_server_certificate(ca):
    with https_server(ca, "kubernetes.default.svc") as s:
        assert get(s, TLSConfig(ca_data=ca.cert_pem.bytes(), server_name="kubernetes.default.svc")) == {"client": ""}
        with pytest.raises(errors.ConnectError, match="TLS handshake failed"):
            get(s, TLSConfig(ca_data=ca.cert_pem.bytes()))


@pytest.fixture
def client_cert(ca) -> trustme.LeafCert:
    return ca.issue_cert("alice@example.com", common_name="alice")


@pytest.mark.parametrize("as_files", [False, True], ids=["pem-data", "pem-files"])
def test_a_client_certificate_authenticates_to_a_server_that_requires_one(ca, client_cert, tmp_path, as_files):
    cert_pem, key_pem = client_cert.cert_chain_pems[0].bytes(), client_cert.private_key_pem.bytes()
    if as_files:
        (tmp_path / "c.crt").write_bytes(cert_pem)
        (tmp_path / "c.key").write_bytes(key_pem)
        tls = TLSConfig(
            ca_data=ca.cert_pem.bytes(), cert_file=str(tmp_path / "c.crt"), key_file=str(tmp_path / "c.key")
        )
    else:
        tls = TLSConfig(ca_data=ca.cert_pem.bytes(), cert_data=cert_pem, key_data=key_pem)
    with https_server(ca, require_client_cert=True) as s:
        assert get(s, tls) == {"client": "alice"}


def test_without_a_client_certificate_a_server_requiring_one_refuses(ca):
    with https_server(ca, require_client_cert=True) as s:
        with pytest.raises(errors.TransportError):
            get(s, TLSConfig(ca_data=ca.cert_pem.bytes()))


def test_key_data_goes_through_a_private_temp_file_that_is_removed_at_once(client_cert, tmp_path, monkeypatch):
    seen: list[tuple[str, int]] = []
    original = ssl.SSLContext.load_cert_chain

    def spy(self, certfile, keyfile=None, password=None):
        for path in (certfile, keyfile):
            seen.append((str(path), stat.S_IMODE(os.stat(path).st_mode)))
        return original(self, certfile, keyfile, password)

    monkeypatch.setattr(ssl.SSLContext, "load_cert_chain", spy)
    build_ssl_context(
        TLSConfig(cert_data=client_cert.cert_chain_pems[0].bytes(), key_data=client_cert.private_key_pem.bytes()),
        tmpdir=str(tmp_path),
    )
    assert len(seen) == 2
    assert all(path.startswith(str(tmp_path)) and mode == 0o600 for path, mode in seen)
    assert list(tmp_path.iterdir()) == []


BAD_TLS = [
    (
        TLSConfig(ca_data=b"-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n"),
        "certificate authority data",
    ),
    (TLSConfig(ca_file="/nonexistent/ca.crt"), "certificate authority file /nonexistent/ca.crt"),
    (
        TLSConfig(cert_data=b"not a cert", key_data=b"-----BEGIN PRIVATE KEY-----\nSECRETKEY\n"),
        "client certificate/key (inline data)",
    ),
    (TLSConfig(cert_file="/nonexistent/c.crt", key_file="/nonexistent/c.key"), "/nonexistent/c.crt"),
    (TLSConfig(cert_data=b"x"), "the client key is missing"),
    (TLSConfig(key_data=b"SECRETKEY"), "the client certificate is missing"),
]


@pytest.mark.parametrize(
    "tls,words",
    BAD_TLS,
    ids=[
        "bad-ca-data",
        "missing-ca-file",
        "bad-cert-data",
        "missing-cert-file",
        "cert-without-key",
        "key-without-cert",
    ],
)
def test_unloadable_tls_material_raises_config_error_naming_it_but_not_the_key(tls, words, tmp_path):
    with pytest.raises(errors.ConfigError) as info:
        build_ssl_context(tls, tmpdir=str(tmp_path))
    assert words in str(info.value)
    assert "SECRETKEY" not in str(info.value) and "SECRETKEY" not in repr(tls)
    assert list(tmp_path.iterdir()) == []


def test_close_from_another_thread_unblocks_a_blocked_tls_read(ca):
    def hold(ex: Exchange) -> None:
        ex.start_chunked()
        ex.chunk(b'{"a":1}\n')
        ex.hold()

    with (
        https_server(ca, handler=hold) as s,
        Transport(s.url, tls=TLSConfig(ca_data=ca.cert_pem.bytes()), read_timeout=30) as t,
    ):
        stream = t.stream("/w")
        reader = StreamConsumer(stream, name="test-tls-reader")
        assert reader.got_line.wait(5)
        stream.close()
        assert reader.join(1.0), "close() did not unblock the TLS read"
    assert reader.outcome == ["stopped"]


def test_a_ca_bundle_from_the_environment_never_widens_the_clusters_trust(server, ca, tmp_path, monkeypatch):
    bundle = tmp_path / "bundle.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(bundle))
    monkeypatch.setenv("CURL_CA_BUNDLE", str(bundle))
    with pytest.raises(errors.ConnectError, match="TLS handshake failed"):
        get(server, TLSConfig(ca_data=trustme.CA().cert_pem.bytes()))
