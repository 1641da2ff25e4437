"""Strict reads of one kind from a Config's informers, as deep editable copies (``ctx.cached``, ``request.cached``)."""

from __future__ import annotations

from typing import Any, Callable, Generic, Mapping, TypeVar

from cloudcoil_cache._listwatch import ListOptions, check_path_segment
from cloudcoil_cache.caching._policy import Mode, in_scope
from cloudcoil_cache.caching._reader import copies
from cloudcoil_cache.client._config import Config
from cloudcoil_cache.client._lists import ObjectList
from cloudcoil_cache.client._reads import cached_get, cached_list, plain_segment
from cloudcoil_cache.errors import CacheUnavailableError, ResourceNotFound

__all__ = ["KindReader", "ReadCounter"]

T = TypeVar("T")

#: Called with (kind, result) after each read: result is "hit", "miss" or "unavailable".
ReadCounter = Callable[[str, str], None]


def _no_count(kind: str, result: str) -> None:
    return None


class KindReader(Generic[T]):
    """Reads of ``cls`` through ``config``'s cache in strict mode: editable deep copies, never an API
    call (but while the cache is bypassed: disabled, or paused in this thread/task). A view of the
    kind's one reader (``Cache.reader(cls)``, a ``CacheReader``) that copies and raises.

    They get what that cache guarantees (no stale data past ``max_staleness``; read-your-writes for
    writes made through that Config) and raise ``CacheUnavailableError`` when it cannot serve. A get
    outside the informer's label selector is a miss. ``watched`` is the informer's namespace (None: all);
    ``namespace`` defaults to ``default_namespace``, else ``watched``. ``owner`` and ``no_namespace`` name
    the reader in errors ("the controller", "the controller watches it in all namespaces").
    """

    def __init__(
        self,
        cls: Any,
        config: Config,
        *,
        watched: str | None,
        selector: str | None,
        default_namespace: str | None,
        owner: str,
        no_namespace: str,
        count: ReadCounter = _no_count,
    ) -> None:
        self._cls = cls
        self._config = config
        self._watched = watched
        self._selector = selector
        self._default_namespace = default_namespace
        self._owner = owner
        self._no_namespace = no_namespace
        self._count = count

    @property
    def resource(self) -> Any:
        return self._cls

    def _namespace(self, namespace: str | None) -> str | None:
        cls = self._cls
        if not cls.namespaced:
            return None
        watched = self._watched
        namespace = namespace or self._default_namespace or watched
        if not namespace:
            raise ValueError(f"{cls.kind} is namespaced and {self._no_namespace}: pass namespace=")
        if not in_scope(watched, namespace):
            raise ValueError(f"{cls.kind} in namespace {namespace!r}: {self._owner} watches only {watched!r}")
        return namespace

    def _check_name(self, name: str) -> None:
        """A bad name is refused as the client refuses it (the cache could only say "not found")."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"{self._cls.kind}: a name is required (a non-empty string), got {name!r}")
        if not plain_segment(name):
            check_path_segment(name, f"{self._cls.kind} name")

    def _live_get(self, name: str, namespace: str | None) -> Any:
        """A bypassed cache's get (the policy's ``ReadLive(bypass=True)``): from the API server."""
        return self._config.client_for(self._cls, cached=False).live_get(name, namespace)

    def _live_list(self, opts: ListOptions) -> ObjectList[Any]:
        live: ObjectList[Any] = self._config.client_for(self._cls, cached=False).live_list_with(opts)
        return live

    def get(self, name: str, namespace: str | None = None) -> T | None:
        """A deep copy of the cached object, or None."""
        kind = self._cls.kind
        ns = self._namespace(namespace)
        self._check_name(name)
        if ns is not None and not plain_segment(ns):
            check_path_segment(ns, "namespace")
        try:
            obj = cached_get(
                self._config.cache, self._cls, name, ns, self._live_get, mode=Mode.STRICT, selector_is_scope=True
            )
        except ResourceNotFound:
            self._count(kind, "miss")
            return None
        except CacheUnavailableError:
            self._count(kind, "unavailable")
            raise
        self._count(kind, "hit")
        copied: T = obj.copy()
        return copied

    def list(
        self,
        namespace: str | None = None,
        *,
        all_namespaces: bool = False,
        labels: Mapping[str, str] | None = None,
        index: tuple[str, str] | None = None,
    ) -> list[T]:
        """Deep copies of the cached objects of one namespace (or all the informer watches), whose
        labels include every pair of ``labels``. ``index=(name, value)``: only those the cache's
        index ``name`` files under ``value`` (O(matches); ``IndexUnavailableError`` when it cannot
        answer)."""
        cls = self._cls
        if namespace is not None and all_namespaces:
            raise ValueError("namespace and all_namespaces are mutually exclusive")
        ns = self._watched if all_namespaces or not cls.namespaced else self._namespace(namespace)
        try:
            result = cached_list(
                self._config.cache,
                cls,
                ListOptions(ns, ns is None, self._selector, None, None, None, index),
                _checked_namespace,
                self._live_list,
                mode=Mode.STRICT,
            )
        except CacheUnavailableError:
            self._count(cls.kind, "unavailable")
            raise
        found: list[T] = copies(result.items, labels)
        self._count(cls.kind, "hit" if found else "miss")
        return found


def _checked_namespace(namespace: str | None) -> str | None:
    """A namespace ``KindReader._namespace`` defaulted, checked as a path segment."""
    if namespace is not None and not plain_segment(namespace):
        return check_path_segment(namespace, "namespace")
    return namespace
