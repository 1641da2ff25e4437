"""The informers of one controller: one per kind at the widest scope asked for, shared with
``config.cache`` when it already has the same one, else in caches of the controller's own."""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from typing import Any, Callable, Iterable

import attrs

from cloudcoil_cache.caching import Cache, InformerView
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


class SetView:
    """The views of a kind's informers over a cache's set of namespaces, as one view (what a
    controller asks of a view: handlers, sync, status, get, list). The set is the one at the start."""

    def __init__(self, views: list[InformerView[Any]], namespaces: tuple[str, ...]) -> None:
        self.views = dict(zip(namespaces, views))

    def add_event_handler(self, *handlers: Any, replay: bool = True) -> list[Any]:
        return [handle for view in self.views.values() for handle in view.add_event_handler(*handlers, replay=replay)]

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        for view in self.views.values():
            left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            if not view.wait_for_sync(left):
                return False
        return True

    def status(self) -> Any:
        """The first namespace's status, synced only when every one is, naming the first error."""
        statuses = [view.status() for view in self.views.values()]
        first = next((s for s in statuses if not s.synced or s.last_error), statuses[0])
        return attrs.evolve(
            first,
            namespace=None,
            synced=all(s.synced for s in statuses),
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
            for namespace, group in own.items():
                cache = Cache(
                    resources=[s.cls for s in group],
                    # over a cache's set: the controller's own informers watch the same set
                    namespaces=namespace if namespace is not None or shared_set is None else list(shared_set),
                    per_resource={s.cls: {"label_selector": s.label_selector} for s in group},
                    resync_period=resync_period,
                    wait_for_sync=False,  # start() waits for every informer, and can be cancelled
                    sync_timeout=sync_timeout,
                    mode="strict",
                    tuning=tuning,
                )
                own_config = _config_with_cache(config, cache)
                for scope in group:
                    self.sources[scope.cls] = self._source(scope, own_config, shared=False)

    @staticmethod
    def _source(scope: Scope, config: Config, *, shared: bool) -> Source:
        cache = config.cache
        assert cache is not None
        spread = cache.namespace_set(scope.cls) if scope.cls.namespaced else None
        view: InformerView[Any] | SetView | None
        if spread is not None and scope.namespace is None:  # every namespace of the set
            views = [cache.get_informer(scope.cls, sync=True, namespace=ns) for ns in spread]
            view = None if None in views else SetView([v for v in views if v is not None], spread)
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
            caches = [c.cache for c in self.configs() if c.cache is not None]
            for cache in caches:  # a reconcile writes through one Config and reads through all of them
                self._unshare += [cache.share_writes_with(other) for other in caches if other is not cache]
            for config in self.configs():
                context = contextvars.Context()
                context.run(config.activate)
                self._contexts.append((config, context))
            deadline = time.monotonic() + self.sync_timeout
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
                    f"controller {self.name!r}: {source.scope.describe()} did not sync within "
                    f"{self.sync_timeout:g}s" + (f" (last error: {error})" if error is not None else "")
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
