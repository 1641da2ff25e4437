"""TLS settings (``TLSConfig``) and the one ``ssl.SSLContext`` built from them per transport."""

from __future__ import annotations

import contextlib
import os
import ssl
import tempfile
from typing import Any, Iterator

import attrs
from requests.adapters import HTTPAdapter

from ..errors import ConfigError
from ._interrupt import install as install_interrupt_tracking
from ._retry import StaleConnectionRetry

__all__ = ["TLSAdapter", "TLSConfig", "build_ssl_context"]


def _nbytes(value: bytes | None) -> str:
    return "None" if value is None else f"<{len(value)} bytes>"


@attrs.frozen(repr=False)
class TLSConfig:
    """How to verify the server and which client certificate to present. Immutable.

    ``*_data`` fields hold PEM bytes (already base64-decoded from a kubeconfig); ``*_file`` fields
    hold paths. The repr never shows key material, only sizes.
    """

    ca_data: bytes | None = None
    ca_file: str | None = None
    cert_data: bytes | None = None
    cert_file: str | None = None
    key_data: bytes | None = None
    key_file: str | None = None
    insecure_skip_verify: bool = False
    server_name: str | None = None

    def __repr__(self) -> str:
        return (
            f"TLSConfig(ca_data={_nbytes(self.ca_data)}, ca_file={self.ca_file!r}, "
            f"cert_data={_nbytes(self.cert_data)}, cert_file={self.cert_file!r}, "
            f"key_data={'***' if self.key_data else None}, key_file={self.key_file!r}, "
            f"insecure_skip_verify={self.insecure_skip_verify}, server_name={self.server_name!r})"
        )


def build_ssl_context(tls: TLSConfig, *, tmpdir: str | None = None) -> ssl.SSLContext:
    """Build the client ``SSLContext`` for ``tls``; trust only its CA when one is given.

    Key and certificate *data* are loaded through files (``ssl`` has no in-memory API): each is
    written to a private temporary file (mode 0600) in ``tmpdir`` that is removed as soon as
    ``load_cert_chain`` returns.

    Raises:
        ConfigError: a CA, certificate or key cannot be read or parsed (names which one).
    """
    if tls.ca_data is not None or tls.ca_file is not None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # no system CAs: trust only the cluster's CA
        _load_ca(ctx, tls)
    else:
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if tls.insecure_skip_verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    _load_client_cert(ctx, tls, tmpdir)
    return ctx


def _load_ca(ctx: ssl.SSLContext, tls: TLSConfig) -> None:
    try:
        if tls.ca_file is not None:
            ctx.load_verify_locations(cafile=tls.ca_file)
        if tls.ca_data is not None:
            ctx.load_verify_locations(cadata=tls.ca_data.decode("ascii"))
    except (OSError, ssl.SSLError, UnicodeDecodeError, ValueError) as e:
        what = f"certificate authority file {tls.ca_file}" if tls.ca_file else "certificate authority data"
        raise ConfigError(f"cannot load the {what}: {_reason(e)}") from e


def _load_client_cert(ctx: ssl.SSLContext, tls: TLSConfig, tmpdir: str | None) -> None:
    has_cert = tls.cert_data is not None or tls.cert_file is not None
    has_key = tls.key_data is not None or tls.key_file is not None
    if not has_cert and not has_key:
        return
    if has_cert != has_key:
        missing = "client key" if has_cert else "client certificate"
        raise ConfigError(f"a client certificate needs both a certificate and a key; the {missing} is missing")
    with contextlib.ExitStack() as stack:
        cert = tls.cert_file or stack.enter_context(_private_file(tls.cert_data or b"", tmpdir))
        key = tls.key_file or stack.enter_context(_private_file(tls.key_data or b"", tmpdir))
        try:
            ctx.load_cert_chain(cert, key)
        except (OSError, ssl.SSLError) as e:
            # Only file names (of the user's own files) appear; temp files and key bytes never do.
            names = ", ".join(f for f in (tls.cert_file, tls.key_file) if f) or "inline data"
            raise ConfigError(f"cannot load the client certificate/key ({names}): {_reason(e)}") from None


@contextlib.contextmanager
def _private_file(data: bytes, tmpdir: str | None) -> Iterator[str]:
    """A temporary file only the owner can read (mkstemp creates it 0600), removed on exit."""
    fd, path = tempfile.mkstemp(prefix="cloudcoil-", suffix=".pem", dir=tmpdir)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        yield path
    finally:
        os.unlink(path)


def _reason(e: BaseException) -> str:
    if isinstance(e, ssl.SSLError):
        return e.reason or str(e)
    if isinstance(e, OSError):
        return e.strerror or type(e).__name__
    return type(e).__name__


class PlainAdapter(HTTPAdapter):
    """An ``HTTPAdapter`` for http:// whose connections can be interrupted (see ``_interrupt``)."""

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
        install_interrupt_tracking(self.poolmanager)


class TLSAdapter(HTTPAdapter):
    """An ``HTTPAdapter`` whose pools all use one prepared ``SSLContext``.

    The context carries every trust decision: ``cert_verify`` is overridden so that ``requests``
    never adds certifi's public CA bundle to a cluster that configured its own CA.
    """

    def __init__(
        self, ssl_context: ssl.SSLContext, *, server_hostname: str | None = None, pool_maxsize: int = 32
    ) -> None:
        self._ssl_context = ssl_context
        self._server_hostname = server_hostname
        super().__init__(pool_connections=4, pool_maxsize=pool_maxsize, max_retries=StaleConnectionRetry())

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        pool_kwargs["ssl_context"] = self._ssl_context
        if self._server_hostname:
            pool_kwargs["server_hostname"] = self._server_hostname
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
        install_interrupt_tracking(self.poolmanager)

    def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
        conn.cert_reqs = "CERT_REQUIRED" if verify else "CERT_NONE"
        conn.ca_certs = None
        conn.ca_cert_dir = None
