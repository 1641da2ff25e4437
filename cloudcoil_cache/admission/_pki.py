"""Making keys and certificates: an ECDSA P-256 CA and serving leaves, by ``cryptography`` or ``openssl``."""

from __future__ import annotations

import calendar
import datetime
import ipaddress
import secrets
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import attrs

from cloudcoil_cache.errors import ConfigError

if TYPE_CHECKING:  # the webhooks extra; imported where used
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec

__all__ = ["KeyPair", "Issuer", "choose_issuer", "not_after", "covers"]

_STDERR_TAIL = 400
_BACKDATE = 300.0  # seconds: clocks of clients a little behind ours still accept a fresh certificate


@attrs.frozen(repr=False)
class KeyPair:
    """A PEM certificate and its PEM private key (the key never appears in a repr)."""

    cert: bytes
    key: bytes

    def __repr__(self) -> str:
        return f"<KeyPair cert={len(self.cert)} bytes>"


class Issuer(Protocol):
    """Makes a self-signed CA and leaves signed by it."""

    name: str

    def new_ca(self, common_name: str, days: float) -> KeyPair: ...

    def new_leaf(self, ca: KeyPair, hostnames: tuple[str, ...], days: float) -> KeyPair: ...


def _split_names(hostnames: tuple[str, ...]) -> tuple[list[str], list[str]]:
    ips, dns = [], []
    for name in hostnames:
        try:
            ips.append(str(ipaddress.ip_address(name)))
        except ValueError:
            dns.append(name)
    return ips, dns


class _CryptographyIssuer:
    name = "cryptography"

    def new_ca(self, common_name: str, days: float) -> KeyPair:
        from cryptography import x509
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        builder = (
            self._validity(x509.CertificateBuilder(), days)
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(self._usage(ca=True), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        )
        return self._sign(builder, key, key)

    def new_leaf(self, ca: KeyPair, hostnames: tuple[str, ...], days: float) -> KeyPair:
        from cryptography import x509
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        ca_cert = x509.load_pem_x509_certificate(ca.cert)
        ca_key = serialization.load_pem_private_key(ca.key, password=None)
        key = ec.generate_private_key(ec.SECP256R1())
        ips, dns = _split_names(hostnames)
        sans: list[x509.GeneralName] = [x509.DNSName(n) for n in dns]
        sans += [x509.IPAddress(ipaddress.ip_address(n)) for n in ips]
        builder = (
            self._validity(x509.CertificateBuilder(), days)
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostnames[0])]))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(self._usage(ca=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_cert.public_key()),  # type: ignore[arg-type]
                critical=False,
            )
        )
        if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
            raise ConfigError("the CA key is not an ECDSA key")
        return self._sign(builder, key, ca_key)

    @staticmethod
    def _validity(builder: x509.CertificateBuilder, days: float) -> x509.CertificateBuilder:
        from cryptography import x509

        now = datetime.datetime.now(datetime.timezone.utc)
        return (
            builder.serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(seconds=_BACKDATE))
            .not_valid_after(now + datetime.timedelta(days=days))
        )

    @staticmethod
    def _usage(*, ca: bool) -> x509.KeyUsage:
        from cryptography import x509

        return x509.KeyUsage(
            digital_signature=not ca,
            content_commitment=False,
            key_encipherment=False,
            data_encipherment=False,
            key_agreement=False,
            key_cert_sign=ca,
            crl_sign=ca,
            encipher_only=False,
            decipher_only=False,
        )

    @staticmethod
    def _sign(
        builder: x509.CertificateBuilder, key: ec.EllipticCurvePrivateKey, signer: ec.EllipticCurvePrivateKey
    ) -> KeyPair:
        from cryptography.hazmat.primitives import hashes, serialization

        cert = builder.sign(signer, hashes.SHA256())
        key_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return KeyPair(cert.public_bytes(serialization.Encoding.PEM), key_pem)


class _OpenSSLIssuer:
    name = "openssl"

    def __init__(self, command: str) -> None:
        self._command = command

    def _run(self, folder: Path, *args: str) -> None:
        done = subprocess.run([self._command, *args], cwd=folder, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ConfigError(f"openssl {' '.join(args[:2])} failed: {done.stderr.strip()[-_STDERR_TAIL:]}")

    def new_ca(self, common_name: str, days: float) -> KeyPair:
        with tempfile.TemporaryDirectory(prefix="cloudcoil-ca-") as tmp:
            folder = Path(tmp)
            self._run(folder, "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ca.key")
            self._run(
                folder,
                *("req", "-x509", "-new", "-key", "ca.key", "-out", "ca.crt", "-sha256"),
                *("-days", str(max(1, round(days))), "-subj", "/CN=" + common_name),
                *("-addext", "basicConstraints=critical,CA:TRUE,pathlen:0"),
                *("-addext", "keyUsage=critical,keyCertSign,cRLSign"),
            )
            return KeyPair((folder / "ca.crt").read_bytes(), (folder / "ca.key").read_bytes())

    def new_leaf(self, ca: KeyPair, hostnames: tuple[str, ...], days: float) -> KeyPair:
        ips, dns = _split_names(hostnames)
        sans = ",".join([f"DNS:{n}" for n in dns] + [f"IP:{n}" for n in ips])
        with tempfile.TemporaryDirectory(prefix="cloudcoil-leaf-") as tmp:
            folder = Path(tmp)
            (folder / "ca.crt").write_bytes(ca.cert)
            (folder / "ca.key").write_bytes(ca.key)
            (folder / "leaf.ext").write_text(
                "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                f"extendedKeyUsage=serverAuth\nsubjectAltName={sans}\nauthorityKeyIdentifier=keyid\n"
            )
            self._run(folder, "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "leaf.key")
            self._run(folder, "req", "-new", "-key", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=" + hostnames[0])
            self._run(
                folder,
                *("x509", "-req", "-in", "leaf.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-set_serial"),
                *(str(secrets.randbits(63)), "-out", "leaf.crt", "-sha256"),
                *("-days", str(max(1, round(days))), "-extfile", "leaf.ext"),
            )
            return KeyPair((folder / "leaf.crt").read_bytes(), (folder / "leaf.key").read_bytes())


def _has_cryptography() -> bool:
    try:
        import cryptography.x509  # noqa: F401
    except ImportError:
        return False
    return True


def choose_issuer(prefer: str | None = None) -> Issuer:
    """``cryptography`` when installed, else the ``openssl`` command; neither → ConfigError naming both.

    ``prefer="openssl"`` (tests) skips ``cryptography``.
    """
    if prefer not in (None, "cryptography", "openssl"):
        raise ConfigError(f"issuer must be 'cryptography' or 'openssl', got {prefer!r}")
    if prefer != "openssl" and _has_cryptography():
        return _CryptographyIssuer()
    command = shutil.which("openssl")
    if command is not None and prefer != "cryptography":
        return _OpenSSLIssuer(command)
    raise ConfigError(
        "self-signed webhook certificates need the cryptography package (pip install 'cloudcoil_cache[webhooks]') "
        "or the openssl command on PATH; neither was found (or give certfile= and keyfile=)"
    )


def not_after(cert_pem: bytes) -> float | None:
    """The expiry of the first certificate in ``cert_pem`` as a Unix timestamp (None if it cannot be read)."""
    if _has_cryptography():
        from cryptography import x509

        try:
            cert = x509.load_pem_x509_certificate(cert_pem)
        except ValueError:
            return None
        return cert.not_valid_after_utc.timestamp()
    command = shutil.which("openssl")
    if command is None:
        return None
    done = subprocess.run([command, "x509", "-noout", "-enddate"], input=cert_pem, capture_output=True, check=False)
    text = done.stdout.decode(errors="replace").strip()
    if done.returncode != 0 or not text.startswith("notAfter="):
        return None
    try:
        return float(calendar.timegm(time.strptime(text[len("notAfter=") :], "%b %d %H:%M:%S %Y %Z")))
    except ValueError:
        return None


def covers(hostnames: tuple[str, ...], host: str) -> bool:
    """Whether a certificate for ``hostnames`` is valid for ``host`` (a wildcard bind address is not checked)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        lowered = host.lower().rstrip(".")
        return any(n.lower().rstrip(".") == lowered for n in hostnames)
    if address.is_unspecified:
        return True
    for name in hostnames:
        try:
            if ipaddress.ip_address(name) == address:
                return True
        except ValueError:
            continue
    return False
