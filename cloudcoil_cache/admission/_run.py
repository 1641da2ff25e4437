"""Where handlers run under a deadline: sync ones on a bounded pool of named threads, coroutines on a loop thread."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from typing import Any, Callable

from cloudcoil_cache._clock import Clock
from cloudcoil_cache._deadline import Call, DeadlinePool, PoolBusy, PoolClosed
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


class HandlerRunner:
    """Runs one handler call under a deadline, on the pool or the loop; started and stopped by the webhook."""

    def __init__(self, name: str, max_concurrency: int, clock: Clock, on_abandoned: Callable[[], None]) -> None:
        self._name = name
        self._max_concurrency = max_concurrency
        self._clock = clock
        self._on_abandoned = on_abandoned
        self._pool: DeadlinePool | None = None
        self._loop: LoopThread | None = None

    def start(self) -> None:
        self._pool = DeadlinePool(f"{self._name}-handler", self._max_concurrency)
        self._loop = LoopThread(f"{self._name}-loop")
        self._loop.start()

    def stop(self, timeout: float) -> None:
        deadline = self._clock.now() + timeout
        pool, loop, self._pool, self._loop = self._pool, self._loop, None, None
        if pool is not None:
            pool.close()
        if pool is not None and not pool.join(timeout):
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
        if is_async:
            return self._call_async(Call(), handler, request, timeout, disconnected, context)
        pool = self._pool
        if pool is None:
            raise RuntimeError(f"{self._name} is not started")
        try:
            call = pool.submit(lambda: context.copy().run(handler, request), wait=min(POOL_WAIT, timeout))
        except (PoolBusy, PoolClosed):  # every thread taken, or the webhook stopping: 503
            raise Busy() from None
        if self._wait(call, timeout, disconnected) or not pool.abandon(call):
            call.done.wait()  # ended (just as the wait gave up: set at once)
            return call.outcome()
        self._on_abandoned()
        raise Cancelled() if disconnected.is_set() else Abandoned()

    def _wait(self, call: Call, timeout: float, disconnected: threading.Event) -> bool:
        """True when the call ended within ``timeout`` and before ``disconnected`` was set."""
        deadline = self._clock.now() + timeout
        while not disconnected.is_set():
            remaining = deadline - self._clock.now()
            if remaining <= 0:
                return call.done.is_set()
            if self._clock.wait(call.done, min(remaining, _POLL)):
                return True
        return call.done.is_set()

    def _call_async(
        self,
        call: Call,
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
            return call.outcome()
        future.cancel()
        if not self._clock.wait(call.done, _CANCEL_JOIN):
            log.warning("%s: a cancelled handler %r did not end within %gs", self._name, handler, _CANCEL_JOIN)
        if isinstance(call.error, asyncio.CancelledError) or not call.done.is_set():
            raise Cancelled() if disconnected.is_set() else Abandoned()
        return call.outcome()  # it ended on its own just as it was cancelled
