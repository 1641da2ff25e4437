"""The seam between the webhook's HTTPS server and what answers it: one request in, one answer out."""

from __future__ import annotations

import threading
from typing import Mapping, Protocol

import attrs

__all__ = ["Answer", "CertificateMetrics", "Endpoint", "Exchange"]


@attrs.frozen
class Exchange:
    """One HTTP request as the server read it: header names lower-cased, the query parsed (last value wins)."""

    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: bytes


@attrs.frozen
class Answer:
    """What the server writes back."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()


class CertificateMetrics(Protocol):
    """What the server reports about its serving certificate."""

    def certificate_read(self, ok: bool) -> None: ...

    def certificate_expiry(self, timestamp: float) -> None: ...


class Endpoint(Protocol):
    """What answers the server's requests (``AdmissionWebhook`` is one).

    The server calls ``start`` before it listens and ``stop`` after it closed, and ``answer`` on its worker
    threads, one call per request, at most ``max_concurrency`` at once.
    """

    @property
    def max_body_bytes(self) -> int: ...

    @property
    def metrics(self) -> CertificateMetrics: ...

    def start(self, sync_timeout: float) -> None:
        """Enter the Config scope, wait until the informers the handlers read can serve, start handler threads."""

    def stop(self, timeout: float) -> None:
        """Stop the handler threads (joined, up to ``timeout``) and leave the Config scope."""

    def readiness(self) -> str | None:
        """None when every request can be answered; else why not (``/readyz`` says it)."""

    def answer(self, exchange: Exchange, disconnected: threading.Event) -> Answer:
        """The answer to one request; ``disconnected`` is set when the client went away (cancel if you can)."""
