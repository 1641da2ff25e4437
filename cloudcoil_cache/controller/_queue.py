"""WorkQueue: client-go's rate-limited, delaying work queue (dedup, one worker per key), with metrics hooks."""

from __future__ import annotations

import collections
import heapq
import itertools
import threading
import time
from typing import Hashable

import attrs

from cloudcoil_cache._clock import ClockLike, as_clock
from cloudcoil_cache.controller._ratelimit import RateLimiter, default_rate_limiter

__all__ = ["QueueHooks", "QueueStats", "WorkQueue"]


class QueueHooks:
    """Called by a ``WorkQueue`` as things happen (never under its lock); the metrics subclass it.

    The defaults do nothing. ``queued_seconds`` is the time from ``add`` to ``get``;
    ``work_seconds`` from ``get`` to ``done``.
    """

    def added(self) -> None:
        """A key was added (counted even when it was already queued, as client-go does)."""

    def got(self, queued_seconds: float) -> None:
        """A worker took a key that waited ``queued_seconds``."""

    def finished(self, work_seconds: float) -> None:
        """A worker called ``done`` after ``work_seconds``."""

    def retried(self) -> None:
        """``add_rate_limited`` was called."""


@attrs.frozen
class QueueStats:
    """A snapshot of a queue: what the ``workqueue_*`` gauges report."""

    depth: int
    waiting: int
    processing: int
    adds: int
    retries: int
    unfinished_work_seconds: float
    longest_running_processor_seconds: float


class WorkQueue:
    """A thread-safe queue of keys with client-go's semantics.

    - ``add(key)``: a key already waiting to be taken is not queued twice; a key being processed is
      never handed to a second worker: added meanwhile, it is queued again when ``done(key)`` is called.
    - ``add_after(key, seconds)``: the key is added once ``seconds`` have passed on ``clock``. There is
      no timer thread: due keys are moved into the queue by every call, and a blocked ``get`` wakes
      up when the next one is due. With ``cloudcoil_cache.testing.FakeClock``, advance it and call any
      method (``get(timeout=0)``, ``len()``) or ``wake()`` to fire timers - no sleeping.
    - ``add_rate_limited(key)``: ``add_after(key, rate_limiter.when(key))``; ``forget(key)`` resets
      the key's backoff; ``num_requeues(key)`` counts its retries. The default limiter is
      client-go's: per-key exponential backoff 5 ms → 1000 s, and 10 qps / 100 burst overall.
    - ``shut_down()``: new keys are ignored; workers may still take the keys already queued, and
      ``get`` returns ``None`` once none is left. ``shut_down_with_drain()`` also waits until every
      key being processed is done.

    Nothing user-supplied runs while the lock is held (hooks are called after it is released).
    """

    def __init__(
        self,
        name: str = "",
        *,
        rate_limiter: RateLimiter | None = None,
        clock: ClockLike | None = None,
        hooks: QueueHooks | None = None,
    ) -> None:
        self.name = name
        self._clock = as_clock(clock)  # read only: the queue's waits are on its condition
        self.rate_limiter: RateLimiter = rate_limiter if rate_limiter is not None else default_rate_limiter(clock=clock)
        self._hooks = hooks or QueueHooks()
        self._cond = threading.Condition(threading.Lock())
        self._queue: collections.deque[Hashable] = collections.deque()
        self._dirty: set[Hashable] = set()  # queued, or to be queued again when done
        self._processing: dict[Hashable, float] = {}  # key → when it was taken
        self._added_at: dict[Hashable, float] = {}  # dirty key → when it was first added
        self._timers: list[tuple[float, int, Hashable]] = []  # heap of (ready_at, seq, key)
        self._ready_at: dict[Hashable, float] = {}  # key → its earliest timer
        self._seq = itertools.count()
        self._shutting_down = False
        self._adds = 0
        self._unreported_adds = 0
        self._retries = 0

    def __repr__(self) -> str:
        return f"<WorkQueue {self.name!r} depth={len(self)}>"

    # ------------------------------------------------------------------ adding
    def add(self, key: Hashable) -> None:
        """Queue ``key`` unless it is already queued (see the class docstring)."""
        _check_key(key)
        with self._cond:
            self._fire_due_locked()
            self._add_locked(key)
        self._report_adds()

    def _report_adds(self) -> None:
        """Call the ``added`` hook for adds counted under the lock (timers fire inside any call)."""
        with self._cond:
            count, self._unreported_adds = self._unreported_adds, 0
        for _ in range(count):
            self._hooks.added()

    def _add_locked(self, key: Hashable) -> bool:
        if self._shutting_down:
            return False
        self._adds += 1
        self._unreported_adds += 1
        if key in self._dirty:
            return True
        self._dirty.add(key)
        self._added_at[key] = self._clock.now()
        if key not in self._processing:
            self._queue.append(key)
            self._cond.notify()
        return True

    def add_after(self, key: Hashable, seconds: float) -> None:
        """Add ``key`` after ``seconds`` (at once when ``seconds <= 0``); the earliest time wins."""
        _check_key(key)
        if seconds <= 0:
            self.add(key)
            return
        with self._cond:
            if self._shutting_down:
                return
            ready_at = self._clock.now() + seconds
            current = self._ready_at.get(key)
            if current is not None and current <= ready_at:
                return
            self._ready_at[key] = ready_at
            heapq.heappush(self._timers, (ready_at, next(self._seq), key))
            self._fire_due_locked()
            self._cond.notify_all()  # a waiting get may need to wake up earlier now
        self._report_adds()

    def add_rate_limited(self, key: Hashable) -> None:
        """Add ``key`` after its rate limiter's delay (one more retry of it)."""
        delay = self.rate_limiter.when(key)
        with self._cond:
            shutting_down = self._shutting_down
            if not shutting_down:
                self._retries += 1
        if not shutting_down:
            self._hooks.retried()
            self.add_after(key, delay)

    def forget(self, key: Hashable) -> None:
        """Reset ``key``'s backoff (it succeeded or was given up); a pending timer still fires."""
        self.rate_limiter.forget(key)

    def num_requeues(self, key: Hashable) -> int:
        return self.rate_limiter.num_requeues(key)

    def _fire_due_locked(self) -> float | None:
        """Queue every key whose timer is due; return when the next one is due (or None)."""
        now = self._clock.now()
        while self._timers:
            ready_at, _, key = self._timers[0]
            if self._ready_at.get(key) != ready_at:  # superseded by an earlier timer
                heapq.heappop(self._timers)
                continue
            if ready_at > now:
                return ready_at
            heapq.heappop(self._timers)
            del self._ready_at[key]
            self._add_locked(key)
        return None

    def wake(self) -> None:
        """Fire due timers now and wake waiting workers (a fake clock was advanced)."""
        with self._cond:
            self._fire_due_locked()
            self._cond.notify_all()
        self._report_adds()

    # ------------------------------------------------------------------ taking
    def get(self, timeout: float | None = None) -> Hashable | None:
        """The next key, marked as being processed (call ``done(key)`` when finished).

        Blocks up to ``timeout`` seconds (forever when None). Returns ``None`` on timeout, and
        when the queue is shut down and empty.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        key: Hashable | None = None
        queued = 0.0
        with self._cond:
            while True:
                next_due = self._fire_due_locked()
                if self._queue:
                    key = self._queue.popleft()
                    now = self._clock.now()
                    self._processing[key] = now
                    self._dirty.discard(key)
                    queued = now - self._added_at.pop(key, now)
                    break
                if self._shutting_down:
                    break
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is not None and wait <= 0:
                    break
                if next_due is not None:
                    until_due = max(next_due - self._clock.now(), 0.0)
                    wait = until_due if wait is None else min(wait, until_due)
                # a timer due in years must not overflow the wait (it is checked again on waking)
                self._cond.wait(None if wait is None else min(wait, threading.TIMEOUT_MAX))
        self._report_adds()
        if key is not None:
            self._hooks.got(max(queued, 0.0))
        return key

    def done(self, key: Hashable) -> None:
        """Finished processing ``key``; it is queued again if it was added meanwhile."""
        with self._cond:
            started = self._processing.pop(key, None)
            if started is None:
                return
            if key in self._dirty:
                self._queue.append(key)
                self._cond.notify()
            self._cond.notify_all()  # shut_down_with_drain waits for processing to empty
            worked = self._clock.now() - started
        self._hooks.finished(max(worked, 0.0))

    # ----------------------------------------------------------------- shutdown
    def shut_down(self) -> None:
        """Ignore new keys; workers drain what is queued, then ``get`` returns None. Timers are dropped."""
        with self._cond:
            self._shutting_down = True
            self._timers.clear()
            self._ready_at.clear()
            self._cond.notify_all()

    def shut_down_with_drain(self, timeout: float | None = None) -> bool:
        """``shut_down()``, then wait until every key being processed is done (False on timeout)."""
        self.shut_down()
        with self._cond:
            return self._cond.wait_for(lambda: not self._processing, timeout)

    @property
    def shutting_down(self) -> bool:
        with self._cond:
            return self._shutting_down

    # -------------------------------------------------------------- measuring
    def __len__(self) -> int:
        """Keys waiting to be taken (timers that are not due yet excluded)."""
        with self._cond:
            self._fire_due_locked()
            depth = len(self._queue)
        self._report_adds()
        return depth

    def processing(self) -> list[Hashable]:
        with self._cond:
            return list(self._processing)

    def stats(self) -> QueueStats:
        with self._cond:
            self._fire_due_locked()
            now = self._clock.now()
            running = [max(now - started, 0.0) for started in self._processing.values()]
            stats = QueueStats(
                depth=len(self._queue),
                waiting=len(self._ready_at),
                processing=len(self._processing),
                adds=self._adds,
                retries=self._retries,
                unfinished_work_seconds=sum(running),
                longest_running_processor_seconds=max(running, default=0.0),
            )
        self._report_adds()
        return stats


def _check_key(key: Hashable) -> None:
    if key is None:
        raise ValueError("a work queue key cannot be None")
    hash(key)  # an unhashable key fails here, naming its type
