"""WebhookServer certificates over real TLS: files swapped mid-load, files that cannot be loaded, self-signed
leaf and CA renewal under load (an injected clock drives the checks), the openssl fallback serving."""

from __future__ import annotations

import http.client
import shutil
import ssl
import threading
from pathlib import Path

import pytest
import trustme
from _server_support import WAIT, Endpoint, LoadClient, client_context, peer_certificate, request
from cryptography import x509

from cloudcoil_cache.admission import SelfSignedCertificates, WebhookServer
from cloudcoil_cache.errors import ConfigError
from cloudcoil_cache.testing import FakeClock

INTERVAL = 10.0
DAY = 86400.0


def _write(leaf: trustme.LeafCert, folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "tls.crt", folder / "tls.key"
    leaf.private_key_pem.write_to_path(str(key))
    cert.write_bytes(b"".join(blob.bytes() for blob in leaf.cert_chain_pems))
    return cert, key


def _der(leaf: trustme.LeafCert) -> bytes:
    return ssl.PEM_cert_to_DER_cert(leaf.cert_chain_pems[0].bytes().decode())


def _check(clock: FakeClock, endpoint: Endpoint, reads_before: int) -> list[bool]:
    """Let the certificate thread run one check now, and wait until it reported."""
    assert clock.wait_for_sleepers(1, WAIT)
    clock.advance(INTERVAL)
    return endpoint.metrics.wait_reads(reads_before + 1)


@pytest.fixture
def ca() -> trustme.CA:
    return trustme.CA()


def test_a_certificate_file_swap_mid_load_loses_no_request(ca: trustme.CA, tmp_path: Path) -> None:
    first, second = ca.issue_cert("127.0.0.1", "localhost"), ca.issue_cert("127.0.0.1", "localhost")
    certfile, keyfile = _write(first, tmp_path)
    clock, endpoint = FakeClock(), Endpoint()
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    server = WebhookServer(
        endpoint, port=0, certfile=certfile, keyfile=keyfile, cert_check_interval=INTERVAL, clock=clock
    )
    with server:
        assert endpoint.metrics.reads == [True] and len(endpoint.metrics.expiries) == 1
        assert peer_certificate(server, trust) == _der(first)
        idle = http.client.HTTPSConnection("127.0.0.1", server.port, context=trust, timeout=WAIT)
        idle.request("GET", "/healthz")
        assert idle.getresponse().read() == b"ok\n"  # kept alive, then idle across the swap
        with LoadClient(server, lambda: trust, threads=8, per_connection=10) as load:
            load.wait_for(500)
            staged = tmp_path / "staged"
            staged.mkdir()
            new_cert, new_key = _write(second, staged)
            new_key.replace(keyfile)  # a non-atomic swap: key first, the check may see a mismatch
            new_cert.replace(certfile)
            reads = _check(clock, endpoint, 1)
            assert reads[-1] is True  # the new pair loaded
            assert peer_certificate(server, trust) == _der(second)  # new connections get the new certificate
            # The idle one made under the old certificate is not closed under a client that may be
            # sending on it (kube-apiserver saw "EOF"): its next answer says Connection: close.
            idle.request("GET", "/healthz")
            last = idle.getresponse()
            assert last.read() == b"ok\n" and last.getheader("Connection") == "close"
            assert idle.sock is None  # closed after that answer: the next request re-handshakes
            idle.close()
            load.wait_for(500)
        assert load.failures == []
        assert load.done >= 1000
    assert endpoint.metrics.expiries[-1] != endpoint.metrics.expiries[0] or len(endpoint.metrics.expiries) == 2


def test_files_that_cannot_be_loaded_keep_the_old_certificate(ca: trustme.CA, tmp_path: Path) -> None:
    first, other = ca.issue_cert("127.0.0.1"), ca.issue_cert("127.0.0.1")
    certfile, keyfile = _write(first, tmp_path)
    key_pem = keyfile.read_bytes()
    clock, endpoint = FakeClock(), Endpoint()
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    with WebhookServer(endpoint, port=0, certfile=certfile, keyfile=keyfile, clock=clock) as server:
        certfile.write_bytes(b"not a certificate")
        assert _check(clock, endpoint, 1)[-1] is False
        assert peer_certificate(server, trust) == _der(first)
        other.private_key_pem.write_to_path(str(keyfile))  # a key that does not match the certificate
        certfile.write_bytes(first.cert_chain_pems[0].bytes())
        assert _check(clock, endpoint, 2)[-1] is False
        keyfile.unlink()
        assert _check(clock, endpoint, 3)[-1] is False
        assert peer_certificate(server, trust) == _der(first)
        assert request(server, "/echo", method="POST", body=b"{}", context=trust)[0] == 200
    assert key_pem  # (the key's content is never part of a log line or an error: see the next test)


def test_unloadable_files_at_start_are_a_clear_error(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    ca = trustme.CA()
    certfile, keyfile = _write(ca.issue_cert("127.0.0.1"), tmp_path)
    key_text = keyfile.read_text()
    certfile.write_text("garbage")
    endpoint = Endpoint()
    with pytest.raises(ConfigError, match="cannot load the certificate") as info:
        WebhookServer(endpoint, port=0, certfile=certfile, keyfile=keyfile).start()
    assert endpoint.started == 0  # nothing started: the informers are not synced for nothing
    body = key_text.splitlines()[1]
    assert body not in str(info.value) and body not in caplog.text


def test_self_signed_leaf_and_ca_renewal_under_load() -> None:
    clock, endpoint = FakeClock(), Endpoint()
    certs = SelfSignedCertificates(ca_days=30, cert_days=3, renew_at=0.5, ca_overlap=60, clock=clock)
    server = WebhookServer(endpoint, port=0, certificates=certs, cert_check_interval=INTERVAL, clock=clock)
    trusted = {"bundle": server.ca_bundle}
    bundles: list[bytes] = []
    changed = threading.Condition()

    def on_bundle(bundle: bytes) -> None:  # what install() does: register the new bundle
        with changed:
            trusted["bundle"] = bundle
            bundles.append(bundle)
            changed.notify_all()

    server.add_ca_bundle_listener(on_bundle)

    def wait_bundles(n: int) -> None:
        with changed:
            assert changed.wait_for(lambda: len(bundles) >= n, WAIT)

    with server:
        first_leaf = peer_certificate(server, client_context(trusted["bundle"]))
        with LoadClient(server, lambda: client_context(trusted["bundle"]), threads=8) as load:
            load.wait_for(200)
            clock.advance(1.5 * DAY - INTERVAL)  # leaf renewal is due at the next check
            _check(clock, endpoint, 1)
            leaf_two = peer_certificate(server, client_context(trusted["bundle"]))
            assert leaf_two != first_leaf and bundles == []
            load.wait_for(200)
            clock.advance(13.5 * DAY)  # CA renewal: bundle old+new first
            bundles_before = len(bundles)
            assert clock.wait_for_sleepers(1, WAIT)
            clock.advance(INTERVAL)
            wait_bundles(bundles_before + 1)
            assert len(x509.load_pem_x509_certificates(trusted["bundle"])) == 2
            assert peer_certificate(server, client_context(trusted["bundle"])) == leaf_two
            load.wait_for(200)
            clock.advance(60 - INTERVAL)  # after the overlap: the new CA's leaf
            _check(clock, endpoint, 2)
            new_ca = x509.load_pem_x509_certificates(trusted["bundle"])[1]
            served = peer_certificate(server, client_context(trusted["bundle"]))
            x509.load_der_x509_certificate(served).verify_directly_issued_by(new_ca)
            load.wait_for(200)
            clock.advance(60 - INTERVAL)  # then the old CA leaves the bundle
            assert clock.wait_for_sleepers(1, WAIT)
            clock.advance(INTERVAL)
            wait_bundles(2)
            assert x509.load_pem_x509_certificates(trusted["bundle"]) == [new_ca]
            load.wait_for(200)
        assert load.failures == []
    assert endpoint.metrics.reads == [True, True, True]
    assert len(endpoint.metrics.expiries) == 3


@pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl command")
def test_a_server_on_certificates_made_by_openssl() -> None:
    endpoint = Endpoint()
    certs = SelfSignedCertificates(("127.0.0.1", "localhost"), issuer="openssl")
    with WebhookServer(endpoint, port=0, certificates=certs) as server:
        assert request(server, "/echo", method="POST", body=b"{}")[0] == 200
        assert endpoint.metrics.expiries and endpoint.metrics.reads == [True]


def test_client_ca_requires_a_client_certificate(ca: trustme.CA, tmp_path: Path) -> None:
    clients = trustme.CA()
    client_ca = tmp_path / "clients.pem"
    clients.cert_pem.write_to_path(str(client_ca))
    endpoint = Endpoint()
    with WebhookServer(endpoint, port=0, client_ca=client_ca) as server:
        anonymous = client_context(server.ca_bundle)
        with pytest.raises((ssl.SSLError, ConnectionError)):
            request(server, "/echo", method="POST", body=b"{}", context=anonymous)
        known = client_context(server.ca_bundle)
        clients.issue_cert("kube-apiserver").configure_cert(known)
        assert request(server, "/echo", method="POST", body=b"{}", context=known)[0] == 200
    assert endpoint.calls == ["/echo"]
