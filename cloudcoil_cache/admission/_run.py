"""Where handlers run under a deadline: sync ones on a bounded pool of named threads, coroutines on a loop thread."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import queue
import threading
from typing import Any, Callable

from cloudcoil_cache._clock import Clock
from cloudcoil_cache.aio._loop import LoopThread

__all__ = ["Abandoned", "Busy", "Cancelled", "HandlerRunner"]

log = logging.getLogger(__name__)

#: How long a request waits for a free handler thread before it is answered 503.
POOL_WAIT = 1.0
#: How often a wait for a handler looks at the client's ``disconnected`` Event.
_POLL = 0.05
#: How long a cancelled coroutine handler gets to unwind before the request is answered.
_CANCEL_JOIN = 1.0


class Busy(Exception):
    """Every handler thread is taken (answered 503)."""


class Abandoned(Exception):
    """The deadline passed (answered 504): a coroutine was cancelled, a thread left to finish."""


class Cancelled(Exception):
    """The client went away: the handler was cancelled (coroutine) or left to finish (thread)."""


class _Call:
    """One handler call: its result or exception, and an Event set when it ended."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self, func: Callable[[], Any], before_done: Callable[[], None]) -> None:
        try:
            self.result = func()
        except BaseException as exc:  # handed to the request's thread
            self.error = exc
        finally:
            before_done()
            self.done.set()


class _Pool:
    """At most ``size`` named threads, started on demand, taking calls from one queue."""

    def __init__(self, name: str, size: int) -> None:
        self._name = name
        self._size = size
        self._slots = threading.BoundedSemaphore(size)
        self._queue: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._busy = 0  # calls submitted and not ended

    def submit(self, call: _Call, func: Callable[[], Any], wait: float) -> None:
        """Run ``func`` on a pool thread; ``Busy`` when no thread frees up within ``wait`` seconds."""
        if not self._slots.acquire(timeout=wait):
            raise Busy()
        with self._lock:
            self._busy += 1
            if self._busy > len(self._threads):  # every thread has a call: one more (at most size)
                thread = threading.Thread(target=self._worker, name=f"{self._name}-{len(self._threads)}", daemon=True)
                self._threads.append(thread)
                thread.start()
        self._queue.put(lambda: call.run(func, self._finished))

    def _finished(self) -> None:
        """A call ended (before its caller is woken: the next call reuses this thread)."""
        with self._lock:
            self._busy -= 1
        self._slots.release()

    def _worker(self) -> None:
        while True:
            work = self._queue.get()
            if work is None:
                return
            work()

    def stop(self, timeout: float, clock: Clock) -> bool:
        """Tell every thread to end once its call returns, and join them; False if one is still running."""
        with self._lock:
            threads, self._threads = self._threads, []
        for _ in threads:
            self._queue.put(None)
        deadline = clock.now() + timeout
        for thread in threads:
            thread.join(max(deadline - clock.now(), 0.0))
        return not any(t.is_alive() for t in threads)


class HandlerRunner:
    """Runs one handler call under a deadline, on the pool or the loop; started and stopped by the webhook."""

    def __init__(self, name: str, max_concurrency: int, clock: Clock, on_abandoned: Callable[[], None]) -> None:
        self._name = name
        self._max_concurrency = max_concurrency
        self._clock = clock
        self._on_abandoned = on_abandoned
        self._pool: _Pool | None = None
        self._loop: LoopThread | None = None

    def start(self) -> None:
        self._pool = _Pool(f"{self._name}-handler", self._max_concurrency)
        self._loop = LoopThread(f"{self._name}-loop")
        self._loop.start()

    def stop(self, timeout: float) -> None:
        deadline = self._clock.now() + timeout
        pool, loop, self._pool, self._loop = self._pool, self._loop, None, None
        if pool is not None and not pool.stop(timeout, self._clock):
            log.warning("%s: handler threads still running after %gs", self._name, timeout)
        if loop is not None and not loop.stop(max(deadline - self._clock.now(), 0.0)):
            log.warning("%s: the handler event loop did not stop within %gs", self._name, timeout)

    @property
    def started(self) -> bool:
        return self._pool is not None

    def call(
        self,
        handler: Callable[[Any], Any],
        request: Any,
        *,
        is_async: bool,
        timeout: float,
        disconnected: threading.Event,
        context: contextvars.Context,
    ) -> Any:
        """``handler(request)``'s result (its exception is raised here); ``Abandoned`` past ``timeout``,
        ``Cancelled`` when ``disconnected`` is set first, ``Busy`` when no thread is free."""
        call = _Call()
        if is_async:
            return self._call_async(call, handler, request, timeout, disconnected, context)
        pool = self._pool
        if pool is None:
            raise RuntimeError(f"{self._name} is not started")
        pool.submit(call, lambda: context.copy().run(handler, request), min(POOL_WAIT, timeout))
        if self._wait(call, timeout, disconnected):
            return self._outcome(call)
        self._on_abandoned()
        raise Cancelled() if disconnected.is_set() else Abandoned()

    def _wait(self, call: _Call, timeout: float, disconnected: threading.Event) -> bool:
        """True when the call ended within ``timeout`` and before ``disconnected`` was set."""
        deadline = self._clock.now() + timeout
        while not disconnected.is_set():
            remaining = deadline - self._clock.now()
            if remaining <= 0:
                return call.done.is_set()
            if self._clock.wait(call.done, min(remaining, _POLL)):
                return True
        return call.done.is_set()

    @staticmethod
    def _outcome(call: _Call) -> Any:
        if call.error is not None:
            raise call.error
        return call.result

    def _call_async(
        self,
        call: _Call,
        handler: Callable[[Any], Any],
        request: Any,
        timeout: float,
        disconnected: threading.Event,
        context: contextvars.Context,
    ) -> Any:
        loop = self._loop
        if loop is None:
            raise RuntimeError(f"{self._name} is not started")

        async def run() -> None:
            try:
                call.result = await handler(request)
            except BaseException as exc:  # CancelledError included: the request's thread reads it
                call.error = exc
            finally:
                call.done.set()

        future = context.copy().run(loop.submit, run())
        if self._wait(call, timeout, disconnected):
            return self._outcome(call)
        future.cancel()
        if not self._clock.wait(call.done, _CANCEL_JOIN):
            log.warning("%s: a cancelled handler %r did not end within %gs", self._name, handler, _CANCEL_JOIN)
        if isinstance(call.error, asyncio.CancelledError) or not call.done.is_set():
            raise Cancelled() if disconnected.is_set() else Abandoned()
        return self._outcome(call)  # it ended on its own just as it was cancelled
