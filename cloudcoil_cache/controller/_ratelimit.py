"""Rate limiters for work-queue retries: per-item exponential backoff and an overall token bucket."""

from __future__ import annotations

import threading
from typing import Hashable, Protocol

from cloudcoil_cache._clock import ClockLike, as_clock

__all__ = ["BucketRateLimiter", "ItemExponentialRateLimiter", "MaxOfRateLimiter", "RateLimiter", "default_rate_limiter"]


class RateLimiter(Protocol):
    """How long a key waits before its next retry (client-go's ``workqueue.TypedRateLimiter``)."""

    def when(self, key: Hashable) -> float:
        """The delay (seconds) before ``key`` is retried; counts one more retry of it."""

    def forget(self, key: Hashable) -> None:
        """Stop tracking ``key`` (it succeeded, or was given up)."""

    def num_requeues(self, key: Hashable) -> int:
        """How many times ``key`` was retried since it was last forgotten."""


class ItemExponentialRateLimiter:
    """``base * 2**failures`` per key, capped at ``cap`` (client-go: 5 ms to 1000 s)."""

    def __init__(self, base: float = 0.005, cap: float = 1000.0) -> None:
        if not base > 0 or not cap >= base:
            raise ValueError(f"backoff needs 0 < base <= cap, got base={base!r}, cap={cap!r}")
        self.base = float(base)
        self.cap = float(cap)
        self._lock = threading.Lock()
        self._failures: dict[Hashable, int] = {}

    def when(self, key: Hashable) -> float:
        with self._lock:
            failures = self._failures.get(key, 0)
            self._failures[key] = failures + 1
        if failures >= 64:  # 2**64 * base is past any cap; avoid huge floats
            return self.cap
        return min(self.base * float(2**failures), self.cap)

    def forget(self, key: Hashable) -> None:
        with self._lock:
            self._failures.pop(key, None)

    def num_requeues(self, key: Hashable) -> int:
        with self._lock:
            return self._failures.get(key, 0)


class BucketRateLimiter:
    """An overall token bucket (``qps`` tokens a second, at most ``burst`` saved): client-go's 10/100.

    Reservations may drive the bucket below zero; the delay is the time until the reservation's
    token exists (``rate.Limiter.Reserve().Delay()``).
    """

    def __init__(self, qps: float = 10.0, burst: int = 100, *, clock: ClockLike | None = None) -> None:
        if not qps > 0 or burst < 1:
            raise ValueError(f"token bucket needs qps > 0 and burst >= 1, got qps={qps!r}, burst={burst!r}")
        self.qps = float(qps)
        self.burst = int(burst)
        self._clock = as_clock(clock)
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = self._clock.now()

    def when(self, key: Hashable) -> float:
        with self._lock:
            now = self._clock.now()
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def forget(self, key: Hashable) -> None:
        pass

    def num_requeues(self, key: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest delay of several limiters; ``num_requeues`` is the largest count among them."""

    def __init__(self, *limiters: RateLimiter) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self.limiters = limiters

    def when(self, key: Hashable) -> float:
        return max(limiter.when(key) for limiter in self.limiters)

    def forget(self, key: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(key)

    def num_requeues(self, key: Hashable) -> int:
        return max(limiter.num_requeues(key) for limiter in self.limiters)


def default_rate_limiter(
    *, base: float = 0.005, cap: float = 1000.0, qps: float = 10.0, burst: int = 100, clock: ClockLike | None = None
) -> MaxOfRateLimiter:
    """client-go's ``DefaultControllerRateLimiter``: per-item 5 ms → 1000 s, overall 10 qps / 100 burst."""
    return MaxOfRateLimiter(ItemExponentialRateLimiter(base, cap), BucketRateLimiter(qps, burst, clock=clock))
