"""Cached reads through a client: the sync and async drivers of the cache's one read path (``caching._reads``)."""

from __future__ import annotations

from typing import Any, Protocol

from cloudcoil_cache._listwatch import ListOptions, check_field_selector
from cloudcoil_cache._threads import run_blocking, run_control
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.caching._policy import Mode, ReadRequest
from cloudcoil_cache.caching._policy import get_request as new_get_request
from cloudcoil_cache.caching._reads import LIVE, Page, ReadFlow, Wait, read, served_get
from cloudcoil_cache.client._api_config import ApiConfig
from cloudcoil_cache.client._lists import ObjectList

__all__ = [
    "ReadingClient",
    "async_cached_get",
    "async_cached_list",
    "cached_get",
    "cached_list",
    "drive",
    "drive_async",
    "plain_segment",
    "policy_get",
    "shortcut_get",
]


class ReadingClient(Protocol):
    """What a cached read needs of the client it reads through (a ``ResourceClient``, which sits above:
    it calls these reads): its class and config, its argument checks and its live reads."""

    config: ApiConfig
    read_cache: Cache | None  # the cache its reads go through: config.cache, None for a live client

    @property
    def cls(self) -> Any: ...

    kind_class: Any

    def check_get(self, name: str) -> None: ...

    def check_list(self, limit: int | None) -> None: ...

    def _namespace(self, namespace: str | None) -> str | None: ...

    def live_get(self, name: str, namespace: str | None = None) -> Any: ...

    def live_list_with(self, opts: ListOptions) -> ObjectList[Any]: ...


def plain_segment(value: str) -> bool:
    """A name or namespace ``check_path_segment`` accepts, told without building its message."""
    return "/" not in value and "%" not in value and value != "." and value != ".."


# ----------------------------------------------------------------- drivers
def drive(flow: ReadFlow) -> Any:
    """Run a read flow in this thread: each wait it yields is called here; the last step is the answer."""
    answer = None
    for step in flow:
        if step.__class__ is Wait:
            step.call()
        else:
            answer = step
    return answer


async def drive_async(flow: ReadFlow) -> Any:
    """Run a read flow on the event loop (memory only, no thread hop); each wait runs off the loop."""
    answer = None
    for step in flow:
        if step.__class__ is Wait:
            await run_control(step.call)
        else:
            answer = step
    return answer


# ---------------------------------------------------------------- requests
def get_request(
    client: ReadingClient,
    name: str,
    namespace: str | None,
    *,
    mode: Mode | None = None,
    selector_is_scope: bool = False,
) -> ReadRequest:
    client.check_get(name)
    return new_get_request(client.cls.kind, client._namespace(namespace), name, mode, selector_is_scope)


def list_request(client: ReadingClient, opts: ListOptions, *, mode: Mode | None = None) -> ReadRequest:
    cls = client.cls
    client.check_list(opts.limit)
    check_field_selector(cls, opts.field_selector)  # an unknown field is the API server's 400, not []
    all_namespaces = opts.all_namespaces or not cls.namespaced
    ns = None if all_namespaces else client._namespace(opts.namespace)
    return ReadRequest(
        cls.kind, ns, None, all_namespaces, opts.label_selector, opts.field_selector, opts.limit, opts.continue_, mode
    )


def _objects(client: ReadingClient, page: Page, opts: ListOptions, mode: Mode | None) -> ObjectList[Any]:
    def next_page(token: str) -> ObjectList[Any]:
        return cached_list(client, opts.page(token), mode=mode)

    return ObjectList(client.cls, page.items, page.metadata, next_page if opts.limit else None)


# ------------------------------------------------------------------ reads
def cached_get(
    client: ReadingClient,
    name: str,
    namespace: str | None,
    *,
    mode: Mode | None = None,
    selector_is_scope: bool = False,
) -> Any:
    """A get through the cache (per the read policy), else from the API server."""
    found = shortcut_get(client, name, namespace)
    if found is not None:
        return found
    return policy_get(client, name, namespace, mode=mode, selector_is_scope=selector_is_scope)


def policy_get(
    client: ReadingClient,
    name: str,
    namespace: str | None,
    *,
    mode: Mode | None = None,
    selector_is_scope: bool = False,
) -> Any:
    """``cached_get`` without its shortcut: the checks, then the read path (facts, ``decide``, serving)."""
    client.check_get(name)  # get_request's steps, without its keywords: on every cached get's path
    cls = client.cls  # a dynamic class is bound here
    request = new_get_request(cls.kind, client._namespace(namespace), name, mode, selector_is_scope)
    cache = client.config.cache
    answer = LIVE if cache is None else drive(read(cache, cls, request))
    return client.live_get(name, namespace) if answer is LIVE else answer


def shortcut_get(client: ReadingClient, name: str, namespace: str | None) -> Any:
    """The cached get's shortcut: ``served_get`` (what ``read()`` would serve at once) for the
    arguments as given, when ``check_get()`` and ``client._namespace()`` would pass them as they
    are (a bound class, a plain name and namespace, or none); else None, and the read path checks.

    ``plain_segment`` is written out here: this runs on every cached get.
    """
    cache = client.read_cache
    cls = client.kind_class
    if (
        cache is None
        or name.__class__ is not str
        or not name
        or "/" in name
        or "%" in name
        or name == "."
        or name == ".."
        or getattr(cls, "plural", None) is None  # a dynamic class discovery has not bound yet
        or (namespace is not None and namespace.__class__ is not str)  # _namespace names the type
    ):
        return None
    if not cls.namespaced:
        return served_get(cache, cls, None, name)
    if not namespace:
        namespace = client.config.namespace
    if "/" in namespace or "%" in namespace or namespace == "." or namespace == "..":
        return None
    return served_get(cache, cls, namespace, name)


def cached_list(client: ReadingClient, opts: ListOptions, *, mode: Mode | None = None) -> ObjectList[Any]:
    """A list through the cache (per the read policy), else from the API server."""
    request = list_request(client, opts, mode=mode)
    cache = client.config.cache
    answer: Page | object = LIVE if cache is None else drive(read(cache, client.kind_class, request))
    if not isinstance(answer, Page):
        return client.live_list_with(opts)
    return _objects(client, answer, opts, mode)


async def async_cached_get(client: ReadingClient, name: str, namespace: str | None) -> Any:
    found = shortcut_get(client, name, namespace)
    if found is not None:
        return found
    request = get_request(client, name, namespace)
    cache = client.config.cache
    if cache is not None:
        answer = await drive_async(read(cache, client.kind_class, request))  # bound by get_request
        if answer is not LIVE:
            return answer
    return await run_blocking(client.live_get, name, namespace)


async def async_cached_list(client: ReadingClient, opts: ListOptions) -> ObjectList[Any]:
    request = list_request(client, opts)
    cache = client.config.cache
    if cache is not None:
        answer = await drive_async(read(cache, client.kind_class, request))
        if answer is not LIVE:
            return _objects(client, answer, opts, None)
    return await run_blocking(client.live_list_with, opts)
