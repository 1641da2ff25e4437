"""The webhook server's serving TLS: its SSLContext, reloaded from files or self-signed certificates; its CA bundle."""

from __future__ import annotations

import logging
import os
import ssl
import tempfile
import threading
from pathlib import Path
from typing import Callable

from cloudcoil_cache.admission._certs import SelfSignedCertificates
from cloudcoil_cache.admission._exchange import CertificateMetrics
from cloudcoil_cache.admission._pki import KeyPair, not_after
from cloudcoil_cache.errors import ConfigError

__all__ = ["ServingTLS"]

log = logging.getLogger("cloudcoil_cache.admission.server")

BundleListener = Callable[[bytes], None]


def _base_context(client_ca: str | None) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["http/1.1"])
    if client_ca is not None:
        context.load_verify_locations(cafile=client_ca)
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def _context_from_pem(pair: KeyPair, client_ca: str | None) -> ssl.SSLContext:
    """``ssl`` loads keys only from files: a private folder (0700) that lives for the load."""
    context = _base_context(client_ca)
    with tempfile.TemporaryDirectory(prefix="cloudcoil-webhook-") as tmp:
        cert, key = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
        cert.write_bytes(pair.cert)
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(pair.key)
        context.load_cert_chain(cert, key)
    return context


class ServingTLS:
    """Holds the SSLContext new handshakes use; ``poll()`` reloads it when the certificate changed.

    From ``certfile``/``keyfile``: a change of either file's content loads a new context; an unreadable
    or mismatched pair keeps the old one and counts an error. From ``certificates``: its renewal steps.
    """

    def __init__(
        self,
        *,
        certfile: str | None,
        keyfile: str | None,
        client_ca: str | None,
        certificates: SelfSignedCertificates | None,
        ca_bundle: bytes,
        metrics: Callable[[], CertificateMetrics],
    ) -> None:
        self._certfile = certfile
        self._keyfile = keyfile
        self._client_ca = client_ca
        self._certificates = certificates
        self._static_bundle = ca_bundle
        self._metrics = metrics
        self._lock = threading.Lock()
        self._context: ssl.SSLContext | None = None
        self._loaded: tuple[bytes, bytes] | None = None  # the files' content behind the context
        self._generation = 0
        self._listeners: list[BundleListener] = []

    # ---------------------------------------------------------------- reads
    @property
    def context(self) -> ssl.SSLContext:
        with self._lock:
            if self._context is None:
                raise RuntimeError("the webhook server's certificate is not loaded yet (start() the server)")
            return self._context

    @property
    def generation(self) -> int:
        """Counts context changes: a connection made under an older one is closed once idle."""
        with self._lock:
            return self._generation

    @property
    def ca_bundle(self) -> bytes:
        if self._certificates is not None:
            return self._certificates.ca_bundle
        return self._static_bundle

    def add_listener(self, listener: BundleListener) -> None:
        if not callable(listener):
            raise TypeError(f"add_ca_bundle_listener() takes a callable, got {type(listener).__name__}")
        with self._lock:
            self._listeners.append(listener)

    # ---------------------------------------------------------------- loads
    def load(self) -> None:
        """The first load, at start: failure raises ``ConfigError``."""
        if self._certificates is not None:  # (made on first use; renewal steps only in poll(), heard)
            self._install(_context_from_pem(self._certificates.serving(), self._client_ca))
            self._report(True, self._certificates.expiry())
            return
        if not self._reload_files():
            raise ConfigError(
                f"WebhookServer: cannot load the certificate {self._certfile!r} with the key {self._keyfile!r} "
                "(unreadable, not PEM, or the key does not match)"
            )

    def poll(self) -> bool:
        """Reload if the certificate changed; True when new handshakes now get a new certificate."""
        if self._certificates is None:
            return self._reload_files()
        step = self._certificates.refresh()
        changed = False
        if step.leaf:
            try:
                self._install(_context_from_pem(self._certificates.serving(), self._client_ca))
            except (OSError, ssl.SSLError) as exc:
                log.warning("webhook server: loading the renewed certificate failed: %s", type(exc).__name__)
                self._report(False, None)
            else:
                self._report(True, self._certificates.expiry())
                changed = True
        if step.bundle:
            self._tell_listeners(self._certificates.ca_bundle)
        return changed

    def _reload_files(self) -> bool:
        assert self._certfile is not None and self._keyfile is not None
        try:
            content = (Path(self._certfile).read_bytes(), Path(self._keyfile).read_bytes())
        except OSError as exc:
            return self._failed(f"cannot read: {exc.strerror or type(exc).__name__}")
        with self._lock:
            if content == self._loaded:
                return False
        try:
            context = _base_context(self._client_ca)
            context.load_cert_chain(self._certfile, self._keyfile)
            again = (Path(self._certfile).read_bytes(), Path(self._keyfile).read_bytes())
        except (OSError, ssl.SSLError) as exc:
            return self._failed(f"cannot load: {type(exc).__name__} {getattr(exc, 'reason', None) or ''}".rstrip())
        if again != content:  # a swap in progress: load what it ends with at the next poll
            return False
        self._install(context, content)
        self._report(True, not_after(content[0]))
        return True

    def _failed(self, why: str) -> bool:
        # File names only: neither the key nor the file's content is ever logged.
        log.warning(
            "webhook server: certificate %s / key %s %s; keeping the certificate loaded before",
            self._certfile,
            self._keyfile,
            why,
        )
        self._report(False, None)
        return False

    def _install(self, context: ssl.SSLContext, content: tuple[bytes, bytes] | None = None) -> None:
        with self._lock:
            self._context = context
            self._loaded = content
            self._generation += 1

    def _report(self, ok: bool, expiry: float | None) -> None:
        try:
            metrics = self._metrics()
            metrics.certificate_read(ok)
            if expiry is not None:
                metrics.certificate_expiry(expiry)
        except Exception:
            log.exception("webhook server: reporting certificate metrics failed")

    def _tell_listeners(self, bundle: bytes) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(bundle)
            except Exception:
                log.exception("webhook server: a CA bundle listener failed")
