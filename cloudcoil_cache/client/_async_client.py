"""AsyncResourceClient: async twin of ResourceClient; memory reads inline, blocking work off-loop"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any, AsyncIterator, Generic, TypeVar

from cloudcoil_cache._threads import run_blocking
from cloudcoil_cache.caching._cache import NeedsBlocking
from cloudcoil_cache.client._lists import ObjectList
from cloudcoil_cache.client._reads import LIVE, resolve_get, resolve_list
from cloudcoil_cache.client._resource_client import LiveWatch, ResourceClient

__all__ = ["AsyncResourceClient"]

T = TypeVar("T")
_END = object()


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
            try:
                value = resolve_get(self.sync, name, namespace, lazy_start=False)
            except NeedsBlocking:
                return await run_blocking(self.sync.get, name, namespace)
            if value is not LIVE:
                return value  # type: ignore[no-any-return]
        return await run_blocking(self.sync.live_get, name, namespace)

    async def list(self, namespace: str | None = None, all_namespaces: bool = False,
                   label_selector: str | None = None, field_selector: str | None = None,
                   limit: int | None = None, continue_: str | None = None) -> ObjectList[T]:
        args = (namespace, all_namespaces, label_selector, field_selector, limit, continue_)
        if self.sync.cached:
            try:
                value = resolve_list(self.sync, *args, lazy_start=False)
            except NeedsBlocking:
                return await run_blocking(self.sync.list, *args)
            if value is not LIVE:
                return value  # type: ignore[no-any-return]
        return await run_blocking(self.sync.live_list, *args)

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
        must not hold a worker that scopes and reads need. Cancelling the consuming task closes
        the stream, which ends the pending read at once; the thread is joined.
        """
        loop = asyncio.get_running_loop()
        reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cloudcoil-watch")
        watch: LiveWatch[T] | None = None
        try:
            watch = await loop.run_in_executor(reader, lambda: self.sync.open_watch(**kwargs))
            events = iter(watch)
            while True:
                item = await loop.run_in_executor(reader, next, events, _END)
                if item is _END:
                    return
                yield item  # type: ignore[misc]
        finally:
            if watch is not None:
                watch.close()  # unblocks a read still pending in the reader thread
            reader.shutdown(wait=True)  # returns at once: the read was unblocked
