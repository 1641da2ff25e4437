"""Public informer views: handler registration on the view's ordered lane, and local reads."""

from __future__ import annotations

import builtins
import functools
import inspect
import itertools
import time
from typing import Any, Callable, Generic, TypeVar, overload

from cloudcoil_cache._listwatch import check_field_selector, parse_field_selector, parse_label_selector
from cloudcoil_cache._threads import run_control
from cloudcoil_cache.caching._dispatch import Lane, Registration, ThreadLane
from cloudcoil_cache.caching._informer import Informer
from cloudcoil_cache.caching._policy import in_scope
from cloudcoil_cache.caching._store import IndexFunc, Key

__all__ = ["HandlerHandle", "InformerView", "StoreView", "SyncInformer", "filter_objects"]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def filter_objects(objs: list[Any], label_selector: str | None, field_selector: str | None) -> list[Any]:
    """Evaluate label and field selectors in memory (full syntax)."""
    labels = parse_label_selector(label_selector)
    fields = parse_field_selector(field_selector)
    if labels.empty and fields.empty:
        return objs
    return [o for o in objs if labels.matches(o.metadata.labels) and (fields.empty or fields.matches(o))]


class HandlerHandle:
    """Returned by ``on_add``/``on_update``/``on_delete``: callable like the function, plus ``remove()``."""

    def __init__(self, informer: Informer[Any], lane: Lane, registration: Registration) -> None:
        self._informer = informer
        self._lane = lane
        self._registration = registration
        functools.update_wrapper(self, registration.handler)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._registration.handler(*args, **kwargs)

    def remove(self, timeout: float | None = None) -> bool:
        """Stop delivering events to this handler (idempotent). When it was its view's last
        handler, wait for the view's handler call in flight, up to ``timeout`` seconds (None: until
        it returns); False when one was still running then (it ends by itself, nothing follows it)."""
        return self._informer.unregister(self._lane, self._registration, timeout)

    def has_synced(self) -> bool:
        """True once this handler has been delivered the replay of the objects cached when it was
        added (or, added before the informer's first list, that list), as client-go's
        ``ResourceEventHandlerRegistration.HasSynced()``. An update or delete handler is delivered no
        replay: it is synced once its view's lane has passed the point where it was added."""
        return self._registration.synced.is_set()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Block until ``has_synced()`` (True) or ``timeout`` seconds (False; None: no limit). A
        hard failure of the informer's list (401/403/404) raises at once, as the view's
        ``wait_for_sync``; an informer that is not started returns False."""
        synced = self._registration.synced
        if synced.is_set():
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._informer.wait_for_sync(timeout):
            return synced.is_set()
        return synced.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))

    async def async_wait_for_sync(self, timeout: float | None = None) -> bool:
        """``wait_for_sync`` for a coroutine (an async view's handlers run on the loop it would
        block): the wait runs off the loop, on the library's control pool."""
        return await run_control(self.wait_for_sync, timeout)

    @property
    def backlog(self) -> int:
        """Events queued on this handler's view (its lane is shared by the view's handlers)."""
        return self._lane.backlog

    def __repr__(self) -> str:
        return f"<HandlerHandle {self._registration.event} {self._registration.name}>"


class StoreView(Generic[T]):
    """A read-only view of an informer's store (``informer.get_store()``): ``get``, ``list``, ``keys``,
    and ``get_by_key`` for those keys."""

    def __init__(self, view: InformerView[T]) -> None:
        self._view = view

    def get(self, name: str, namespace: str | None = None) -> T | None:
        return self._view.get(name, namespace)

    def list(self, namespace: str | None = None) -> builtins.list[T]:
        return self._view.list(namespace)

    def get_by_key(self, key: str) -> T | None:
        """The object under a key as ``keys()`` gives them (``namespace/name``, or ``name``), as
        client-go's ``GetByKey``."""
        if not isinstance(key, str):
            raise TypeError(f"a store key is a str ('namespace/name' or 'name'), got {type(key).__name__}")
        namespace, _, name = key.rpartition("/")
        if self._view._outside_scope(namespace):
            return None  # a key, as client-go's: not in this store (get() names the scope instead)
        return self._view.get(name, namespace or None)

    def keys(self) -> builtins.list[str]:
        """``namespace/name`` (or ``name`` for cluster-scoped objects), as client-go's store keys."""
        namespace = self._view._namespace
        return [_key_text(k) for k in self._view._informer.store.keys() if not namespace or k[0] == namespace]

    def __len__(self) -> int:
        return len(self.keys())

    def __repr__(self) -> str:
        return f"<StoreView {self._view._informer.key.describe()}>"


def _key_text(key: Key) -> str:
    return f"{key[0]}/{key[1]}" if key[0] else key[1]


_view_numbers = itertools.count(1)


class InformerView(Generic[T]):
    """Local reads and handler registration over one shared informer (sync and async views share it).

    Every ``get_informer()`` call returns a new view; the handlers registered on one view share one
    ordered lane (created at the first registration), so they see each object's events in order,
    and a slow view never delays another view or the cache.
    """

    def __init__(self, informer: Informer[T], namespace: str | None = None) -> None:
        self._informer = informer
        self._namespace = namespace
        self._lane: Lane | None = None
        self._view_number = next(_view_numbers)

    def _new_lane(self, name: str) -> Lane:
        return ThreadLane(name)

    def _check_handler(self, event: str, func: Callable[..., Any]) -> None:
        pass

    @property
    def resource(self) -> Any:
        return self._informer.key.cls

    @property
    def namespace(self) -> str | None:
        return self._namespace or self._informer.key.namespace

    # -------------------------------------------------------------- handlers
    def _register(self, event: str, func: Callable[..., Any] | None) -> Any:
        if func is None:  # used with parentheses: @informer.on_add()
            return lambda f: self._register(event, f)
        return self._register_all([(event, func)])[0]

    def _registration(self, event: str, func: Any) -> Registration:
        if not callable(func):
            raise TypeError(f"on_{event} expects a callable, got {type(func).__name__}")
        self._check_handler(event, func)
        handler = func
        if self._namespace and self._namespace != self._informer.key.namespace:
            handler = _in_namespace(func, self._namespace)
        name = f"{self._informer.name}:{getattr(func, '__qualname__', type(func).__name__)}"
        return Registration(event, handler, name)

    def _register_all(
        self, handlers: builtins.list[tuple[str, Any]], replay: bool = True
    ) -> builtins.list[HandlerHandle]:
        registrations = [self._registration(event, func) for event, func in handlers]  # checks all first
        if self._lane is None:
            self._lane = self._new_lane(f"{self._informer.name}#{self._view_number}")
        self._informer.register(self._lane, *registrations, replay=replay)
        return [HandlerHandle(self._informer, self._lane, r) for r in registrations]

    def add_event_handler(
        self,
        on_add: Callable[..., Any] | None = None,
        on_update: Callable[..., Any] | None = None,
        on_delete: Callable[..., Any] | None = None,
        *,
        replay: bool = True,
    ) -> builtins.list[HandlerHandle]:
        """Register several handlers in one step, as client-go's ``AddEventHandler``: on a running
        informer no event can arrive between their registrations (``on_add``, then ``on_delete``
        separately could miss a delete in between). Returns their handles, in that order.
        ``replay=False``: no adds for the objects already cached, only the changes from now on."""
        handlers = [
            (event, func)
            for event, func in (("add", on_add), ("update", on_update), ("delete", on_delete))
            if func is not None
        ]
        if not handlers:
            raise TypeError("add_event_handler() needs at least one of on_add, on_update, on_delete")
        return self._register_all(handlers, replay)

    @overload
    def on_add(self, func: F) -> HandlerHandle: ...
    @overload
    def on_add(self, func: None = None) -> Callable[[F], HandlerHandle]: ...
    def on_add(self, func: Callable[..., Any] | None = None) -> Any:
        """Register ``func(obj)`` for added objects (and every object already cached)."""
        return self._register("add", func)

    @overload
    def on_update(self, func: F) -> HandlerHandle: ...
    @overload
    def on_update(self, func: None = None) -> Callable[[F], HandlerHandle]: ...
    def on_update(self, func: Callable[..., Any] | None = None) -> Any:
        """Register ``func(old, new)`` for changed objects (and resync re-deliveries)."""
        return self._register("update", func)

    @overload
    def on_delete(self, func: F) -> HandlerHandle: ...
    @overload
    def on_delete(self, func: None = None) -> Callable[[F], HandlerHandle]: ...
    def on_delete(self, func: Callable[..., Any] | None = None) -> Any:
        """Register ``func(obj)`` for deleted objects (last known state, also after a relist)."""
        return self._register("delete", func)

    # ------------------------------------------------------------------ reads
    def list(
        self, namespace: str | None = None, label_selector: str | None = None, field_selector: str | None = None
    ) -> builtins.list[T]:
        """Cached objects (shared, read-only), optionally of one namespace and matching selectors."""
        if self.resource.namespaced:
            namespace = namespace or self._namespace
            self._check_scope(namespace, "list")
        else:
            namespace = None
        if field_selector:  # the API server's 400 for a field the kind cannot be selected on, never []
            check_field_selector(self.resource, field_selector)
        objs = self._informer.store.list(namespace)
        return filter_objects(objs, label_selector, field_selector)

    def _outside_scope(self, namespace: str | None) -> bool:
        """Is ``namespace`` one this informer does not watch?"""
        return bool(namespace) and not in_scope(self._informer.key.namespace, namespace)

    def _check_scope(self, namespace: str | None, what: str) -> None:
        """A namespace this informer does not watch is an error, never a silent miss."""
        if self._outside_scope(namespace):
            raise ValueError(
                f"{what}(namespace={namespace!r}): the namespace is outside this informer's scope "
                f"(it watches only {self._informer.key.namespace!r})"
            )

    def get(self, name: str, namespace: str | None = None) -> T | None:
        """The cached object, or None. The namespace defaults to the informer's own."""
        cls = self.resource
        if cls.namespaced:
            namespace = namespace or self.namespace
            if not namespace:
                raise ValueError(
                    f"{cls.kind} is namespaced and this informer watches all namespaces: "
                    f"pass namespace= to get({name!r})"
                )
            self._check_scope(namespace, "get")
        else:
            namespace = None
        return self._informer.store.get(namespace, name)

    def set_watch_error_handler(self, handler: Callable[[str, BaseException], Any] | None) -> None:
        """Call ``handler(informer name, error)`` at each failure of the informer's list or watch
        (client-go's ``SetWatchErrorHandler``), on its reflector thread, no lock held; the
        reflector logs the error and retries as before, and logs what the handler raises. The
        informer is shared: this replaces the handler for every view of it (and the cache's
        ``watch_error_handler``); None removes it."""
        if handler is not None and not callable(handler):
            raise TypeError(f"set_watch_error_handler expects a callable or None, got {type(handler).__name__}")
        self._informer.watch_error_handler = handler

    def has_synced(self) -> bool:
        return self._informer.has_synced()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Block until synced (True) or ``timeout`` (False); raises a hard 401/403/404 at once."""
        return self._informer.wait_for_sync(timeout)

    def get_store(self) -> StoreView[T]:
        """A read-only view of the store (``get``, ``list``, ``keys``), as cloudcoil's ``get_store()``."""
        return StoreView(self)

    def add_index(self, name: str, func: IndexFunc) -> None:
        """Add an index: ``func(obj)`` returns one key (str), an iterable of keys, or None.

        It runs under the store lock: keep it pure and fast.
        """
        self._informer.store.add_index(name, func)

    def get_by_index(self, name: str, value: str) -> builtins.list[T]:
        return self._informer.store.get_by_index(name, value)

    def list_index_keys(self, name: str) -> builtins.list[str]:
        return self._informer.store.list_index_keys(name)

    def status(self) -> Any:
        return self._informer.status()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._informer.key.describe()}>"


class SyncInformer(InformerView[T]):
    """A sync view: the view's handlers run in event order on one thread of their own."""

    def _check_handler(self, event: str, func: Callable[..., Any]) -> None:
        if inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(getattr(func, "__call__", None)):
            raise TypeError(
                f"on_{event}: {getattr(func, '__qualname__', func)!r} is a coroutine function, and this is a "
                "sync informer (its handlers run on a thread and the coroutine would never be awaited); "
                "use get_informer(Kind, sync=False) for async handlers"
            )


def _in_namespace(func: Callable[..., Any], namespace: str) -> Callable[..., Any]:
    """Wrap a handler so that it sees only objects of ``namespace`` (a namespaced view of a wider informer)."""
    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def coroutine_handler(*args: Any) -> Any:
            if args[-1].metadata.namespace == namespace:
                return await func(*args)
            return None

        return coroutine_handler

    @functools.wraps(func)
    def handler(*args: Any) -> Any:
        if args[-1].metadata.namespace == namespace:
            return func(*args)
        return None

    return handler
