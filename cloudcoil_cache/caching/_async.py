"""AsyncInformer: the asyncio view of a shared informer, its handlers fed by one task per view on the loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
from typing import Any, Callable, TypeVar

from cloudcoil_cache._threads import run_blocking, run_control
from cloudcoil_cache.caching._dispatch import Item, Lane, handler_args
from cloudcoil_cache.caching._informer import Informer
from cloudcoil_cache.caching._views import InformerView

__all__ = ["AsyncInformer", "AsyncLane", "running_loop"]

log = logging.getLogger(__name__)

T = TypeVar("T")

LoopProvider = Callable[[], "asyncio.AbstractEventLoop | None"]

#: How long stopping waits for a view's task to end after cancelling it (the loop may be busy).
JOIN_TIMEOUT = 5.0


class AsyncInformer(InformerView[T]):
    """An async view over the same informer, store and reflector thread as ``SyncInformer``.

    Handlers may be coroutine functions or plain callables; all handlers of the view share one
    ordered lane, drained by one task on the event loop: coroutine handlers are awaited there,
    plain callables run in the library's executor (so they may block). ``list()``/``get()`` are
    synchronous memory reads; ``wait_for_sync()`` is a coroutine.

    The loop is the one running when the view was created or its first handler registered, else
    the loop of the latest ``async with config:`` (``loop_provider``), so a Config re-entered under
    a new ``asyncio.run()`` delivers to the new loop.
    """

    def __init__(
        self, informer: Informer[T], loop_provider: LoopProvider = lambda: None, namespace: str | None = None
    ) -> None:
        super().__init__(informer, namespace)
        self._loop_provider = loop_provider
        self._registered_on = running_loop()

    def _new_lane(self, name: str) -> Lane:
        registered_on = running_loop() or self._registered_on
        return AsyncLane(name, registered_on, self._loop_provider)

    async def wait_for_sync(self, timeout: float | None = None) -> bool:  # type: ignore[override]
        """Wait (off the loop) until synced (True) or ``timeout`` (False)."""
        return await run_control(self._informer.wait_for_sync, timeout)


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, or None (``asyncio.get_running_loop()`` without the error)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class AsyncLane(Lane):
    """A lane drained by one task on an event loop (``call_soon_threadsafe`` wakes it).

    The informer queues from its reflector thread; the task takes events in order and runs each
    handler of the view for it. ``stop()`` drops what is queued and tells the task to end after
    the handler call in progress, as a thread lane does; its ``join`` waits for that call (bounded)
    and cancels the task only past the bound, or when it cannot wait (the loop is closed, or the
    join runs on that loop).
    """

    def __init__(self, name: str, registered_on: asyncio.AbstractEventLoop | None, loop_provider: LoopProvider) -> None:
        super().__init__(name)
        self._registered_on = registered_on
        self._loop_provider = loop_provider
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: concurrent.futures.Future[None] | None = None
        self._wake: asyncio.Event | None = None  # created by the task, on its loop
        self._no_loop_logged = False

    def after_fork(self) -> None:
        """In a fork child: the parent's loops and task are not this process's (an event loop does
        not survive a fork): the child's run finds a loop of its own."""
        super().after_fork()
        self._registered_on = None
        self._loop = None
        self._task = None
        self._wake = None

    def _resolve_loop(self) -> asyncio.AbstractEventLoop | None:
        for loop in (self._registered_on, self._loop_provider()):
            if loop is not None and not loop.is_closed():
                return loop
        return None

    def start(self) -> None:
        with self._lock:
            if self._running:
                return
            self._running = True
            self._generation += 1
            self._task = None
            self._loop = None
        self._ensure_task()

    def _ensure_task(self) -> None:
        """Start this run's task on the loop, if there is a loop to run it on (else at the next push)."""
        with self._lock:
            if not self._running or self._task is not None:
                return
            loop = self._resolve_loop()
            if loop is None:
                return
            self._loop = loop
            generation = self._generation
            try:
                self._task = asyncio.run_coroutine_threadsafe(self._run(generation), loop)
            except RuntimeError:  # closed between the check and the call
                self._loop = None

    def _push(self, items: list[Item]) -> None:
        with self._lock:
            was_empty = not self._queue
            self._queue.extend(items)
            loop, wake = self._loop, self._wake
        if self._task is None:
            self._ensure_task()
            if self._task is None:
                if not self._no_loop_logged:
                    self._no_loop_logged = True
                    log.error(
                        "async handlers of %s: no running event loop to deliver to; register "
                        "them inside a coroutine or enter `async with config:` first",
                        self.name,
                    )
                return
        if was_empty and loop is not None and wake is not None:
            try:
                loop.call_soon_threadsafe(wake.set)
            except RuntimeError:  # the loop closed: nothing will drain this lane any more
                pass

    async def _run(self, generation: int) -> None:
        wake = self._wake = asyncio.Event()
        while (item := await self._next(generation, wake)) is not None:
            for registration, note in self._calls(item, generation):
                try:
                    await _call(registration.handler, handler_args(note))
                except asyncio.CancelledError:
                    raise
                except BaseException:
                    self._failed(registration, note)

    async def _next(self, generation: int, wake: asyncio.Event) -> Item | None:
        """The next queued item, once there is one; None when run ``generation`` is over."""
        while True:
            with self._lock:
                if not self._running or self._generation != generation:
                    return None
                if self._queue:
                    return self._queue.popleft()
                wake.clear()
            await wake.wait()

    def stop(self) -> Callable[[float | None], bool] | None:
        with self._lock:
            self._running = False
            self._generation += 1
            self._queue.clear()
            task, loop, wake = self._task, self._loop, self._wake
            self._task = None
            self._wake = None
        if task is None or loop is None:
            return None
        if wake is not None:  # an idle task wakes up and ends; a busy one ends after its current call
            try:
                loop.call_soon_threadsafe(wake.set)
            except RuntimeError:  # the loop closed: join cancels
                pass

        def join(timeout: float | None = None) -> bool:
            if loop.is_closed() or running_loop() is loop:
                task.cancel()  # nothing can run it any more / we are on that loop: cannot wait
                return True
            wait = JOIN_TIMEOUT if timeout is None else min(timeout, JOIN_TIMEOUT)
            done, _ = concurrent.futures.wait([task], wait)
            if not done:
                task.cancel()  # cancels the task on its loop (thread-safe)
                log.warning(
                    "the handler call in progress on %s did not end within %.1fs; its task is cancelled "
                    "(a coroutine stops at its next await; a plain function runs on in its thread until "
                    "it returns)",
                    self.name,
                    wait,
                )
            return bool(done)

        return join


async def _call(handler: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """A coroutine handler awaited on the loop; any other callable run in the library's executor."""
    if inspect.iscoroutinefunction(handler):
        await handler(*args)
    else:
        result = await run_blocking(handler, *args)
        if inspect.isawaitable(result):  # a callable object returning a coroutine
            await result
