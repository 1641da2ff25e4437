"""Calls on a bounded pool of named threads, waited for up to a deadline and abandoned past it.

A plain function cannot be interrupted: a caller that stops waiting for it *abandons* the call, which
runs on to its end on its thread (still holding its slot, counted). The controller's
``reconcile_timeout`` and the admission webhooks' handler deadline both run on it.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from typing import Any, Callable

from cloudcoil_cache._runnable import RunnableThread, deadline_after, remaining

__all__ = ["Call", "DeadlinePool", "PoolBusy", "PoolClosed"]

log = logging.getLogger(__name__)


class PoolBusy(Exception):
    """No slot of the pool freed up within the wait."""


class PoolClosed(Exception):
    """The pool was closed: it starts nothing more."""


class Call:
    """One call: its result or exception, ``done`` set when it ended, and whether it was abandoned."""

    def __init__(self, func: Callable[[], Any] | None = None, tag: Any = None) -> None:
        self.func = func
        self.tag = tag  # what the caller needs to know the call by (a controller's key)
        self.started = time.monotonic()
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self.abandoned = False
        self._finished = False  # guarded by _lock: set when func returned (before done is set)
        self._lock = threading.Lock()

    def outcome(self) -> Any:
        """The result, or the exception the call raised (raised here)."""
        if self.error is not None:
            raise self.error
        return self.result


class DeadlinePool:
    """At most ``size`` calls running at once, on threads ``<name>-<n>`` started on demand and reused.

    ``max_abandoned``: a ``submit`` waits while that many abandoned calls are still running (so
    threads finishing abandoned work stay bounded separately from the live ones).
    ``on_abandoned_end(call)`` runs on the call's thread when an abandoned call ends (before its slot
    is freed). ``close()`` ends idle threads and refuses new calls; ``join()`` waits for every thread.
    """

    def __init__(
        self,
        name: str,
        size: int,
        *,
        max_abandoned: int | None = None,
        on_abandoned_end: Callable[[Call], None] | None = None,
    ) -> None:
        if size < 1:
            raise ValueError(f"a pool needs at least one thread, got size={size!r}")
        self.name = name
        self.size = size
        self.max_abandoned = max_abandoned
        self._on_abandoned_end = on_abandoned_end
        self._cond = threading.Condition(threading.Lock())  # guards everything below
        self._work: list[Call] = []  # submitted, not yet taken by a thread
        self._threads: list[threading.Thread] = []
        self._busy = 0  # calls submitted and not ended
        self._abandoned = 0  # of those, abandoned
        self._closed = False
        self._numbers = itertools.count()

    def _free_locked(self) -> bool:
        if self._busy >= self.size:
            return False
        return self.max_abandoned is None or self._abandoned < self.max_abandoned

    def submit(
        self,
        func: Callable[[], Any],
        *,
        wait: float | None = None,
        tag: Any = None,
        stopping: threading.Event | None = None,
    ) -> Call:
        """Run ``func()`` on a pool thread; waits up to ``wait`` seconds (None: until a slot frees, the
        pool is closed, or ``stopping`` is set and the pool notified) for a slot.

        Raises:
            PoolBusy: no slot freed up within ``wait``.
            PoolClosed: the pool was closed (or ``stopping`` set) before the call could start.
        """
        call = Call(func, tag)
        with self._cond:

            def ready() -> bool:
                return self._closed or (stopping is not None and stopping.is_set()) or self._free_locked()

            if not self._cond.wait_for(ready, wait):
                raise PoolBusy(f"{self.name}: all {self.size} threads are busy")
            if self._closed or (stopping is not None and stopping.is_set()):
                raise PoolClosed(f"{self.name}: closed")
            call.started = time.monotonic()  # not the wait for a slot
            self._busy += 1
            self._work.append(call)
            self._cond.notify_all()
            # a thread per call in flight at most: with as many threads as calls, one is free for this one
            if len(self._threads) < self._busy:
                thread = RunnableThread(f"{self.name}-{next(self._numbers)}", self._loop, owner=self.name)
                self._threads.append(thread)
                thread.start()
        return call

    def abandon(self, call: Call) -> bool:
        """Stop waiting for ``call``: True if it is still running (it is now counted as abandoned),
        False if it had ended (its ``done`` is set at once: read its outcome)."""
        with call._lock:
            if call._finished:
                return False
            call.abandoned = True
            with self._cond:
                self._abandoned += 1
        return True

    def _loop(self) -> None:
        me = threading.current_thread()
        try:
            while True:
                with self._cond:
                    while not self._work:
                        if self._closed:
                            return
                        self._cond.wait()
                    call = self._work.pop(0)
                self._run(call)
        finally:
            with self._cond:
                if me in self._threads:
                    self._threads.remove(me)
                self._cond.notify_all()

    def _run(self, call: Call) -> None:
        assert call.func is not None
        try:
            call.result = call.func()
        except BaseException as exc:  # handed to the caller, or (abandoned) ended with the call
            call.error = exc
        finally:
            call.func = None  # drop what the call referenced (the request, the object)
            with call._lock:
                call._finished = True
                abandoned = call.abandoned
            if abandoned:  # counted out before the callback, which may let the call's work go on
                with self._cond:
                    self._abandoned -= 1
                    self._cond.notify_all()
            try:
                if abandoned and self._on_abandoned_end is not None:
                    self._on_abandoned_end(call)
            except Exception:
                log.exception("%s: the end of an abandoned call could not be handled", self.name)
            finally:  # the slot is freed whatever the callback did
                with self._cond:
                    self._busy -= 1
                    self._cond.notify_all()
                call.done.set()

    def start(self) -> None:
        """Nothing to start: threads start with the calls (a runnable, as the library's pools are)."""

    def stop(self) -> None:
        """``close()``: the runnable's name."""
        self.close()

    def ready(self) -> bool:
        """Taking calls (not closed)."""
        with self._cond:
            return not self._closed

    def close(self) -> None:
        """Refuse new calls, wake waiting submitters, and end idle threads (busy ones end after their call)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` for every thread to end (after ``close()``); False if one still runs."""
        deadline = deadline_after(timeout)
        for thread in self.threads():
            thread.join(remaining(deadline))
        return not any(t.is_alive() for t in self.threads())

    def threads(self) -> list[threading.Thread]:
        """The pool's threads now (idle, busy, or finishing an abandoned call)."""
        with self._cond:
            return list(self._threads)

    @property
    def abandoned(self) -> int:
        """Abandoned calls still running."""
        with self._cond:
            return self._abandoned
