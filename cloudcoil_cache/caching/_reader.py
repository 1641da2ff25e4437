"""CachedResources: editable deep copies read from an informer (``ctx.cached``), never from the API."""

from __future__ import annotations

from typing import Any, Generic, Mapping, TypeVar

from cloudcoil_cache.caching._policy import InformerState
from cloudcoil_cache.caching._views import InformerView

__all__ = ["CachedResources"]

T = TypeVar("T")


class CachedResources(Generic[T]):
    """Reads of one kind from an informer view, as cloudcoil's ``CachedResources``.

    ``get``/``list`` return editable deep copies (``obj.copy()``), never call the API server and never
    fall back: a miss is ``None`` / ``[]``. An informer that is not running and synced raises
    ``RuntimeError("Informer is not running and synced")``; one whose watch stopped serving (a hard
    failure, or stale past ``max_staleness``) raises ``RuntimeError("Informer watch failed")`` from
    its error.
    """

    def __init__(self, informer: InformerView[T], namespace: str | None = None) -> None:
        self._view = informer
        self._namespace = namespace

    def _check(self) -> None:
        informer = self._view._informer
        if not informer.started or not informer.has_synced():
            raise RuntimeError("Informer is not running and synced")
        state, _ = informer.state()
        if state in (InformerState.FAILING, InformerState.STALE):
            raise RuntimeError("Informer watch failed") from informer.last_error

    def get(self, name: str, namespace: str | None = None) -> T | None:
        """A deep copy of the cached object, or None."""
        self._check()
        cls: Any = self._view.resource
        if cls.namespaced:
            namespace = namespace or self._namespace or self._view.namespace
            if not namespace:
                raise ValueError("Specify a namespace for a namespaced cache lookup")
        obj = self._view._informer.store.get(namespace if cls.namespaced else None, name)
        return None if obj is None else obj.copy()  # type: ignore[attr-defined]

    def list(
        self, namespace: str | None = None, *, all_namespaces: bool = False, labels: Mapping[str, str] | None = None
    ) -> list[T]:
        """Deep copies of the cached objects of a namespace (or all), with labels matching exactly."""
        self._check()
        cls: Any = self._view.resource
        if namespace and all_namespaces:
            raise ValueError("namespace and all_namespaces are mutually exclusive")
        if cls.namespaced and not all_namespaces:
            namespace = namespace or self._namespace or self._view.namespace
            if not namespace:
                raise ValueError("Specify namespace or all_namespaces=True")
        else:
            namespace = None
        objs = self._view._informer.store.list(namespace)
        if labels:
            wanted = dict(labels)
            objs = [
                o
                for o in objs
                if all(
                    (o.metadata.labels or {}).get(k) == v  # type: ignore[attr-defined]
                    for k, v in wanted.items()
                )
            ]
        return [o.copy() for o in objs]  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"<CachedResources {self._view._informer.key.describe()}>"
