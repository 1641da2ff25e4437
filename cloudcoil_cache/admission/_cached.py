"""``request.cached(Kind)``: strict reads of the webhook Config's own informers, and whether they can serve."""

from __future__ import annotations

from typing import Any, Callable, Generic, Mapping, TypeVar

from cloudcoil_cache._listwatch import ListOptions
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.caching._policy import Mode, in_scope
from cloudcoil_cache.client import Config
from cloudcoil_cache.client._reads import cached_get, cached_list
from cloudcoil_cache.errors import CacheSyncTimeout, CacheUnavailableError, ResourceNotFound

__all__ = ["AdmissionCache", "CachedKind"]

T = TypeVar("T")

#: Called with (kind, result) for every read: result is "hit", "miss" or "unavailable".
ReadCounter = Callable[[str, str], None]

_REFUSED = "Admission cached reads require a preconfigured Config cache resource"


class CachedKind(Generic[T]):
    """Reads of one kind from the webhook's cache, as a controller's ``ctx.cached`` reads
    (``client._reads`` in strict mode): deep editable copies, None on a miss, ``CacheUnavailableError``
    when the informer cannot serve. ``namespace`` defaults to the request's."""

    def __init__(self, cls: Any, config: Config, default_namespace: str | None, count: ReadCounter) -> None:
        self._cls = cls
        self._config = config
        self._default_namespace = default_namespace
        self._count = count

    @property
    def resource(self) -> Any:
        return self._cls

    def __repr__(self) -> str:
        return f"<admission CachedKind {self._cls.kind}>"

    def _watched(self) -> str | None:
        cache = self._config.cache
        return None if cache is None else cache.namespace

    def _namespace(self, namespace: str | None) -> str | None:
        cls = self._cls
        if not cls.namespaced:
            return None
        watched = self._watched()
        namespace = namespace or self._default_namespace or watched
        if not namespace:
            raise ValueError(f"{cls.kind} is namespaced and the request has no namespace: pass namespace=")
        if not in_scope(watched, namespace):
            raise ValueError(f"{cls.kind} in namespace {namespace!r}: the admission cache watches only {watched!r}")
        return namespace

    def _selector(self) -> str | None:
        cache = self._config.cache
        return None if cache is None else cache.settings_for(self._cls).label_selector or None

    def get(self, name: str, namespace: str | None = None) -> T | None:
        """A deep copy of the cached object, or None (outside the informer's label selector too)."""
        client = self._cls.client(self._config, cached=True)
        try:
            obj = cached_get(client, name, self._namespace(namespace), mode=Mode.STRICT, selector_is_scope=True)
        except ResourceNotFound:
            self._count(self._cls.kind, "miss")
            return None
        except CacheUnavailableError:
            self._count(self._cls.kind, "unavailable")
            raise
        self._count(self._cls.kind, "hit")
        copied: T = obj.copy()
        return copied

    def list(
        self, namespace: str | None = None, *, all_namespaces: bool = False, labels: Mapping[str, str] | None = None
    ) -> list[T]:
        """Deep copies of the cached objects of one namespace (or all the informer watches) whose
        labels include every pair of ``labels``."""
        cls = self._cls
        if namespace is not None and all_namespaces:
            raise ValueError("namespace and all_namespaces are mutually exclusive")
        ns = self._watched() if all_namespaces or not cls.namespaced else self._namespace(namespace)
        try:
            result = cached_list(
                cls.client(self._config, cached=True),
                ListOptions(ns, ns is None, self._selector()),
                mode=Mode.STRICT,
            )
        except CacheUnavailableError:
            self._count(cls.kind, "unavailable")
            raise
        wanted = dict(labels or {})
        found = [
            obj.copy()
            for obj in result.items
            if all((obj.metadata.labels or {}).get(k) == v for k, v in wanted.items())
        ]
        self._count(cls.kind, "hit" if found else "miss")
        return found


class AdmissionCache:
    """The informers admission handlers read: those of ``config.cache``'s ``resources`` (cloudcoil 0.8's rule)."""

    def __init__(self, config: Config | None, count: ReadCounter) -> None:
        self._config = config
        self._count = count

    @property
    def cache(self) -> Cache | None:
        config = self._config
        cache = None if config is None else config.cache
        return cache if cache is not None and cache.enabled else None

    def kinds(self) -> list[Any]:
        cache = self.cache
        return [] if cache is None else [c for c in cache.resources or () if cache.settings_for(c).enabled]

    def reader(self, cls: Any, namespace: str | None) -> CachedKind[Any]:
        """``request.cached(cls)`` (ValueError, with the readable kinds, when ``cls`` is not cached)."""
        kinds = self.kinds()
        kind_class = getattr(cls, "__editable_class__", cls)
        if kind_class not in kinds or self._config is None:
            readable = ", ".join(sorted(k.kind for k in kinds)) or "none"
            raise ValueError(f"{_REFUSED} ({getattr(cls, 'kind', cls)!r} is not one; readable: {readable})")
        return CachedKind(kind_class, self._config, namespace, self._count)

    def wait_synced(self, timeout: float) -> None:
        """Wait until every admission informer synced (a hard failure raises at once)."""
        cache = self.cache
        if cache is None:
            return
        informers = [i for i in (cache.informer_for(k) for k in self.kinds()) if i is not None]
        try:
            cache.wait_synced(informers, timeout)
        except CacheSyncTimeout as exc:
            raise CacheSyncTimeout(f"admission: the cache did not sync within {timeout:g}s ({exc})") from None

    def readiness(self) -> str | None:
        """None when every admission informer can serve, else which cannot and why."""
        cache = self.cache
        if cache is None:
            return None
        if not cache.started:
            return "admission cache not started"
        kinds = {k.kind for k in self.kinds()}
        problems = []
        for status in cache.status().informers:
            if status.kind not in kinds:
                continue
            if not status.synced:
                problems.append(f"{status.kind}: not synced")
            elif status.state in ("stale", "failing"):
                problems.append(f"{status.kind}: {status.state} ({status.last_error or 'no detail'})")
        return "; ".join(problems) or None
