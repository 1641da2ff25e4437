"""An immutable exponential backoff value with client-go's constants and full jitter."""

from __future__ import annotations

import random
from typing import Callable

import attrs

__all__ = ["Backoff"]


@attrs.frozen
class Backoff:
    """Exponential backoff: ``next()`` returns ``(delay, next_backoff)``; the value itself never changes.

    The defaults are client-go's reflector constants (``NewExponentialBackoffManager(800ms, 30s, 2min,
    2.0, 1.0)``): a failing list/watch waits 0.8 s, 1.6 s, ... up to 30 s, each wait drawn from
    ``[d, 2d)``. Against a server that stays broken that settles at one request every 30-60 s
    (~0.02 QPS per informer instead of the 1 QPS of a fixed one-second retry, a ~98% reduction),
    which is what keeps a fleet of clients from taking a recovering control plane down again.
    After ``reset_after`` seconds without needing a backoff the sequence starts over at ``initial``
    (and the reflector starts it over after a watch that made progress).
    """

    initial: float = 0.8
    cap: float = 30.0
    factor: float = 2.0
    jitter: float = 1.0
    reset_after: float = 120.0
    current: float = 0.0  # 0: the next delay is ``initial``
    last_at: float | None = None  # monotonic time of the last delay handed out

    def next(
        self, now: float, rand: Callable[[], float] = random.random, *, limit: float | None = None
    ) -> tuple[float, Backoff]:
        """``limit``: seconds the jitter may not carry the delay past (the time left before the
        informer turns stale; the cap is itself jittered within its last half); the un-jittered
        step itself is kept. None or <= 0: no limit."""
        base = self.current
        if base <= 0 or (self.last_at is not None and now - self.last_at > self.reset_after):
            base = self.initial
        spread = rand()
        delay = base * (1.0 + self.jitter * spread)
        if limit is not None and limit > 0:
            # jittered too (within the last half of what is left): clients that lost the server at
            # one moment must not all come back at the same instant
            delay = min(delay, max(base, limit * (0.5 + 0.5 * spread)))
        following = min(base * self.factor, self.cap)
        return delay, attrs.evolve(self, current=following, last_at=now)
