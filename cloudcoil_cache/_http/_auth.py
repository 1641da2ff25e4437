"""The ``Credentials`` protocol the transport calls for each request's ``Authorization`` header."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["ClientCertificateSource", "Credentials", "MergedRefresh"]


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


@runtime_checkable
class MergedRefresh(Protocol):
    """Optional extra for credentials whose refresh is expensive (an exec plugin run).

    Each refresh makes a new *generation*. The transport reads ``generation()`` before it takes the
    header for a request; after a 401 it calls ``refresh_since(that generation)``, which refreshes
    only if the credentials are still of that generation, and otherwise (another request already
    refreshed them, or is doing so now: wait for it) returns at once. So N requests failing together
    cause one refresh, not N.
    """

    def generation(self) -> object:
        """An opaque value that changes on every refresh (compared with ``==``)."""
        ...

    def refresh_since(self, generation: object) -> bool:
        """Refresh unless that already happened since ``generation``; ``True`` if a retry may help."""
        ...
