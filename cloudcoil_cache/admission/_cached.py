"""``request.cached(Kind)``: strict reads of the webhook Config's own informers, and whether they can serve."""

from __future__ import annotations

from typing import Any, TypeVar

from cloudcoil_cache.caching import Cache, InformerState
from cloudcoil_cache.client import Config
from cloudcoil_cache.client._kind_reader import KindReader, ReadCounter
from cloudcoil_cache.errors import CacheSyncTimeout
from cloudcoil_cache.models import PartialObjectMetadata

__all__ = ["AdmissionCache", "CachedKind"]

T = TypeVar("T")

_REFUSED = "Admission cached reads require a preconfigured Config cache resource"


def _name(cls: Any) -> str:
    """``Secret``, or ``PartialObjectMetadata.of(Secret)`` for a metadata class."""
    of = getattr(cls, "metadata_of", None)
    return f"PartialObjectMetadata.of({of.__name__})" if of is not None else str(cls.kind)


class CachedKind(KindReader[T]):
    """Reads of one kind from the webhook's cache, as a controller's ``ctx.cached`` reads (one
    ``KindReader``, a view of the kind's ``caching.CacheReader``): deep editable copies, None on a
    miss, ``CacheUnavailableError`` when the informer cannot serve. ``namespace`` defaults to the
    request's."""

    def __init__(self, cls: Any, config: Config, default_namespace: str | None, count: ReadCounter) -> None:
        cache = config.cache
        super().__init__(
            cls,
            config,
            watched=None if cache is None else cache.namespace,
            selector=None if cache is None else cache.settings_for(cls).label_selector or None,
            default_namespace=default_namespace,
            owner="the admission cache",
            no_namespace="the request has no namespace",
            count=count,
        )

    def __repr__(self) -> str:
        return f"<admission CachedKind {self.resource.kind}>"


class AdmissionCache:
    """The informers admission handlers read: those of ``config.cache``'s ``resources`` (cloudcoil 0.8's rule)
    and of its ``metadata_only`` kinds, read as ``PartialObjectMetadata.of(Kind)`` (as a controller's
    ``ctx.cached`` reads a kind it watches as metadata only)."""

    def __init__(self, config: Config | None, count: ReadCounter) -> None:
        self._config = config
        self._count = count

    @property
    def cache(self) -> Cache | None:
        config = self._config
        cache = None if config is None else config.cache
        return cache if cache is not None and cache.enabled else None

    def kinds(self) -> list[Any]:
        """The classes ``request.cached`` reads: each cached kind, or ``PartialObjectMetadata.of(kind)``
        for one cached as metadata only (its informer holds that, never whole objects)."""
        cache = self.cache
        if cache is None:
            return []
        kinds = dict.fromkeys([*(cache.resources or ()), *cache.options.metadata_only])
        return [
            PartialObjectMetadata.of(c) if cache.settings_for(c).metadata_only else c
            for c in kinds
            if cache.settings_for(c).enabled
        ]

    def reader(self, cls: Any, namespace: str | None) -> CachedKind[Any]:
        """``request.cached(cls)`` (ValueError, with the readable kinds, when ``cls`` is not cached; a
        kind cached as metadata only is read as ``PartialObjectMetadata.of(Kind)``, never whole)."""
        kinds = self.kinds()
        kind_class = getattr(cls, "__editable_class__", cls)
        if kind_class not in kinds or self._config is None:
            readable = ", ".join(sorted(_name(k) for k in kinds)) or "none"
            if any(getattr(k, "metadata_of", None) is kind_class for k in kinds):
                why = (
                    f"{kind_class.kind!r} is cached as metadata only: read request.cached("
                    f"PartialObjectMetadata.of({kind_class.__name__})), or request.client({kind_class.__name__}) "
                    "for the whole object"
                )
            else:
                why = f"{_name(kind_class) if getattr(kind_class, 'kind', None) else cls!r} is not one"
            raise ValueError(f"{_REFUSED} ({why}; readable: {readable})")
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
            elif status.state in (InformerState.STALE, InformerState.FAILING):
                problems.append(f"{status.kind}: {status.state} ({status.last_error or 'no detail'})")
        return "; ".join(problems) or None
