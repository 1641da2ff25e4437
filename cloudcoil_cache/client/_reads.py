"""Cached reads: serve get/list from an informer, or fall back to the API / raise, per the read policy."""

from __future__ import annotations

import base64
import logging
from typing import TYPE_CHECKING, Any

from cloudcoil_cache._listwatch import check_field_selector
from cloudcoil_cache.caching._cache import CannotServe
from cloudcoil_cache.caching._views import filter_objects
from cloudcoil_cache.client._lists import ObjectList
from cloudcoil_cache.errors import ResourceNotFound

if TYPE_CHECKING:
    from cloudcoil_cache.client._resource_client import ResourceClient

__all__ = ["LIVE", "cached_get", "cached_list", "resolve_get", "resolve_list"]

log = logging.getLogger(__name__)

_TOKEN_PREFIX = "cc-cache:"


def _cannot_serve(client: ResourceClient[Any], exc: CannotServe, what: str) -> None:
    """Strict mode raises ``CacheUnavailableError``; fallback mode logs and returns (go live)."""
    cache = client.config.cache
    assert cache is not None
    if cache.mode == "strict":
        raise exc.to_error(what) from None
    log.debug("cache cannot serve %s (%s); reading from the API server", what, exc.reason)


def _bypass(client: ResourceClient[Any]) -> bool:
    cache = client.config.cache
    return cache is None or not cache.enabled or cache.paused


#: Returned by the ``resolve_*`` functions when the read must go to the API server.
LIVE = object()


def cached_get(client: ResourceClient[Any], name: str, namespace: str | None) -> Any:
    value = resolve_get(client, name, namespace)
    return client.live_get(name, namespace) if value is LIVE else value


def cached_list(client: ResourceClient[Any], namespace: str | None, all_namespaces: bool,
                label_selector: str | None, field_selector: str | None, limit: int | None,
                continue_: str | None) -> ObjectList[Any]:
    args = (namespace, all_namespaces, label_selector, field_selector, limit, continue_)
    value = resolve_list(client, *args)
    return client.live_list(*args) if value is LIVE else value


def resolve_get(client: ResourceClient[Any], name: str, namespace: str | None, *,
                lazy_start: bool = True) -> Any:
    """The cached object, or ``LIVE``; strict mode raises instead of ``LIVE``. No I/O.

    Raises ``NeedsBlocking`` (only with ``lazy_start=False``) when an informer must be started first.
    """
    cls = client.cls
    client.check_get(name)
    if _bypass(client):
        return LIVE
    cache = client.config.cache
    assert cache is not None
    ns = client._namespace(namespace)
    what = f"get {cls.kind} {ns + '/' if ns else ''}{name}"
    try:
        informer = cache.informer_for_read(cls, ns, all_namespaces=False, label_selector=None,
                                           field_selector=None, for_list=False, lazy_start=lazy_start)
    except CannotServe as exc:
        _cannot_serve(client, exc, what)
        return LIVE
    obj = informer.store.get(ns, name)
    if obj is not None:
        return obj  # also from a selector-filtered informer: what it holds matches its selector
    key = informer.key
    if key.label_selector or key.field_selector:  # the object may exist and not match
        reason = (f"selector not servable: {key.describe()} holds only objects matching its "
                  f"selector, and {name!r} is not among them")
    elif not informer.complete:  # it may have been evicted: the cache cannot say "not found"
        reason = informer.incomplete_reason()
    else:
        raise ResourceNotFound(f'{cls.plural} "{name}" not found', reason="NotFound")
    _cannot_serve(client, CannotServe(reason), what)
    return LIVE


def resolve_list(client: ResourceClient[Any], namespace: str | None, all_namespaces: bool,
                 label_selector: str | None, field_selector: str | None, limit: int | None,
                 continue_: str | None, *, lazy_start: bool = True) -> Any:
    """The cached list (an ``ObjectList``), or ``LIVE``; strict mode raises instead. No I/O."""
    cls = client.cls
    client.check_list(limit)
    if _bypass(client):
        return LIVE
    cache = client.config.cache
    assert cache is not None
    ns = None if all_namespaces or not cls.namespaced else client._namespace(namespace)
    check_field_selector(cls, field_selector)  # an unknown field is the API server's 400, not []
    what = f"list {cls.kind} in {ns or 'all namespaces'}"
    try:
        informer = cache.informer_for_read(cls, ns, all_namespaces=all_namespaces or not cls.namespaced,
                                           label_selector=label_selector, field_selector=field_selector,
                                           for_list=True, lazy_start=lazy_start)
        start_after = _decode_token(continue_)
    except CannotServe as exc:
        if continue_ and continue_.startswith(_TOKEN_PREFIX):
            # The API server cannot continue a page the cache started: refuse in both modes.
            raise exc.to_error(f"{what} (continuing a page the cache served)") from None
        _cannot_serve(client, exc, what)
        return LIVE
    objs = filter_objects(informer.store.list(ns), label_selector, field_selector)
    metadata: dict[str, Any] = {"resourceVersion": informer.resource_version or ""}
    if limit or start_after is not None:
        objs.sort(key=_sort_key)
        if start_after is not None:
            objs = [o for o in objs if _sort_key(o) > start_after]
        if limit and len(objs) > limit:
            metadata["continue"] = _encode_token(_sort_key(objs[limit - 1]))
            metadata["remainingItemCount"] = len(objs) - limit
            objs = objs[:limit]

    def next_page(token: str) -> ObjectList[Any]:
        return cached_list(client, namespace, all_namespaces, label_selector, field_selector, limit, token)

    return ObjectList(cls, objs, metadata, next_page if limit else None)


def _sort_key(obj: Any) -> tuple[str, str]:
    return (obj.metadata.namespace or "", obj.metadata.name or "")


def _encode_token(key: tuple[str, str]) -> str:
    raw = f"{key[0]}/{key[1]}".encode()
    return _TOKEN_PREFIX + base64.urlsafe_b64encode(raw).decode()


def _decode_token(token: str | None) -> tuple[str, str] | None:
    if not token:
        return None
    if not token.startswith(_TOKEN_PREFIX):
        raise CannotServe("the continue token comes from the API server, not from the cache")
    try:
        namespace, _, name = base64.urlsafe_b64decode(token[len(_TOKEN_PREFIX):]).decode().partition("/")
    except (ValueError, UnicodeDecodeError):
        raise CannotServe("malformed cache continue token") from None
    return (namespace, name)
