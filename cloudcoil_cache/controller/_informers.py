"""The informers of one controller: one per kind at the widest scope asked for, shared with
``config.cache`` when it already has the same one, else in caches of the controller's own."""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from typing import Any, Callable, Iterable

import attrs

from cloudcoil_cache.caching import Cache, HandlerHandle, InformerState, InformerStatus, InformerView
from cloudcoil_cache.caching._options import NamespaceSet
from cloudcoil_cache.caching._selector import move_set
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import CacheSyncTimeout

__all__ = ["InformerSet", "Scope", "SetView", "Source", "widest"]

log = logging.getLogger(__name__)

#: How often a cancellable wait for the informers' sync looks at its cancel event (seconds).
_CANCEL_CHECK = 0.1


@attrs.frozen
class Scope:
    """What one informer watches: a kind, one namespace or all (``None``), and a label selector.

    ``shard``: the shard requirement of a sharded controller's kind (``shard.cloudcoil.dev/<ring>=<me>``),
    already ANDed into ``label_selector``; it survives ``widest()``."""

    cls: Any
    namespace: str | None
    label_selector: str | None = None
    shard: str | None = None

    def describe(self) -> str:
        where = "" if not self.cls.namespaced else f" in {self.namespace or 'all namespaces'}"
        return f"{self.cls.kind}{where}" + (f" [{self.label_selector}]" if self.label_selector else "")


def widest(scopes: Iterable[Scope]) -> Scope:
    """One scope that covers all of ``scopes`` (all of the same kind). Different selectors widen to none,
    except for a sharded kind: its shard requirement stays (the common part of every selector), and
    scopes of one kind with different shard requirements are refused (``ValueError``)."""
    scopes = list(scopes)
    cls = scopes[0].cls
    namespaces = {s.namespace for s in scopes}
    selectors = {s.label_selector for s in scopes}
    shards = {s.shard for s in scopes}
    if len(shards) > 1:
        raise ValueError(
            f"{cls.kind}: one informer cannot cover different shard requirements ({sorted(map(str, shards))}): "
            "a kind is sharded by one ring in a controller"
        )
    shard = shards.pop()
    namespace = namespaces.pop() if len(namespaces) == 1 and cls.namespaced else None
    return Scope(cls, namespace, selectors.pop() if len(selectors) == 1 else shard, shard)


@attrs.define
class Source:
    """One informer the controller reads: its scope, a view of its own, and the Config that owns it."""

    scope: Scope
    config: Config
    view: InformerView[Any] | SetView
    shared: bool

    def describe(self) -> str:
        """The scope, naming the namespaces of a set now (``ConfigMap in namespaces a, b``)."""
        view = self.view
        if isinstance(view, SetView):
            where = ", ".join(view.namespaces) or "no namespace yet"
            selector = self.scope.label_selector
            return f"{self.scope.cls.kind} in namespaces {where}" + (f" [{selector}]" if selector else "")
        return self.scope.describe()


def _cache_has(cache: Cache | None, scope: Scope) -> bool:
    """Does ``cache`` hold (or create on demand) exactly the informer ``scope`` describes?"""
    if cache is None or not cache.enabled:
        return False
    cls = scope.cls
    if cache.resources is not None and cls not in cache.resources:
        return False
    settings = cache.settings_for(cls)
    if not settings.enabled or settings.field_selector:
        return False
    if (settings.label_selector or None) != scope.label_selector:
        return False
    spread = cache.namespace_set(cls) if cls.namespaced else None
    if spread is not None:  # a cache over a set: the whole set, or one namespace of it
        return scope.namespace is None or scope.namespace in spread
    return not cls.namespaced or cache.namespace == scope.namespace


#: How long detaching a removed namespace's handlers waits for a handler call in flight (seconds;
#: its informer is stopped already, so nothing follows it).
_DETACH_TIMEOUT = 1.0


@attrs.define(eq=False)
class _Registration:
    """Handlers added to a ``SetView``: their handles on each namespace's view, and the replay asked."""

    handlers: tuple[Any, ...]
    replay: bool
    handles: dict[str, list[HandlerHandle]] = attrs.field(factory=dict)


class _SetHandle(HandlerHandle):
    """The handle of handlers added to a ``SetView``: on the views of every namespace of the set,
    those added later included; ``remove()`` removes them from all."""

    def __init__(self, view: SetView, registration: _Registration) -> None:  # (no informer of its own)
        self._view = view
        self._set_registration = registration

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._set_registration.handlers[0](*args, **kwargs)

    def remove(self, timeout: float | None = None) -> bool:
        return self._view._remove(self._set_registration, timeout)

    def has_synced(self) -> bool:
        return all(h.has_synced() for handles in self._handles() for h in handles)

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        for handles in self._handles():
            for handle in handles:
                if not handle.wait_for_sync(None if deadline is None else max(deadline - time.monotonic(), 0.0)):
                    return False
        return True

    def _handles(self) -> list[list[HandlerHandle]]:
        with self._view._lock:
            return list(self._set_registration.handles.values())


class SetView:
    """The views of a kind's informers over a cache's set of namespaces, as one view (what a
    controller asks of a view: handlers, sync, status, get, list), following the set: ``follow()``
    (called by the ``InformerSet`` after each change of the set) attaches every handler added so
    far to a new namespace's view, replaying its objects, and detaches them from a removed one's
    (whose informer the cache stopped: no delete events, its objects leave the controller's view).

    Thread safety: ``_lock`` guards the views and the registrations; ``views`` is replaced whole
    (read without the lock). Never held while removing a handler (which may wait for one in flight).
    """

    def __init__(self, cache: Cache, cls: Any) -> None:
        self._cache = cache
        self._cls = cls
        self._lock = threading.Lock()
        #: each namespace of the set now → its informer's view (replaced whole at each change)
        self.views: dict[str, InformerView[Any]] = {}
        self._registrations: list[_Registration] = []
        self.follow()

    @property
    def namespaces(self) -> tuple[str, ...]:
        """The namespaces the view covers now."""
        return tuple(self.views)

    def covers(self, namespace: str | None) -> bool:
        """Is ``namespace`` one of the set now?"""
        return namespace in self.views

    def follow(self) -> tuple[list[str], list[str]]:
        """Make the views those of the kind's set in the cache now: (namespaces added, removed)."""
        gone: list[HandlerHandle] = []
        with self._lock:
            wanted = self._cache.namespace_set(self._cls) or ()
            views: dict[str, InformerView[Any]] = {}
            added: list[str] = []
            for namespace in wanted:
                view = self.views.get(namespace)
                if view is None:
                    try:
                        view = self._cache.get_informer(self._cls, sync=True, namespace=namespace)
                    except ValueError:  # removed from the set meanwhile: the next follow() sees it
                        view = None
                    if view is None:
                        continue
                    added.append(namespace)
                views[namespace] = view
            removed = [ns for ns in self.views if ns not in views]
            for registration in self._registrations:
                for namespace in removed:
                    gone += registration.handles.pop(namespace, [])
                for namespace in added:  # its objects replayed as adds (when the registration asked for it)
                    registration.handles[namespace] = views[namespace].add_event_handler(
                        *registration.handlers, replay=registration.replay
                    )
            self.views = views
        for handle in gone:
            handle.remove(_DETACH_TIMEOUT)
        return added, removed

    def add_event_handler(self, *handlers: Any, replay: bool = True) -> list[HandlerHandle]:
        registration = _Registration(tuple(handlers), replay)
        with self._lock:
            try:
                for namespace, view in self.views.items():
                    registration.handles[namespace] = view.add_event_handler(*handlers, replay=replay)
            except BaseException:
                for handles in registration.handles.values():
                    for handle in handles:
                        handle.remove(0)
                raise
            self._registrations.append(registration)
        return [_SetHandle(self, registration)]

    def _remove(self, registration: _Registration, timeout: float | None) -> bool:
        with self._lock:
            if registration in self._registrations:
                self._registrations.remove(registration)
            handles = [h for group in registration.handles.values() for h in group]
            registration.handles.clear()
        deadline = None if timeout is None else time.monotonic() + timeout
        done = True
        for handle in handles:
            done = handle.remove(None if deadline is None else max(deadline - time.monotonic(), 0.0)) and done
        return done

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """The set settled (a ``NamespaceSelector``'s Namespaces listed), then every namespace's view synced."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._cache.settle_namespaces(timeout):
            return False
        self.follow()
        for view in list(self.views.values()):
            left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            if not view.wait_for_sync(left):
                return False
        return True

    def status(self) -> Any:
        """The first namespace's status, synced only when every one is (and the set settled),
        naming the first error; an empty set's: synced once settled, no object."""
        statuses = [view.status() for view in self.views.values()]
        settled = self._cache.namespaces_listed()
        if not statuses:
            cls = self._cls
            started = self._cache.started
            state = InformerState.CURRENT if settled else InformerState.SYNCING
            state = state if started else InformerState.STOPPED
            return InformerStatus(
                kind=cls.kind,
                api_version=cls.api_version,
                namespace=None,
                label_selector="",
                field_selector="",
                started=started,
                synced=settled and started,
                state=state,
                seconds_since_current=None,
                object_count=0,
                resource_version=None,
                last_sync_time=None,
                relist_count=0,
                evictions=0,
                complete=True,
                last_error=None,
                handler_backlogs={},
            )
        first = next((s for s in statuses if not s.synced or s.last_error), statuses[0])
        return attrs.evolve(
            first,
            namespace=None,
            synced=settled and all(s.synced for s in statuses),
            object_count=sum(s.object_count for s in statuses),
        )

    def get(self, name: str, namespace: str | None = None) -> Any:
        view = self.views.get(namespace or "")
        return None if view is None else view.get(name, namespace)

    def list(self, namespace: str | None = None) -> list[Any]:
        if namespace is not None:
            view = self.views.get(namespace)
            return [] if view is None else view.list(namespace)
        return [obj for view in self.views.values() for obj in view.list()]


def _config_with_cache(config: Config, cache: Cache) -> Config:
    """A Config with ``config``'s connection settings (and discovered credentials) and ``cache``."""
    return config.with_cache(cache)


class InformerSet:
    """Creates, starts and stops the informers of one controller; maps kinds to them.

    ``scopes`` holds every scope asked for (primary, owned, watched); each kind gets one informer at
    the widest of its scopes (the controller filters the primary's events by its own scope).
    """

    def __init__(
        self,
        name: str,
        config: Config,
        scopes: Iterable[Scope],
        *,
        resync_period: float | None,
        sync_timeout: float = 30.0,
    ) -> None:
        self.name = name
        self.config = config
        self.sync_timeout = sync_timeout
        by_kind: dict[Any, list[Scope]] = {}
        for scope in scopes:
            by_kind.setdefault(scope.cls, []).append(scope)
        self.scopes = {cls: widest(group) for cls, group in by_kind.items()}
        self.sources: dict[Any, Source] = {}
        self._contexts: list[tuple[Config, contextvars.Context]] = []
        self._unshare: list[Callable[[], None]] = []
        #: our own caches over ``config.cache``'s set: they follow it (``follow``)
        self._following: list[Cache] = []
        #: our own caches over ``config.cache``'s ``NamespaceSelector`` when no informer of ours is in
        #: ``config.cache`` (nothing starts it then): each follows the selector itself
        self._selecting: list[Cache] = []
        self._follow_lock = threading.Lock()  # one ``follow`` at a time
        own: dict[str | None, list[Scope]] = {}  # namespace → scopes for a cache of our own
        for scope in self.scopes.values():
            if _cache_has(config.cache, scope):
                self.sources[scope.cls] = self._source(scope, config, shared=True)
            else:
                own.setdefault(scope.namespace if scope.cls.namespaced else None, []).append(scope)
        if own:
            # A cluster-scoped kind fits in any cache: put those in the first one.
            cluster_scoped = [s for s in own.get(None, []) if not s.cls.namespaced]
            if len(own) > 1 and cluster_scoped:
                own[None] = [s for s in own[None] if s.cls.namespaced]
                if not own[None]:
                    del own[None]
                next(iter(own.values())).extend(cluster_scoped)
            tuning = config.cache.tuning if config.cache is not None else None
            shared_set = config.cache.namespaces if config.cache is not None else None
            selector = config.cache.namespace_selector if config.cache is not None and not self.sources else None
            for namespace, group in own.items():
                # (a group of cluster-scoped kinds only has no set to follow)
                follows = namespace is None and shared_set is not None and any(s.cls.namespaced for s in group)
                cache = Cache(
                    resources=[s.cls for s in group],
                    # over a cache's set: the controller's own informers watch the same set, and follow it
                    namespaces=(selector or NamespaceSet(shared_set or ())) if follows else namespace,
                    per_resource={s.cls: {"label_selector": s.label_selector} for s in group},
                    resync_period=resync_period,
                    wait_for_sync=False,  # start() waits for every informer, and can be cancelled
                    sync_timeout=sync_timeout,
                    mode="strict",
                    tuning=tuning,
                )
                if follows:
                    (self._selecting if selector is not None else self._following).append(cache)
                own_config = _config_with_cache(config, cache)
                for scope in group:
                    self.sources[scope.cls] = self._source(scope, own_config, shared=False)

    @staticmethod
    def _source(scope: Scope, config: Config, *, shared: bool) -> Source:
        cache = config.cache
        assert cache is not None
        spread = cache.namespace_set(scope.cls) if scope.cls.namespaced else None
        view: InformerView[Any] | SetView | None
        if spread is not None and scope.namespace is None:  # every namespace of the set, following it
            view = SetView(cache, scope.cls) if cache.enabled else None
        else:
            view = cache.get_informer(scope.cls, sync=True, namespace=scope.namespace if spread else None)
        if view is None:  # a disabled cache (never chosen for sharing)
            raise RuntimeError(f"no informer for {scope.describe()}: the cache is disabled")
        return Source(scope, config, view, shared)

    def configs(self) -> list[Config]:
        """Every Config whose cache holds one of the informers (the given one first, when shared)."""
        seen: list[Config] = []
        for source in sorted(self.sources.values(), key=lambda s: not s.shared):
            if not any(c is source.config for c in seen):
                seen.append(source.config)
        return seen

    # -------------------------------------------------------------- lifecycle
    def start(self, cancel: threading.Event | None = None) -> bool:
        """Enter a scope of every Config (starting their informers) and wait for every informer's sync.

        A hard failure (401/403/404) fails at once with the informer's error; otherwise
        ``CacheSyncTimeout`` after ``sync_timeout``. On failure, what was started is stopped. Setting
        ``cancel`` (a Manager's stop) ends the wait within ``_CANCEL_CHECK`` seconds: what was started
        is stopped and False returned (the wait of a shared cache's own scope, set by its options, is
        not cut short).
        """
        try:
            shared = self.config.cache
            if shared is not None and (self._following or self._set_views()):  # the set may change while we run
                self._unshare.append(shared.on_namespaces_changed(self._on_set_changed))
            self._unshare += [cache.on_namespaces_changed(self._on_set_changed) for cache in self._selecting]
            caches = [c.cache for c in self.configs() if c.cache is not None]
            for cache in caches:  # a reconcile writes through one Config and reads through all of them
                self._unshare += [cache.share_writes_with(other) for other in caches if other is not cache]
            for config in self.configs():
                context = contextvars.Context()
                context.run(config.activate)
                self._contexts.append((config, context))
            deadline = time.monotonic() + self.sync_timeout
            if shared is not None and self._following:  # a NamespaceSelector's set, for our own caches too
                shared.settle_namespaces(self.sync_timeout)
            for cache in self._selecting:
                cache.settle_namespaces(max(deadline - time.monotonic(), 0.0))
            self.follow()
            for source in self.sources.values():
                if not self._wait_synced(source, deadline, cancel):
                    self.stop()
                    return False
        except BaseException:
            self.stop()
            raise
        return True

    def _wait_synced(self, source: Source, deadline: float, cancel: threading.Event | None) -> bool:
        """Wait for ``source``'s sync until ``deadline``: True once synced, False when ``cancel`` is set."""
        while True:
            if cancel is not None and cancel.is_set():
                return False
            remaining = max(deadline - time.monotonic(), 0.0)
            step = remaining if cancel is None else min(remaining, _CANCEL_CHECK)
            if source.view.wait_for_sync(step):
                return True
            if step >= remaining:
                error = source.view.status().last_error
                raise CacheSyncTimeout(
                    f"controller {self.name!r}: {source.describe()} did not sync within "
                    f"{self.sync_timeout:g}s" + (f" (last error: {error})" if error is not None else "")
                )

    def _set_views(self) -> list[SetView]:
        return [s.view for s in self.sources.values() if isinstance(s.view, SetView)]

    def _on_set_changed(self, namespace: str, added: bool) -> None:
        """``config.cache``'s set changed: follow it."""
        self.follow()

    def follow(self) -> None:
        """Make our informers follow ``config.cache``'s sets now: our own caches over its set get its
        namespaces (their informers made and started, or stopped), then each view over a set attaches
        the controller's handlers to a new namespace's informer (replaying its objects) and detaches
        them from a removed one's."""
        shared = self.config.cache
        moved: list[tuple[Source, Any, Any]] = []
        with self._follow_lock:  # one change of the set followed at a time
            wanted = (shared.namespaces if shared is not None else None) or ()
            for cache in self._following:
                move_set(cache.namespaces or (), wanted, cache.add_namespace, cache.remove_namespace)
            for source in self.sources.values():
                if isinstance(source.view, SetView):
                    added, removed = source.view.follow()
                    if added or removed:
                        moved.append((source, added, removed))
        for source, added, removed in moved:  # logged after the lock
            log.info(
                "controller %r: %s now (added %s, removed %s)",
                self.name,
                source.describe(),
                added or "none",
                removed or "none",
            )

    def stop(self) -> None:
        """Leave the scopes (the last scope of a cache stops its informers and joins their threads)."""
        while self._unshare:
            self._unshare.pop()()
        while self._contexts:
            config, context = self._contexts.pop()
            try:
                context.run(config.deactivate)
            except Exception:  # never leave the other scopes open because one failed to close
                log.exception("controller %r: stopping the informers of %r failed", self.name, config)

    def context_for(self, config: Config) -> contextvars.Context:
        """A copy of the context in which ``config`` is active (for a worker thread)."""
        for started, context in self._contexts:
            if started is config:
                return context.copy()
        raise RuntimeError(f"controller {self.name!r}: the informers are not started")

    def close(self) -> None:
        """Close the Configs of our own (their connection pools)."""
        for config in self.configs():
            if config is not self.config:
                config.close()
