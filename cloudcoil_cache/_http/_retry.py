"""Which failed responses the transport retries, and how long it waits first (Retry-After)."""

from __future__ import annotations

import email.utils
import time
from types import TracebackType
from typing import Any, Mapping

import attrs
from urllib3.exceptions import ProtocolError
from urllib3.util.retry import Retry

__all__ = ["RetryPolicy", "StaleConnectionRetry", "parse_retry_after"]

# Statuses retried even without Retry-After: the server rejected the request before doing
# anything (API Priority & Fairness, or an apiserver that is starting or shutting down).
_ALWAYS_RETRIED = frozenset({429, 503})


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

    Like client-go's ``checkWait``: 429 and 503 are always retried, any other 5xx only when the
    server sent ``Retry-After``. The server's wait is honoured but capped at ``max_wait``;
    without one the wait is ``base_wait`` doubling per attempt, also capped at ``max_wait``.
    """

    max_retries: int = 5
    max_wait: float = 60.0
    base_wait: float = 1.0

    def delay(self, status_code: int, retry_after: float | None, attempt: int) -> float | None:
        """Seconds to wait before retry number ``attempt + 1``, or ``None`` to give up now."""
        if attempt >= self.max_retries:
            return None
        if status_code in _ALWAYS_RETRIED or (status_code >= 500 and retry_after is not None):
            if retry_after is not None:
                return min(retry_after, self.max_wait)
            return min(self.base_wait * (2.0 ** attempt), self.max_wait)
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

    def increment(self, method: str | None = None, url: str | None = None, response: Any = None,
                  error: Exception | None = None, _pool: Any = None,
                  _stacktrace: TracebackType | None = None) -> StaleConnectionRetry:
        retriable = (isinstance(error, ProtocolError) and method is not None
                     and method.upper() in self.allowed_methods)  # type: ignore[operator]
        if error is not None and not retriable:
            # exactly what requests' default (retries off) raises: the read error itself, or a
            # connect error wrapped in MaxRetryError (which requests makes a ConnectionError)
            _RETRIES_OFF.increment(method, url, response, error, _pool, _stacktrace)
            raise AssertionError("retries off always raise")  # pragma: no cover
        new: StaleConnectionRetry = super().increment(method, url, response, error, _pool, _stacktrace)
        return new


_RETRIES_OFF = Retry(0, read=False)  # requests' HTTPAdapter(max_retries=0)
