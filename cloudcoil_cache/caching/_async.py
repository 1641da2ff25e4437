"""AsyncInformer: the asyncio view of a shared informer (coroutine handlers run on the event loop)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import threading
from typing import Any, Callable, TypeVar

from cloudcoil_cache._threads import run_control
from cloudcoil_cache.caching._dispatch import Listener
from cloudcoil_cache.caching._informer import Informer
from cloudcoil_cache.caching._store import Notification
from cloudcoil_cache.caching._views import InformerView, handler_args, sync_invoke

__all__ = ["AsyncInformer"]

log = logging.getLogger(__name__)

T = TypeVar("T")


class AsyncInformer(InformerView[T]):
    """An async view over the same informer, store and threads as ``SyncInformer``.

    Handlers may be coroutine functions or plain callables. Every handler keeps its own thread
    and queue (so ordering and isolation are those of sync handlers): a coroutine handler is
    handed to the event loop with ``run_coroutine_threadsafe`` (``call_soon_threadsafe``
    underneath) and its thread waits for it before taking the next event; a plain callable runs on
    that thread, its private executor. ``list()``/``get()`` are synchronous memory reads;
    ``wait_for_sync()`` is a coroutine.

    The loop is the one running when the handler is registered, else the loop of the latest
    ``async with config:`` (``loop_provider``), so a Config re-entered under a new
    ``asyncio.run()`` delivers to the new loop.
    """

    def __init__(self, informer: Informer[T], loop_provider: Callable[[], asyncio.AbstractEventLoop | None]
                 = lambda: None) -> None:
        super().__init__(informer)
        self._loop_provider = loop_provider

    def _invoke_for(self, handler: Callable[..., Any]) -> Callable[[Notification], None]:
        if not inspect.iscoroutinefunction(handler):
            return sync_invoke(handler)
        try:
            registered_on: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            registered_on = None
        return _CoroutineInvoker(handler, registered_on, self._loop_provider)

    def _register(self, event: str, func: Callable[..., Any] | None) -> Any:
        handle = super()._register(event, func)
        invoke = handle._listener._invoke if func is not None else None
        if isinstance(invoke, _CoroutineInvoker):
            invoke.attach(handle._listener)
        return handle

    async def wait_for_sync(self, timeout: float | None = None) -> bool:  # type: ignore[override]
        """Wait (off the loop) until synced (True) or ``timeout`` (False)."""
        return await run_control(self._informer.wait_for_sync, timeout)


class _CoroutineInvoker:
    """Runs a coroutine handler on its loop and waits for it on the handler's own thread.

    ``cancel()`` (the listener's stop hook) cancels the coroutine in progress, so stopping never
    waits on a loop that may be gone; events still queued are dropped by the listener itself.
    """

    def __init__(self, handler: Callable[..., Any], registered_on: asyncio.AbstractEventLoop | None,
                 loop_provider: Callable[[], asyncio.AbstractEventLoop | None]) -> None:
        self._handler = handler
        self._registered_on = registered_on
        self._loop_provider = loop_provider
        self._lock = threading.Lock()
        self._pending: concurrent.futures.Future[Any] | None = None
        self._listener: Listener | None = None

    def attach(self, listener: Listener) -> None:
        self._listener = listener
        listener.add_stop_hook(self.cancel)

    def _loop(self) -> asyncio.AbstractEventLoop:
        loop = self._registered_on
        if loop is None or loop.is_closed():
            loop = self._loop_provider()
        if loop is None or loop.is_closed():
            raise RuntimeError("no running event loop for an async handler: register it inside "
                               "a coroutine or enter `async with config:` first")
        return loop

    def __call__(self, note: Notification) -> None:
        loop = self._loop()  # first: a closed loop must not leave a never-awaited coroutine behind
        future = asyncio.run_coroutine_threadsafe(self._handler(*handler_args(note)), loop)
        with self._lock:
            self._pending = future
        # stop() clears `running` before it calls cancel(): one of the two always sees the other
        if self._listener is not None and not self._listener.running:
            future.cancel()
        try:
            future.result()
        except concurrent.futures.CancelledError:
            pass  # stopped while it ran
        finally:
            with self._lock:
                self._pending = None

    def cancel(self) -> None:
        with self._lock:
            pending = self._pending
        if pending is not None:
            pending.cancel()
