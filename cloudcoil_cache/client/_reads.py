"""Cached reads: the sync and async shells that carry out the read policy's decision for get and list."""

from __future__ import annotations

import base64
import logging
from typing import TYPE_CHECKING, Any, Awaitable, Callable, TypeVar

from cloudcoil_cache._listwatch import ListOptions, check_field_selector
from cloudcoil_cache._threads import run_blocking, run_control
from cloudcoil_cache.caching._cache import ReadPlan
from cloudcoil_cache.caching._policy import (
    ReadLive,
    ReadRequest,
    Refuse,
    Serve,
    WaitForSync,
    WaitForWrites,
)
from cloudcoil_cache.caching._views import filter_objects
from cloudcoil_cache.client._lists import ObjectList
from cloudcoil_cache.errors import CacheUnavailableError, ResourceNotFound

if TYPE_CHECKING:
    from cloudcoil_cache.client._resource_client import ResourceClient

__all__ = ["async_cached_get", "async_cached_list", "cached_get", "cached_list"]

log = logging.getLogger(__name__)

R = TypeVar("R")

_TOKEN_PREFIX = "cc-cache:"


class _Live(Exception):
    """Internal: this read goes to the API server."""


# ---------------------------------------------------------------- requests
def _get_request(client: ResourceClient[Any], name: str, namespace: str | None) -> ReadRequest:
    client.check_get(name)
    return ReadRequest(client.cls.kind, client._namespace(namespace), name=name)


def _list_request(client: ResourceClient[Any], opts: ListOptions) -> ReadRequest:
    cls = client.cls
    client.check_list(opts.limit)
    check_field_selector(cls, opts.field_selector)  # an unknown field is the API server's 400, not []
    all_namespaces = opts.all_namespaces or not cls.namespaced
    ns = None if all_namespaces else client._namespace(opts.namespace)
    return ReadRequest(cls.kind, ns, all_namespaces=all_namespaces,
                       label_selector=opts.label_selector, field_selector=opts.field_selector)


def _refuse(decision: Refuse, request: ReadRequest, suffix: str = "") -> CacheUnavailableError:
    return CacheUnavailableError(f"cannot serve {request.what}{suffix} from the cache: {decision.reason}",
                                 reason=decision.reason, last_error=decision.last_error)


# ------------------------------------------------------- the policy's steps
def _step(client: ResourceClient[Any], plan: ReadPlan, opts: ListOptions | None) -> Any:
    """Carry out a decision that needs no waiting: the answer, or ``_Live``; raises when refused.

    Returns the plan itself for the decisions that need a wait (the shells do those).
    """
    decision = plan.decision
    if isinstance(decision, Serve):
        assert plan.informer is not None
        return _serve_get(client, plan) if opts is None else _serve_list(client, plan, opts)
    continued = opts is not None and (opts.continue_ or "").startswith(_TOKEN_PREFIX)
    if isinstance(decision, Refuse):
        raise _refuse(decision, plan.request) from None
    if isinstance(decision, ReadLive):
        if continued:
            # The API server cannot continue a page the cache started: refuse in both modes.
            raise _refuse(Refuse(decision.reason), plan.request, " (continuing a page the cache served)")
        if not decision.bypass:
            log.debug("cache cannot serve %s (%s); reading from the API server", plan.request.what,
                      decision.reason)
        raise _Live()
    return plan


def _serve_get(client: ResourceClient[Any], plan: ReadPlan) -> Any:
    informer = plan.informer
    assert informer is not None
    request = plan.request
    obj = informer.store.get(request.namespace, request.name or "")
    if obj is not None:
        return obj  # also from a selector-filtered informer: what it holds matches its selector
    key = informer.key
    if key.label_selector or key.field_selector:  # the object may exist and not match
        reason = (f"selector not servable: {key.describe()} holds only objects matching its "
                  f"selector, and {request.name!r} is not among them")
    elif not informer.complete:  # it may have been evicted: the cache cannot say "not found"
        reason = informer.incomplete_reason()
    else:
        raise ResourceNotFound(f'{client.cls.plural} "{request.name}" not found in cache '
                               f"({key.describe()})", reason="NotFound")
    cache = client.config.cache
    assert cache is not None
    if cache.mode == "strict":
        raise _refuse(Refuse(reason), request)
    raise _Live()


def _serve_list(client: ResourceClient[Any], plan: ReadPlan, opts: ListOptions) -> ObjectList[Any]:
    informer = plan.informer
    assert informer is not None
    token = opts.continue_
    if token and not token.startswith(_TOKEN_PREFIX):  # the API server's token: only it can continue
        cache = client.config.cache
        assert cache is not None
        if cache.mode == "strict":
            raise _refuse(Refuse("the continue token comes from the API server, not from the cache"),
                          plan.request)
        raise _Live()
    try:
        start_after = _decode_token(token)
    except ValueError as exc:
        raise _refuse(Refuse(str(exc)), plan.request, " (continuing a page the cache served)") from None
    objs, rv = informer.store.snapshot(plan.request.namespace)  # items and RV in one step
    objs = filter_objects(objs, opts.label_selector, opts.field_selector)
    metadata: dict[str, Any] = {"resourceVersion": rv or ""}
    limit = opts.limit
    if limit or start_after is not None:
        objs.sort(key=_sort_key)
        if start_after is not None:
            objs = [o for o in objs if _sort_key(o) > start_after]
        if limit and len(objs) > limit:
            metadata["continue"] = _encode_token(_sort_key(objs[limit - 1]))
            metadata["remainingItemCount"] = len(objs) - limit
            objs = objs[:limit]

    def next_page(token: str) -> ObjectList[Any]:
        return cached_list(client, opts.page(token))

    return ObjectList(client.cls, objs, metadata, next_page if limit else None)


def _plan(client: ResourceClient[Any], request: ReadRequest, writes_waited: bool = False) -> ReadPlan:
    cache = client.config.cache
    assert cache is not None
    return cache.plan_read(client.cls, request, writes_waited=writes_waited)


def _wait(client: ResourceClient[Any], plan: ReadPlan) -> bool:
    """Do the blocking part of a decision; True when it was a wait for writes."""
    cache = client.config.cache
    assert cache is not None
    if isinstance(plan.decision, WaitForSync):
        cache.sync_lazily(client.cls)
        return False
    assert isinstance(plan.decision, WaitForWrites) and plan.informer is not None
    request = plan.request
    plan.informer.writes.wait(None if request.all_namespaces else request.namespace, request.name,
                              cache.read_your_writes_timeout)
    return True


# ------------------------------------------------------------------ shells
def _run_sync(client: ResourceClient[Any], request: ReadRequest, opts: ListOptions | None,
              live: Callable[[], R]) -> R:
    if client.config.cache is None:
        return live()
    waited = False
    for _ in range(3):  # wait for a lazy sync, then for writes, then decide for good
        plan = _plan(client, request, waited)
        try:
            result = _step(client, plan, opts)
        except _Live:
            return live()
        if not isinstance(result, ReadPlan):
            return result  # type: ignore[no-any-return]
        waited = _wait(client, result) or waited
    return live()


async def _run_async(client: ResourceClient[Any], request: ReadRequest, opts: ListOptions | None,
                     live: Callable[[], Awaitable[R]]) -> R:
    if client.config.cache is None:
        return await live()
    waited = False
    for _ in range(3):
        plan = _plan(client, request, waited)
        try:
            result = _step(client, plan, opts)  # memory only: answered on the loop, no thread hop
        except _Live:
            return await live()
        if not isinstance(result, ReadPlan):
            return result  # type: ignore[no-any-return]
        waited = await run_control(_wait, client, result) or waited
    return await live()


def cached_get(client: ResourceClient[Any], name: str, namespace: str | None) -> Any:
    """A get through the cache (per the read policy), else from the API server."""
    return _run_sync(client, _get_request(client, name, namespace), None,
                     lambda: client.live_get(name, namespace))


def cached_list(client: ResourceClient[Any], opts: ListOptions) -> ObjectList[Any]:
    """A list through the cache (per the read policy), else from the API server."""
    return _run_sync(client, _list_request(client, opts), opts, lambda: client.live_list_with(opts))


async def async_cached_get(client: ResourceClient[Any], name: str, namespace: str | None) -> Any:
    return await _run_async(client, _get_request(client, name, namespace), None,
                            lambda: run_blocking(client.live_get, name, namespace))


async def async_cached_list(client: ResourceClient[Any], opts: ListOptions) -> ObjectList[Any]:
    return await _run_async(client, _list_request(client, opts), opts,
                            lambda: run_blocking(client.live_list_with, opts))


# ------------------------------------------------------------ page tokens
def _sort_key(obj: Any) -> tuple[str, str]:
    return (obj.metadata.namespace or "", obj.metadata.name or "")


def _encode_token(key: tuple[str, str]) -> str:
    raw = f"{key[0]}/{key[1]}".encode()
    return _TOKEN_PREFIX + base64.urlsafe_b64encode(raw).decode()


def _decode_token(token: str | None) -> tuple[str, str] | None:
    if not token:
        return None
    try:  # validate: urlsafe_b64decode would drop foreign characters and read "!!!" as the first page
        text = base64.b64decode(token[len(_TOKEN_PREFIX):], altchars=b"-_", validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        text = ""
    namespace, slash, name = text.partition("/")
    if not slash or not name:
        raise ValueError("malformed cache continue token")
    return (namespace, name)
