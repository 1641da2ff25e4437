"""Which failed responses the transport retries, and how long it waits first (Retry-After)."""

from __future__ import annotations

import email.utils
import time
from typing import Mapping

import attrs

__all__ = ["RetryPolicy", "parse_retry_after"]

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
