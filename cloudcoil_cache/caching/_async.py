"""AsyncInformer: the asyncio view of a shared informer (coroutine handlers run on the event loop)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
from typing import Any, Callable, TypeVar

from cloudcoil_cache._threads import run_blocking
from cloudcoil_cache.caching._dispatch import Listener
from cloudcoil_cache.caching._informer import Informer
from cloudcoil_cache.caching._store import Notification
from cloudcoil_cache.caching._views import InformerView, handler_args, sync_invoke

__all__ = ["AsyncInformer"]

log = logging.getLogger(__name__)

T = TypeVar("T")

# How often a handler thread waiting for a coroutine checks whether it is being stopped.
_POLL = 0.1


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
        listener_box: list[Listener] = []

        def invoke(note: Notification) -> None:
            loop = registered_on
            if loop is None or loop.is_closed():
                loop = self._loop_provider()
            if loop is None or loop.is_closed():
                raise RuntimeError("no running event loop for an async handler: register it inside "
                                   "a coroutine or enter `async with config:` first")
            future = asyncio.run_coroutine_threadsafe(handler(*handler_args(note)), loop)
            while True:
                try:
                    future.result(_POLL)
                    return
                except concurrent.futures.TimeoutError:
                    if listener_box and not listener_box[0].running:
                        future.cancel()  # exit never waits for a stuck coroutine's backlog
                        return

        invoke.listener_box = listener_box  # type: ignore[attr-defined]
        return invoke

    def _register(self, event: str, func: Callable[..., Any] | None) -> Any:
        handle = super()._register(event, func)
        if func is not None:
            box = getattr(handle._listener._invoke, "listener_box", None)
            if box is not None:
                box.append(handle._listener)
        return handle

    async def wait_for_sync(self, timeout: float | None = None) -> bool:  # type: ignore[override]
        """Wait (off the loop) until synced (True) or ``timeout`` (False)."""
        return await run_blocking(self._informer.wait_for_sync, timeout)
