"""SelfSignedCertificates: what it makes (ECDSA P-256, SANs, CA flags), its renewal steps on an injected
clock, the openssl fallback, and the error when neither cryptography nor openssl is there."""

from __future__ import annotations

import ipaddress
import shutil
import sys

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from cloudcoil_cache.admission import SelfSignedCertificates
from cloudcoil_cache.errors import ConfigError
from cloudcoil_cache.testing import FakeClock

DAY = 86400.0


def _certs(pem: bytes) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(pem)


def _check_pair(certs: SelfSignedCertificates) -> tuple[x509.Certificate, x509.Certificate]:
    (ca,) = _certs(certs.ca_bundle)
    leaf = _certs(certs.serving().cert)[0]
    assert isinstance(ca.public_key(), ec.EllipticCurvePublicKey)
    assert ca.public_key().curve.name == "secp256r1"  # type: ignore[union-attr]
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert not leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert leaf.issuer == ca.subject
    leaf.verify_directly_issued_by(ca)
    sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["localhost", "webhook.adm.svc"]
    assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    return ca, leaf


@pytest.mark.parametrize("issuer", ["cryptography", "openssl"])
def test_a_ca_and_a_leaf_for_every_host_name(issuer: str) -> None:
    if issuer == "openssl" and shutil.which("openssl") is None:
        pytest.skip("no openssl command")
    certs = SelfSignedCertificates(("127.0.0.1", "localhost", "webhook.adm.svc"), cert_days=7, issuer=issuer)
    assert certs.issuer == issuer
    ca, leaf = _check_pair(certs)
    lifetime = leaf.not_valid_after_utc - leaf.not_valid_before_utc
    assert 7 * DAY <= lifetime.total_seconds() <= 8 * DAY
    assert abs(certs.expiry() - leaf.not_valid_after_utc.timestamp()) < 2 * DAY  # (openssl rounds to whole days)
    assert b"PRIVATE KEY" in certs.serving().key
    assert b"PRIVATE KEY" not in repr(certs.serving()).encode() and "KEY" not in repr(certs)


def test_leaf_renewal_keeps_the_ca_and_ca_renewal_overlaps() -> None:
    clock = FakeClock()
    certs = SelfSignedCertificates(ca_days=30, cert_days=3, renew_at=0.5, ca_overlap=60, clock=clock)
    first_bundle, first_leaf = certs.ca_bundle, certs.serving()
    assert certs.refresh() == certs.refresh()  # nothing due
    assert not certs.refresh().leaf

    clock.advance(1.5 * DAY)  # half of cert_days: a new leaf under the same CA
    step = certs.refresh()
    assert (step.leaf, step.bundle) == (True, False)
    assert certs.ca_bundle == first_bundle and certs.serving() != first_leaf
    (old_ca,) = _certs(first_bundle)
    _certs(certs.serving().cert)[0].verify_directly_issued_by(old_ca)

    clock.advance(13.5 * DAY)  # half of ca_days: a new CA, trusted next to the old one, not used yet
    step = certs.refresh()
    assert (step.leaf, step.bundle) == (False, True)
    both = _certs(certs.ca_bundle)
    assert len(both) == 2 and both[0] == old_ca
    new_ca = both[1]
    _certs(certs.serving().cert)[0].verify_directly_issued_by(old_ca)

    clock.advance(59)
    assert not certs.refresh().leaf  # the overlap has not passed
    clock.advance(1)
    step = certs.refresh()
    assert (step.leaf, step.bundle) == (True, False)  # the leaf now comes from the new CA
    _certs(certs.serving().cert)[0].verify_directly_issued_by(new_ca)
    assert len(_certs(certs.ca_bundle)) == 2

    clock.advance(60)
    step = certs.refresh()
    assert (step.leaf, step.bundle) == (False, True)
    assert _certs(certs.ca_bundle) == [new_ca]  # the old CA is dropped


def test_bad_options_are_refused() -> None:
    with pytest.raises(ConfigError, match="renew_at"):
        SelfSignedCertificates(renew_at=1.5)
    with pytest.raises(ConfigError, match="cert_days <= ca_days"):
        SelfSignedCertificates(ca_days=1, cert_days=7)
    with pytest.raises(ConfigError, match="hostnames"):
        SelfSignedCertificates(())
    with pytest.raises(ConfigError, match="issuer"):
        SelfSignedCertificates(issuer="gnutls").ca_bundle  # noqa: B018


def test_without_cryptography_and_openssl_one_error_names_both(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "cryptography" or m.startswith("cryptography.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "cryptography", None)  # import cryptography → ImportError
    monkeypatch.setenv("PATH", "")
    with pytest.raises(ConfigError) as info:
        SelfSignedCertificates().ca_bundle  # noqa: B018
    assert "cryptography" in str(info.value) and "openssl" in str(info.value)
    assert "webhooks" in str(info.value)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl command")
def test_without_cryptography_the_openssl_command_makes_them(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "cryptography" or m.startswith("cryptography.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "cryptography", None)
    certs = SelfSignedCertificates(("127.0.0.1", "localhost", "webhook.adm.svc"))
    assert certs.issuer == "openssl"
    bundle, leaf, expiry = certs.ca_bundle, certs.serving(), certs.expiry()
    monkeypatch.undo()  # check what openssl made with cryptography
    _check_pair(certs)
    assert bundle == certs.ca_bundle and leaf == certs.serving() and expiry > 0
