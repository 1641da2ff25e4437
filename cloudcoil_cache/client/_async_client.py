"""AsyncResourceClient: async twin of ResourceClient; memory reads inline, blocking work off-loop"""

from __future__ import annotations

import asyncio
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, AsyncIterator, Generic, TypeVar

from cloudcoil_cache._http._interrupt import Interrupter, interruptible
from cloudcoil_cache._threads import run_blocking
from cloudcoil_cache._listwatch import ListOptions
from cloudcoil_cache.client._lists import ObjectList
from cloudcoil_cache.client._reads import async_cached_get, async_cached_list
from cloudcoil_cache.client._resource_client import LiveWatch, ResourceClient

__all__ = ["AsyncResourceClient"]

T = TypeVar("T")
_END = object()


def _close_opened(future: Future[Any]) -> None:
    if not future.cancelled() and future.exception() is None:
        future.result().close()


class AsyncResourceClient(Generic[T]):
    """Async operations on one resource class through one Config.

    Cached reads that the cache can serve are answered from memory on the event loop (no thread
    hop); everything that may block — HTTP, waiting for a lazily started informer — runs on the
    library's executor through ``run_blocking``.
    """

    def __init__(self, client: ResourceClient[T]) -> None:
        self.sync = client

    async def ready(self) -> AsyncResourceClient[T]:
        """Run the config's discovery off the loop (once), so later reads never block on it."""
        await self.sync.config.async_initialize()
        return self

    @property
    def cls(self) -> Any:
        return self.sync.cls

    def __repr__(self) -> str:
        return f"<AsyncResourceClient {self.cls.kind} cached={self.sync.cached}>"

    async def get(self, name: str, namespace: str | None = None) -> T:
        if self.sync.cached:
            return await async_cached_get(self.sync, name, namespace)  # type: ignore[no-any-return]
        return await run_blocking(self.sync.live_get, name, namespace)

    async def list(self, namespace: str | None = None, all_namespaces: bool = False,
                   label_selector: str | None = None, field_selector: str | None = None,
                   limit: int | None = None, continue_: str | None = None) -> ObjectList[T]:
        return await self.list_with(ListOptions(namespace, all_namespaces, label_selector, field_selector,
                                                limit, continue_))

    async def list_with(self, opts: ListOptions) -> ObjectList[T]:
        """``list()`` with its options as one ``ListOptions`` value."""
        if self.sync.cached:
            return await async_cached_list(self.sync, opts)
        return await run_blocking(self.sync.live_list_with, opts)

    async def create(self, obj: Any, **kwargs: Any) -> T:
        return await run_blocking(lambda: self.sync.create(obj, **kwargs))

    async def update(self, obj: Any, **kwargs: Any) -> T:
        return await run_blocking(lambda: self.sync.update(obj, **kwargs))

    async def update_status(self, obj: Any, **kwargs: Any) -> T:
        return await run_blocking(lambda: self.sync.update_status(obj, **kwargs))

    async def patch(self, name: str, patch: Any, **kwargs: Any) -> T:
        return await run_blocking(lambda: self.sync.patch(name, patch, **kwargs))

    async def apply(self, obj: Any, **kwargs: Any) -> T:
        return await run_blocking(lambda: self.sync.apply(obj, **kwargs))

    async def delete(self, name: str, namespace: str | None = None, **kwargs: Any) -> Any:
        return await run_blocking(lambda: self.sync.delete(name, namespace, **kwargs))

    async def scale(self, name: str, replicas: int, namespace: str | None = None) -> Any:
        return await run_blocking(self.sync.scale, name, replicas, namespace)

    async def watch(self, **kwargs: Any) -> AsyncIterator[tuple[str, T]]:
        """Async generator of ``(type, object)`` (arguments as ``ResourceClient.watch``).

        The watch reads on a thread of its own, never on the shared executors: a long watch
        must not hold a worker that scopes and reads need. Cancelling the consuming task aborts an
        open still in progress or closes the stream, which ends the pending read at once; the
        thread then ends by itself (the event loop never waits for it).
        """
        loop = asyncio.get_running_loop()
        reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cloudcoil-watch")
        opening = Interrupter()  # aborts the open (connect, TLS handshake, wait for headers)
        watch: LiveWatch[T] | None = None

        def open_watch() -> LiveWatch[T]:
            try:
                with interruptible(opening):
                    return self.sync.open_watch(**kwargs)
            finally:
                opening.detach()  # the open stream is closed by watch.close() from here on

        opened = reader.submit(open_watch)
        try:
            watch = await asyncio.wrap_future(opened)
            events = iter(watch)
            while True:
                item = await loop.run_in_executor(reader, next, events, _END)
                if item is _END:
                    return
                yield item  # type: ignore[misc]
        finally:
            # Never wait on the event loop: the open (or read) still pending in the reader thread
            # is aborted, so that thread ends by itself at once.
            opening.interrupt()
            if watch is not None:
                watch.close()  # unblocks a read still pending in the reader thread
            else:  # cancelled while opening: a stream that opened anyway is closed when it does
                opened.add_done_callback(_close_opened)
            reader.shutdown(wait=False)
