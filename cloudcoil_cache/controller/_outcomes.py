"""What a reconcile function returns or raises: Result, Wait, TerminalError."""

from __future__ import annotations

import math

import attrs

from cloudcoil_cache.errors import CloudcoilError

__all__ = ["Result", "TerminalError", "Wait"]


@attrs.frozen
class Result:
    """A successful reconcile that wants to run again.

    ``requeue_after``: seconds until the key is reconciled again (the backoff is reset).
    ``requeue=True`` without ``requeue_after``: requeue with the key's rate-limited backoff.
    """

    requeue_after: float | None = None
    requeue: bool = False

    def __attrs_post_init__(self) -> None:
        if self.requeue_after is not None and not _seconds(self.requeue_after):
            raise ValueError(
                f"Result(requeue_after=...) must be a finite number of seconds >= 0, got {self.requeue_after!r}"
            )


class Wait(CloudcoilError):
    """Not ready yet (a dependency is missing): raise or return it to reconcile again after ``after`` seconds.

    It is not a failure: the key's backoff is reset and the error counters are not incremented.
    """

    def __init__(self, reason: str = "waiting", after: float = 5.0) -> None:
        if not _seconds(after):
            raise ValueError(f"Wait(after=...) must be a finite number of seconds >= 0, got {after!r}")
        super().__init__(reason)
        self.reason = reason
        self.after = float(after)

    def __repr__(self) -> str:
        return f"Wait({self.reason!r}, after={self.after:g})"


class TerminalError(CloudcoilError):
    """A failure that retrying cannot fix: it is logged, the key's backoff is reset, and it is not retried
    (until the object changes again)."""


def _seconds(value: object) -> bool:
    """A finite, non-negative number of seconds (a bool is not one)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value) and value >= 0
