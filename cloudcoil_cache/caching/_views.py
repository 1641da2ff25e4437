"""Public informer views: handler registration (decorators returning handles) and local reads."""

from __future__ import annotations

import functools
from typing import Any, Callable, Generic, TypeVar, overload

from cloudcoil_cache._listwatch import parse_field_selector, parse_label_selector
from cloudcoil_cache.caching._dispatch import Listener
from cloudcoil_cache.caching._informer import Informer
from cloudcoil_cache.caching._store import IndexFunc, Notification, Updated

__all__ = ["HandlerHandle", "InformerView", "SyncInformer", "filter_objects", "handler_args", "sync_invoke"]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def filter_objects(objs: list[Any], label_selector: str | None, field_selector: str | None) -> list[Any]:
    """Evaluate label and field selectors in memory (full syntax)."""
    labels = parse_label_selector(label_selector)
    fields = parse_field_selector(field_selector)
    if labels.empty and fields.empty:
        return objs
    return [o for o in objs
            if labels.matches(o.metadata.labels) and (fields.empty or fields.matches(o))]


def handler_args(note: Notification) -> tuple[Any, ...]:
    """What a handler is called with: ``(old, new)`` for an update, ``(obj,)`` otherwise."""
    return (note.old, note.new) if isinstance(note, Updated) else (note.obj,)


def sync_invoke(handler: Callable[..., Any]) -> Callable[[Notification], None]:
    """Call a plain function for one notification."""
    def invoke(note: Notification) -> None:
        handler(*handler_args(note))
    return invoke


class HandlerHandle:
    """Returned by ``on_add``/``on_update``/``on_delete``: callable like the function, plus ``remove()``."""

    def __init__(self, informer: Informer[Any], listener: Listener) -> None:
        self._informer = informer
        self._listener = listener
        functools.update_wrapper(self, listener.handler)  # type: ignore[arg-type]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._listener.handler(*args, **kwargs)

    def remove(self) -> None:
        """Stop delivering events to this handler (idempotent); its current call finishes first."""
        self._informer.remove_listener(self._listener)

    @property
    def backlog(self) -> int:
        return self._listener.backlog

    def __repr__(self) -> str:
        return f"<HandlerHandle {self._listener.event} {self._listener.name}>"


class InformerView(Generic[T]):
    """Local reads and handler registration over one shared informer (sync and async views share it)."""

    def __init__(self, informer: Informer[T]) -> None:
        self._informer = informer

    @property
    def resource(self) -> type:
        return self._informer.key.cls

    @property
    def namespace(self) -> str | None:
        return self._informer.key.namespace

    # -------------------------------------------------------------- handlers
    def _invoke_for(self, handler: Callable[..., Any]) -> Callable[[Notification], None]:
        return sync_invoke(handler)

    def _register(self, event: str, func: Callable[..., Any] | None) -> Any:
        if func is None:  # used with parentheses: @informer.on_add()
            return lambda f: self._register(event, f)
        if not callable(func):
            raise TypeError(f"on_{event} expects a callable, got {type(func).__name__}")
        name = f"{self._informer.name}:{getattr(func, '__qualname__', type(func).__name__)}"
        listener = Listener(event, func, self._invoke_for(func), name)
        self._informer.add_listener(listener)
        return HandlerHandle(self._informer, listener)

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
    def list(self, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> list[T]:
        """Cached objects (shared, read-only), optionally of one namespace and matching selectors."""
        objs = self._informer.store.list(namespace if self.resource.namespaced else None)
        return filter_objects(objs, label_selector, field_selector)

    def get(self, name: str, namespace: str | None = None) -> T | None:
        """The cached object, or None. The namespace defaults to the informer's own."""
        cls = self.resource
        if cls.namespaced:
            namespace = namespace or self.namespace
            if not namespace:
                raise ValueError(f"{cls.kind} is namespaced and this informer watches all namespaces: "
                                 f"pass namespace= to get({name!r})")
        else:
            namespace = None
        return self._informer.store.get(namespace, name)

    def has_synced(self) -> bool:
        return self._informer.has_synced()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Block until synced (True) or ``timeout`` (False); raises a hard 401/403/404 at once."""
        return self._informer.wait_for_sync(timeout)

    def add_index(self, name: str, func: IndexFunc) -> None:
        """Add an index: ``func(obj) -> list of str`` (runs under the store lock: keep it pure and fast)."""
        self._informer.store.add_index(name, func)

    def get_by_index(self, name: str, value: str) -> list[T]:
        return self._informer.store.get_by_index(name, value)

    def list_index_keys(self, name: str) -> list[str]:
        return self._informer.store.list_index_keys(name)

    def status(self) -> Any:
        return self._informer.status()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._informer.key.describe()}>"


class SyncInformer(InformerView[T]):
    """A sync view: handlers run on their own threads, one per handler."""
