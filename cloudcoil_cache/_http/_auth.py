"""The ``Credentials`` protocol the transport calls for each request's ``Authorization`` header."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["ClientCertificateSource", "Credentials"]


@runtime_checkable
class Credentials(Protocol):
    """Where the ``Authorization`` header comes from; implementations must be thread-safe.

    The transport calls ``auth_header()`` before every request (so it must be cheap: cache, and
    reload only when due), and ``refresh()`` at most once per request after a 401. Implementations
    never log the header, and their ``repr()`` shows ``***`` in place of any secret.
    """

    def auth_header(self) -> str | None:
        """The full ``Authorization`` header value (``"Bearer ..."``), or ``None`` for none."""
        ...

    def refresh(self) -> bool:
        """Reload from the source after a 401; ``True`` if a retry has something usable."""
        ...


@runtime_checkable
class ClientCertificateSource(Protocol):
    """Optional extra for credentials that also supply a TLS client certificate (exec plugins)."""

    def client_certificate(self) -> tuple[bytes, bytes] | None:
        """``(certificate PEM, key PEM)`` to present, or ``None``; cached by the implementation."""
        ...
