"""WorkQueue: client-go's rate-limited, delaying work queue (dedup, one worker per key), served by priority."""

from __future__ import annotations

import collections
import enum
import heapq
import itertools
import threading
import time
from typing import Hashable, Mapping

import attrs

from cloudcoil_cache._clock import ClockLike, as_clock
from cloudcoil_cache.controller._ratelimit import RateLimiter, default_rate_limiter

__all__ = ["DEFAULT_AGE_AFTER", "Priority", "QueueHooks", "QueueStats", "WorkQueue"]

#: Seconds a key waits at a lower priority before it is served in turn with the top priority (no starvation).
DEFAULT_AGE_AFTER = 60.0


class Priority(enum.IntEnum):
    """How soon a queued key is served: the higher first; keys of one priority first in, first out.

    ``EVENT``: a change seen on the watch, or a key queued by hand (the default). ``REPLAY``: the
    initial list's adds (a start, a restart, a failover) and periodic resyncs. ``CONVERGED``: an
    object of the initial list whose status says it converged for its generation (warm restarts).
    """

    CONVERGED = -200
    REPLAY = -100
    EVENT = 0


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
    #: Keys ready to be taken per priority name (``{"EVENT": 1, "REPLAY": 4999, "CONVERGED": 0}``).
    depth_by_priority: Mapping[str, int] = attrs.field(factory=dict)


class WorkQueue:
    """A thread-safe queue of keys with client-go's semantics, served by priority.

    - ``add(key, priority=Priority.EVENT)``: a key already waiting to be taken is not queued twice
      (it keeps the higher of its priorities: queued again higher, it moves up); a key being
      processed is never handed to a second worker: added meanwhile, it is queued again (at the
      highest priority it was added with) when ``done(key)`` is called.
    - Priorities: ``get`` serves the highest priority first, keys of one priority first in, first
      out. No starvation: once the oldest key of a lower priority has waited ``age_after`` seconds
      (on ``clock``) at it, such aged keys and the top priority's keys are served in turn, one each,
      so a flood of events slows the backlog down by half at most and an event waits one pass more
      at most (controller-runtime's priority queue has no such bound: its issue 3496).
      ``age_after=None``: strict priorities.
    - ``add_after(key, seconds, priority=None)``: the key is added once ``seconds`` have passed on
      ``clock``. There is no timer thread: due keys are moved into the queue by every call, and a
      blocked ``get`` wakes up when the next one is due. With ``cloudcoil_cache.testing.FakeClock``,
      advance it and call any method (``get(timeout=0)``, ``len()``) or ``wake()`` to fire timers -
      no sleeping. A due key joins the queue at its own priority (ahead of lower ones already ready).
    - ``add_rate_limited(key, priority=None)``: ``add_after(key, rate_limiter.when(key))``;
      ``forget(key)`` resets the key's backoff; ``num_requeues(key)`` counts its retries. The
      default limiter is client-go's: per-key exponential backoff 5 ms → 1000 s, and 10 qps / 100
      burst overall. ``priority=None`` in ``add_after``/``add_rate_limited`` keeps the priority the
      key was taken (or is queued) with, else ``EVENT``: a retry does not jump the queue, nor fall
      behind it (controller-runtime's issue 3157).
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
        age_after: float | None = DEFAULT_AGE_AFTER,
    ) -> None:
        if age_after is not None and (isinstance(age_after, bool) or not age_after >= 0):
            raise ValueError(f"age_after must be a number of seconds >= 0 or None, got {age_after!r}")
        self.name = name
        self.age_after = age_after
        self._clock = as_clock(clock)  # read only: the queue's waits are on its condition
        self.rate_limiter: RateLimiter = rate_limiter if rate_limiter is not None else default_rate_limiter(clock=clock)
        self._hooks = hooks or QueueHooks()
        self._cond = threading.Condition(threading.Lock())
        # priority → {key: when it entered that priority}, in the order they entered (FIFO)
        self._buckets: dict[int, collections.OrderedDict[Hashable, float]] = {}
        self._dirty: dict[Hashable, int] = {}  # queued, or to be queued again when done → its priority
        self._processing: dict[Hashable, tuple[float, int]] = {}  # key → (when it was taken, its priority)
        self._added_at: dict[Hashable, float] = {}  # dirty key → when it was first added
        self._timers: list[tuple[float, int, Hashable]] = []  # heap of (ready_at, seq, key)
        self._ready_at: dict[Hashable, float] = {}  # key → its earliest timer
        self._timer_priority: dict[Hashable, int] = {}  # key → the highest priority of its timers
        self._aged_turn = True  # the next pick, when keys have aged, serves an aged one
        self._seq = itertools.count()
        self._shutting_down = False
        self._adds = 0
        self._unreported_adds = 0
        self._retries = 0

    def __repr__(self) -> str:
        return f"<WorkQueue {self.name!r} depth={len(self)}>"

    # ------------------------------------------------------------------ adding
    def add(self, key: Hashable, priority: int = Priority.EVENT) -> None:
        """Queue ``key`` at ``priority`` unless it is already queued (see the class docstring)."""
        _check_key(key)
        priority = _check_priority(priority)
        with self._cond:
            self._fire_due_locked()
            self._add_locked(key, priority)
        self._report_adds()

    def _report_adds(self) -> None:
        """Call the ``added`` hook for adds counted under the lock (timers fire inside any call)."""
        with self._cond:
            count, self._unreported_adds = self._unreported_adds, 0
        for _ in range(count):
            self._hooks.added()

    def _add_locked(self, key: Hashable, priority: int) -> bool:
        if self._shutting_down:
            return False
        self._adds += 1
        self._unreported_adds += 1
        current = self._dirty.get(key)
        if current is not None:
            if priority > current:  # queued again higher: it moves up (behind that priority's keys)
                self._dirty[key] = priority
                if key not in self._processing:
                    self._buckets[current].pop(key, None)
                    self._push_locked(key, priority)
            return True
        self._dirty[key] = priority
        self._added_at[key] = self._clock.now()
        if key not in self._processing:
            self._push_locked(key, priority)
        return True

    def _push_locked(self, key: Hashable, priority: int) -> None:
        bucket = self._buckets.get(priority)
        if bucket is None:
            bucket = self._buckets[priority] = collections.OrderedDict()
        bucket[key] = self._clock.now()
        self._cond.notify()

    def _priority_of_locked(self, key: Hashable) -> int:
        """The priority ``key`` was taken with (being processed), or is queued with, else ``EVENT``."""
        taken = self._processing.get(key)
        if taken is not None:
            return max(taken[1], self._dirty.get(key, taken[1]))
        return self._dirty.get(key, int(Priority.EVENT))

    def add_after(self, key: Hashable, seconds: float, priority: int | None = None) -> None:
        """Add ``key`` after ``seconds`` (at once when ``seconds <= 0``); the earliest time wins, and
        the highest priority (``None``: the key's own, see the class docstring)."""
        _check_key(key)
        if priority is not None:
            priority = _check_priority(priority)
        with self._cond:
            if self._shutting_down:
                return
            resolved = self._priority_of_locked(key) if priority is None else priority
            if seconds <= 0:
                self._fire_due_locked()
                self._add_locked(key, resolved)
            else:
                ready_at = self._clock.now() + seconds
                self._timer_priority[key] = max(resolved, self._timer_priority.get(key, resolved))
                current = self._ready_at.get(key)
                if current is None or ready_at < current:
                    self._ready_at[key] = ready_at
                    heapq.heappush(self._timers, (ready_at, next(self._seq), key))
                self._fire_due_locked()
                self._cond.notify_all()  # a waiting get may need to wake up earlier now
        self._report_adds()

    def add_rate_limited(self, key: Hashable, priority: int | None = None) -> None:
        """Add ``key`` after its rate limiter's delay (one more retry of it), at ``priority``
        (``None``: the key's own)."""
        delay = self.rate_limiter.when(key)
        with self._cond:
            shutting_down = self._shutting_down
            if not shutting_down:
                self._retries += 1
        if not shutting_down:
            self._hooks.retried()
            self.add_after(key, delay, priority)

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
            self._add_locked(key, self._timer_priority.pop(key, int(Priority.EVENT)))
        return None

    def wake(self) -> None:
        """Fire due timers now and wake waiting workers (a fake clock was advanced)."""
        with self._cond:
            self._fire_due_locked()
            self._cond.notify_all()
        self._report_adds()

    # ------------------------------------------------------------------ taking
    def _pick_locked(self) -> Hashable | None:
        """Take the next key off its bucket: the top priority's first, or in turn an aged one."""
        levels = [p for p in sorted(self._buckets, reverse=True) if self._buckets[p]]
        if not levels:
            return None
        chosen = levels[0]
        if len(levels) > 1 and self.age_after is not None:
            now = self._clock.now()
            aged = [p for p in levels[1:] if now - next(iter(self._buckets[p].values())) >= self.age_after]
            if aged:
                if self._aged_turn:
                    chosen = min(aged, key=lambda p: next(iter(self._buckets[p].values())))
                self._aged_turn = not self._aged_turn
            else:
                self._aged_turn = True
        key, _ = self._buckets[chosen].popitem(last=False)
        return key

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
                key = self._pick_locked()
                if key is not None:
                    now = self._clock.now()
                    self._processing[key] = (now, self._dirty.pop(key, int(Priority.EVENT)))
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
            taken = self._processing.pop(key, None)
            if taken is None:
                return
            priority = self._dirty.get(key)
            if priority is not None:
                self._push_locked(key, priority)
            self._cond.notify_all()  # shut_down_with_drain waits for processing to empty
            worked = self._clock.now() - taken[0]
        self._hooks.finished(max(worked, 0.0))

    # ----------------------------------------------------------------- shutdown
    def shut_down(self) -> None:
        """Ignore new keys; workers drain what is queued, then ``get`` returns None. Timers are dropped."""
        with self._cond:
            self._shutting_down = True
            self._timers.clear()
            self._ready_at.clear()
            self._timer_priority.clear()
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
            depth = self._depth_locked()
        self._report_adds()
        return depth

    def _depth_locked(self) -> int:
        return sum(len(bucket) for bucket in self._buckets.values())

    def depth_by_priority(self) -> dict[str, int]:
        """Keys waiting to be taken per priority name (every ``Priority`` named, 0 when none)."""
        with self._cond:
            self._fire_due_locked()
            depths = self._depths_locked()
        self._report_adds()
        return depths

    def _depths_locked(self) -> dict[str, int]:
        depths = {p.name: 0 for p in sorted(Priority, reverse=True)}
        for priority, bucket in sorted(self._buckets.items(), reverse=True):
            if bucket or priority in Priority._value2member_map_:
                name = _priority_name(priority)
                depths[name] = depths.get(name, 0) + len(bucket)
        return depths

    def processing(self) -> list[Hashable]:
        with self._cond:
            return list(self._processing)

    def stats(self) -> QueueStats:
        with self._cond:
            self._fire_due_locked()
            now = self._clock.now()
            running = [max(now - started, 0.0) for started, _ in self._processing.values()]
            stats = QueueStats(
                depth=self._depth_locked(),
                waiting=len(self._ready_at),
                processing=len(self._processing),
                adds=self._adds,
                retries=self._retries,
                unfinished_work_seconds=sum(running),
                longest_running_processor_seconds=max(running, default=0.0),
                depth_by_priority=self._depths_locked(),
            )
        self._report_adds()
        return stats


def _check_key(key: Hashable) -> None:
    if key is None:
        raise ValueError("a work queue key cannot be None")
    hash(key)  # an unhashable key fails here, naming its type


def _check_priority(priority: int) -> int:
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise TypeError(f"a work queue priority must be an int (a Priority), got {type(priority).__name__}")
    return int(priority)


def _priority_name(priority: int) -> str:
    try:
        return Priority(priority).name
    except ValueError:
        return str(priority)
