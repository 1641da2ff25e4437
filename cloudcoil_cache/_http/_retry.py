"""Which failed responses the transport retries, and how long it waits first (Retry-After)."""

from __future__ import annotations

import email.utils
import time
from types import TracebackType
from typing import Any, Mapping

import attrs
from urllib3.exceptions import ProtocolError
from urllib3.util.retry import Retry

from ._interrupt import interrupted_here

__all__ = ["RetryPolicy", "StaleConnectionRetry", "parse_retry_after"]


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), or ``None``."""
    value = headers.get("Retry-After")
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


@attrs.frozen
class RetryPolicy:
    """When to retry a failed response and how long to wait; an immutable value.

    client-go's ``checkWait``: a 429 or any 5xx is retried only when the server said when to
    (``Retry-After``: API Priority & Fairness, max-inflight rejections, an apiserver shutting down
    with ``--shutdown-send-retry-after``, a too-large resourceVersion). The wait is the server's,
    capped at ``max_wait``. Without ``Retry-After`` the error is raised at once: a server that
    answers 503 with no hint (an aggregated API that is down, a proxy in front) would otherwise
    hold every caller for the whole doubling backoff (31 s with 5 retries), the cache's fallback
    reads included, and the callers (the reflector, a controller's queue, the application) have
    their own backoff.
    """

    max_retries: int = 5
    max_wait: float = 60.0

    def delay(self, status_code: int, retry_after: float | None, attempt: int) -> float | None:
        """Seconds to wait before retry number ``attempt + 1``, or ``None`` to give up now."""
        if attempt >= self.max_retries or retry_after is None:
            return None
        if status_code == 429 or status_code >= 500:
            return min(retry_after, self.max_wait)
        return None


class StaleConnectionRetry(Retry):
    """urllib3's retries, limited to what Go's ``net/http`` does for client-go: a GET whose
    connection broke before any response came (``RemoteDisconnected``, a reset: a kept-alive
    connection the server, a proxy or a load balancer had just closed) is sent once more, at once,
    on another connection. Nothing else is retried here (timeouts, refused connections and error
    statuses are the transport's and the reflector's business), and those errors are raised as
    with retries off.

    Without it such a request fails, and a watch that fails to open makes the reflector relist.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("total", 1)
        for kind in ("connect", "status", "other", "redirect"):
            kwargs.setdefault(kind, 0)
        kwargs.setdefault("read", 1)
        kwargs.setdefault("allowed_methods", frozenset({"GET", "HEAD"}))
        kwargs.setdefault("raise_on_redirect", False)
        kwargs.setdefault("raise_on_status", False)
        super().__init__(**kwargs)

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: Any = None,
        error: Exception | None = None,
        _pool: Any = None,
        _stacktrace: TracebackType | None = None,
    ) -> StaleConnectionRetry:
        allowed: Any = self.allowed_methods  # a collection of method names (urllib3 types it loosely)
        retriable = isinstance(error, ProtocolError) and method is not None and method.upper() in allowed
        if error is not None and (not retriable or interrupted_here()):
            # (an interrupted request's connection broke because we shut it down: not stale, and
            # a retry would only take another connection to be refused, with urllib3's warning)
            # exactly what requests' default (retries off) raises: the read error itself, or a
            # connect error wrapped in MaxRetryError (which requests makes a ConnectionError)
            _RETRIES_OFF.increment(method, url, response, error, _pool, _stacktrace)
            raise AssertionError("retries off always raise")  # pragma: no cover
        new: StaleConnectionRetry = super().increment(method, url, response, error, _pool, _stacktrace)
        return new


_RETRIES_OFF = Retry(0, read=False)  # requests' HTTPAdapter(max_retries=0)
