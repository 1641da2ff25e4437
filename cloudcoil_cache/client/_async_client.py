"""AsyncApi: the async twin of ``Api``; memory reads inline on the loop, blocking work off it."""

from __future__ import annotations

import asyncio
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, AsyncGenerator, Generic, Mapping, TypeVar

from cloudcoil_cache._listwatch import ListOptions
from cloudcoil_cache._runnable import adopt
from cloudcoil_cache._threads import run_blocking, run_control
from cloudcoil_cache.apimachinery import Status
from cloudcoil_cache.client._lists import ObjectList
from cloudcoil_cache.client._reads import async_cached_get, async_cached_list
from cloudcoil_cache.client._resource_client import Api
from cloudcoil_cache.client._wait import WaitPredicate, check_wait, wait_timeout_message
from cloudcoil_cache.client._watch import Watch
from cloudcoil_cache.errors import WaitTimeout

__all__ = ["AsyncApi", "AsyncResourceClient"]

T = TypeVar("T")
_END = object()


def _close_opened(future: Future[Any]) -> None:
    if not future.cancelled() and future.exception() is None:
        future.result().close()


class AsyncApi(Generic[T]):
    """Async operations on one resource class through one Config.

    Cached reads that the cache can serve are answered from memory on the event loop (no thread
    hop); everything that may block — HTTP, waiting for a lazily started informer — runs on the
    library's executor through ``run_blocking``.
    """

    def __init__(self, client: Api[T]) -> None:
        self.sync = client

    async def ready(self) -> AsyncApi[T]:
        """Run the config's discovery, and a dynamic kind's binding (its plural and scope), off the
        loop (once), so later reads never block on them."""
        await self.sync.config.async_initialize()
        await self._bound()
        return self

    async def _bound(self) -> None:
        if self.sync.needs_binding:
            await run_control(self.sync.bind)

    @property
    def cls(self) -> Any:
        """The resource class (a dynamic one has its plural once ``ready()`` or a call bound it)."""
        return self.sync.kind_class

    def __repr__(self) -> str:
        return f"<AsyncApi {self.cls.kind} cached={self.sync.cached}>"

    async def get(self, name: str, namespace: str | None = None) -> T:
        if self.sync.cached:
            await self._bound()
            sync = self.sync
            sync.check_get(name)
            found: T = await async_cached_get(
                sync.read_cache, sync.cls, name, sync._namespace(namespace), sync.live_get
            )
            return found
        return await run_blocking(self.sync.live_get, name, namespace)

    async def list(
        self,
        namespace: str | None = None,
        all_namespaces: bool = False,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        index: tuple[str, str] | None = None,
    ) -> ObjectList[T]:
        return await self.list_with(
            ListOptions(namespace, all_namespaces, label_selector, field_selector, limit, continue_, index)
        )

    async def list_with(self, opts: ListOptions) -> ObjectList[T]:
        """``list()`` with its options as one ``ListOptions`` value."""
        if self.sync.cached:
            await self._bound()
            sync = self.sync
            sync.check_list(opts.limit)
            return await async_cached_list(sync.read_cache, sync.cls, opts, sync._namespace, sync.live_list_with)
        if opts.index is not None:  # raises, naming the index: a live read has none
            return await async_cached_list(None, self.sync.cls, opts, self.sync._namespace, self.sync.live_list_with)
        return await run_blocking(self.sync.live_list_with, opts)

    async def create(self, obj: T, **kwargs: Any) -> T:
        return await run_blocking(lambda: self.sync.create(obj, **kwargs))

    async def update(self, obj: T, **kwargs: Any) -> T:
        return await run_blocking(lambda: self.sync.update(obj, **kwargs))

    async def update_status(self, obj: T, **kwargs: Any) -> T:
        return await run_blocking(lambda: self.sync.update_status(obj, **kwargs))

    async def patch(self, name: str, patch: Any, **kwargs: Any) -> T:
        return await run_blocking(lambda: self.sync.patch(name, patch, **kwargs))

    async def apply(self, obj: T, **kwargs: Any) -> T:
        return await run_blocking(lambda: self.sync.apply(obj, **kwargs))

    async def delete(self, name: str, namespace: str | None = None, **kwargs: Any) -> T | Status:
        return await run_blocking(lambda: self.sync.delete(name, namespace, **kwargs))

    async def scale(self, name: str, replicas: int, namespace: str | None = None) -> T:
        return await run_blocking(self.sync.scale, name, replicas, namespace)

    async def delete_all(
        self,
        namespace: str | None = None,
        dry_run: bool = False,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        *,
        all_namespaces: bool = False,
    ) -> ObjectList[T]:
        """``Api.delete_all`` off the loop (same arguments and result)."""
        return await run_blocking(
            lambda: self.sync.delete_all(
                namespace,
                dry_run,
                propagation_policy,
                grace_period_seconds,
                label_selector,
                field_selector,
                all_namespaces=all_namespaces,
            )
        )

    async def watch(self, *args: Any, **kwargs: Any) -> AsyncGenerator[tuple[str, T], None]:
        """Async generator of ``(type, object)`` (arguments as ``Api.watch``: resilient,
        it runs until the consumer stops; ``aclose()`` it or cancel the consuming task).

        The watch reads on a thread of its own, never on the shared executors: a long watch
        must not hold a worker that scopes and reads need. Closing or cancelling aborts an open
        still in progress or closes the stream, which ends the pending read at once; the thread
        then ends by itself (the event loop never waits for it).
        """
        loop = asyncio.get_running_loop()
        reader = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="cloudcoil-watch", initializer=adopt, initargs=("async-watch",)
        )
        watch: Watch[T] | None = None
        opened = reader.submit(lambda: self.sync.watch(*args, **kwargs))  # discovery, if needed, runs there
        try:
            watch = await asyncio.wrap_future(opened)
            while True:
                item: tuple[str, T] | object = await loop.run_in_executor(reader, next, watch, _END)
                if not isinstance(item, tuple):  # _END: the watch ended
                    return
                yield item
        finally:
            # Never wait on the event loop: the open (or read) still pending in the reader thread
            # is aborted, so that thread ends by itself at once.
            if watch is not None:
                watch.close()  # from here: interrupts; the reader thread then ends the iteration
                reader.submit(watch.close)  # there: also closes the generator (its owner thread)
            else:  # cancelled while the watch was made: close it once it exists
                opened.add_done_callback(_close_opened)
            reader.shutdown(wait=False)

    async def wait_for(self, obj: T, predicates: Mapping[str, WaitPredicate], timeout: float | None = None) -> str:
        """The async twin of ``Api.wait_for`` (returns the matching predicate's name)."""
        return (await self.wait_for_match(obj, predicates, timeout))[0]

    async def wait_for_match(
        self, obj: T, predicates: Mapping[str, WaitPredicate], timeout: float | None = None
    ) -> tuple[str, T]:
        """The async twin of ``Api.wait_for_match``; predicates run on the event loop."""
        name, namespace, rv = check_wait(self.cls, obj, predicates, timeout)

        async def scan() -> tuple[str, T]:
            events = self.watch(
                namespace=namespace, field_selector=f"metadata.name={name}", resource_version=rv, allow_bookmarks=False
            )
            try:
                async for event_type, found in events:
                    for key, predicate in predicates.items():
                        if predicate(event_type, found):
                            return key, found
            finally:
                await events.aclose()
            raise WaitTimeout(wait_timeout_message(self.cls, namespace, name, timeout))  # pragma: no cover

        try:
            return await asyncio.wait_for(scan(), timeout)
        except asyncio.TimeoutError:
            raise WaitTimeout(wait_timeout_message(self.cls, namespace, name, timeout)) from None


#: The name this class had (and keeps).
AsyncResourceClient = AsyncApi
