"""Cached reads through a client: its kind's ``CacheReader`` (a hit at once), else the cache's one read path
(``caching._reads``), driven sync or async, else a live read the client passes down."""

from __future__ import annotations

from typing import Any, Callable

from cloudcoil_cache._listwatch import ListOptions, check_field_selector
from cloudcoil_cache._threads import run_blocking
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.caching._policy import Mode, ReadRequest, get_request
from cloudcoil_cache.caching._reader import Covered
from cloudcoil_cache.caching._reads import LIVE, Page, drive, drive_async, index_unavailable, policy_get, read
from cloudcoil_cache.client._lists import CoveringList, ObjectList

__all__ = [
    "whole_hit",
    "LiveGet",
    "LiveList",
    "Resolve",
    "async_cached_get",
    "async_cached_list",
    "cached_get",
    "cached_list",
    "check_index",
    "drive",
    "drive_async",
    "list_namespace",
    "plain_segment",
]

#: A live get (``ResourceClient.live_get``): what a read the cache does not serve calls.
LiveGet = Callable[[str, "str | None"], Any]
#: A live list (``ResourceClient.live_list_with``).
LiveList = Callable[[ListOptions], ObjectList[Any]]
#: The client's namespace check and default (``ResourceClient._namespace``).
Resolve = Callable[["str | None"], "str | None"]


def plain_segment(value: str) -> bool:
    """A name or namespace ``check_path_segment`` accepts, told without building its message."""
    return "/" not in value and "%" not in value and value != "." and value != ".."


# ------------------------------------------------------------------- gets
def cached_get(
    cache: Cache | None,
    cls: Any,
    name: str,
    namespace: str | None,
    live: LiveGet,
    *,
    mode: Mode | None = None,
    selector_is_scope: bool = False,
) -> Any:
    """A get through ``cache`` per the read policy (its kind's reader: a hit at once, else the
    policy), else ``live(name, namespace)``. ``name`` and ``namespace`` are checked and defaulted
    by the caller; ``cls`` is bound."""
    if cache is None:
        return live(name, namespace)
    reader = cache.readers.get(cls)
    if reader is not None:
        return reader.get(name, namespace, live, mode, selector_is_scope)
    return policy_get(cache, cls, name, namespace, live, mode, selector_is_scope)  # no informer yet


async def async_cached_get(cache: Cache | None, cls: Any, name: str, namespace: str | None, live: LiveGet) -> Any:
    """``cached_get`` on the event loop: a hit or a served answer inline, waits and live reads off it."""
    if cache is not None:
        reader = cache.readers.get(cls)
        found = None if reader is None else reader.hit(name, namespace)
        if found is not None:
            return found
        answer = await drive_async(read(cache, cls, get_request(cls.kind, namespace, name)))
        if answer is not LIVE:
            return answer
    return await run_blocking(live, name, namespace)


# ------------------------------------------------------------------ lists
def list_namespace(cls: Any, opts: ListOptions, resolve: Resolve) -> str | None:
    """The namespace a list of ``cls`` reads (None: all), as ``resolve`` (the client's) defaults and checks it."""
    return None if opts.all_namespaces or not cls.namespaced else resolve(opts.namespace)


def _plain(opts: ListOptions) -> bool:
    """A list without selectors, page size or continue token (what a reader's ``hit_list`` answers)."""
    return opts.label_selector is None and opts.field_selector is None and opts.limit is None and opts.continue_ is None


def _request(cls: Any, opts: ListOptions, namespace: str | None, mode: Mode | None) -> ReadRequest:
    return ReadRequest(
        cls.kind,
        namespace,
        None,
        namespace is None,
        opts.label_selector,
        opts.field_selector,
        opts.limit,
        opts.continue_,
        mode,
    )


def cached_list(
    cache: Cache | None,
    cls: Any,
    opts: ListOptions,
    resolve: Resolve,
    live: LiveList,
    *,
    mode: Mode | None = None,
) -> ObjectList[Any]:
    """A list through ``cache`` per the read policy (its kind's reader: a hit at once, else the
    policy), else ``live(opts)``. ``resolve``: the client's namespace default and check; ``opts``'s
    limit is checked by the caller; ``cls`` is bound."""
    if opts.field_selector is not None:
        check_field_selector(cls, opts.field_selector)  # an unknown field is the API server's 400, not []
    if cache is None:
        if opts.index is not None:
            check_index(opts.index)
            raise index_unavailable(cls.kind, opts.index[0], "the client reads through no cache")
        return live(opts)
    if opts.all_namespaces or not cls.namespaced:
        namespace = None
    else:  # resolve(), without a call for a plain namespace given (on every cached list's path)
        namespace = opts.namespace  # plain_segment(), written out
        if (
            namespace.__class__ is not str
            or not namespace
            or "/" in namespace
            or "%" in namespace
            or namespace == "."
            or namespace == ".."
        ):
            namespace = resolve(namespace)
    if opts.index is not None:
        return _indexed_list(cache, cls, opts, namespace, resolve, live, mode)
    if opts.label_selector is None and opts.field_selector is None and opts.limit is None and opts.continue_ is None:
        reader = cache.readers.get(cls)
        hit = None if reader is None else reader.hit_list(namespace)
        if hit is not None:
            return whole_hit(cls, hit)
    answer = drive(read(cache, cls, _request(cls, opts, namespace, mode)))
    if answer is LIVE:
        return live(opts)
    return _objects(cache, cls, answer, opts, resolve, live, mode)


def whole_hit(cls: Any, hit: tuple[list[Any], str]) -> ObjectList[Any]:
    """A reader's hit as a list: a ``CoveringList`` when it covers a set of namespaces (``Covered``)."""
    items = hit[0]
    if items.__class__ is not Covered:
        return ObjectList.whole(cls, items, hit[1])
    covered = list(items.namespaces)
    covering: CoveringList[Any] = CoveringList(cls, items, {"resourceVersion": "", "namespaces": covered})
    covering.namespaces = covered
    return covering


def check_index(index: Any) -> tuple[str, str]:
    """``index=(name, value)``: two strings, else a ``ValueError`` naming what was given."""
    if (
        index.__class__ is not tuple
        or len(index) != 2
        or not isinstance(index[0], str)
        or not index[0]
        or not isinstance(index[1], str)
    ):
        raise ValueError(
            f"index= must be a (name, value) pair of strings, such as ('spec.nodeName', 'node-1'), got {index!r}"
        )
    checked: tuple[str, str] = index
    return checked


def _indexed_list(
    cache: Cache,
    cls: Any,
    opts: ListOptions,
    namespace: str | None,
    resolve: Resolve,
    live: LiveList,
    mode: Mode | None,
) -> ObjectList[Any]:
    """A list by the cache's index ``opts.index``: the reader's hit (O(matches)), else the policy,
    which may wait or refuse; never the API server (it has no index)."""
    index = opts.index
    if (
        index.__class__ is tuple
        and len(index) == 2
        and index[0].__class__ is str
        and index[0]
        and index[1].__class__ is str
    ):
        name, value = index  # check_index(), written out (on every list by an index)
    else:
        name, value = check_index(index)
    if opts.label_selector is None and opts.field_selector is None and opts.limit is None and opts.continue_ is None:
        reader = cache.readers.get(cls)
        hit = None if reader is None else reader.hit_index(namespace, name, value)
        if hit is not None:
            return whole_hit(cls, hit)
    answer = drive(read(cache, cls, _request(cls, opts, namespace, mode), (name, value)))
    if answer is LIVE:
        raise _index_live(cls, name)
    return _objects(cache, cls, answer, opts, resolve, live, mode)


def _index_live(cls: Any, name: str) -> Exception:
    return index_unavailable(
        cls.kind,
        name,
        "the cache could not serve it (it kept waiting for writes) and the API server has no index",
    )


async def async_cached_list(
    cache: Cache | None, cls: Any, opts: ListOptions, resolve: Resolve, live: LiveList
) -> ObjectList[Any]:
    """``cached_list`` on the event loop: a hit or a served page inline, waits and live reads off it."""
    if opts.field_selector is not None:
        check_field_selector(cls, opts.field_selector)
    if opts.index is not None:
        name, value = check_index(opts.index)
        if cache is None:
            raise index_unavailable(cls.kind, name, "the client reads through no cache")
        namespace = list_namespace(cls, opts, resolve)
        reader = cache.readers.get(cls)
        hit = None if reader is None or not _plain(opts) else reader.hit_index(namespace, name, value)
        if hit is not None:
            return whole_hit(cls, hit)
        answer = await drive_async(read(cache, cls, _request(cls, opts, namespace, None), (name, value)))
        if answer is LIVE:
            raise _index_live(cls, name)
        return _objects(cache, cls, answer, opts, resolve, live, None)
    if cache is not None:
        namespace = list_namespace(cls, opts, resolve)
        if _plain(opts):
            reader = cache.readers.get(cls)
            hit = None if reader is None else reader.hit_list(namespace)
            if hit is not None:
                return whole_hit(cls, hit)
        answer = await drive_async(read(cache, cls, _request(cls, opts, namespace, None)))
        if answer is not LIVE:
            return _objects(cache, cls, answer, opts, resolve, live, None)
    return await run_blocking(live, opts)


def _objects(
    cache: Cache, cls: Any, page: Page, opts: ListOptions, resolve: Resolve, live: LiveList, mode: Mode | None
) -> ObjectList[Any]:
    def next_page(token: str) -> ObjectList[Any]:
        return cached_list(cache, cls, opts.page(token), resolve, live, mode=mode)

    covered = page.metadata.get("namespaces")
    if covered is not None:  # an all-namespaces list over a cache's set of namespaces
        covering: CoveringList[Any] = CoveringList(cls, page.items, page.metadata, next_page if opts.limit else None)
        covering.namespaces = list(covered)
        return covering
    return ObjectList(cls, page.items, page.metadata, next_page if opts.limit else None)
