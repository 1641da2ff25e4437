"""NamespaceFollower: keeps a cache's set of namespaces equal to the Namespaces a ``NamespaceSelector`` selects."""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterable

from cloudcoil_cache.caching._informer import Informer
from cloudcoil_cache.caching._options import NamespaceSelector
from cloudcoil_cache.caching._views import SyncInformer

__all__ = ["NamespaceFollower", "NamespaceKind", "move_set"]


class NamespaceKind:
    """The Namespace kind, as the informer of a ``NamespaceSelector`` lists its metadata (the
    models' ``Namespace`` is a layer above the cache)."""

    kind = "Namespace"
    api_version = "v1"
    group = ""
    version = "v1"
    plural = "namespaces"
    namespaced = False


class NamespaceFollower:
    """The informer of the Namespaces a ``NamespaceSelector`` selects (their metadata, its label
    selector sent to the server) and the diff that makes the cache's set follow them: each event of
    the informer, and ``settle()``, adds the namespaces selected now (``add``) and removes those
    that went or no longer match (``remove``). A namespace being deleted stays until it is gone
    (its objects' finalizers still run).

    ``current``, ``add`` and ``remove`` are the cache's (held weakly by it: the informer's handler
    holds this object, not the cache). Thread safety: ``_lock`` makes one diff at a time; it is held
    while ``add``/``remove`` run (they take the cache's lock, then call its listeners).
    """

    def __init__(
        self,
        selector: NamespaceSelector,
        informer: Informer[Any],
        *,
        current: Callable[[], tuple[str, ...]],
        add: Callable[[str], None],
        remove: Callable[[str], None],
    ) -> None:
        self.selector = selector
        self.informer = informer
        self._current = current
        self._add = add
        self._remove = remove
        self._lock = threading.Lock()
        SyncInformer(informer).add_event_handler(self.follow, self.follow, self.follow, replay=False)

    def after_fork(self) -> None:
        """In a fork child: a new lock (the parent's may have been held by another thread)."""
        self._lock = threading.Lock()

    def listed(self) -> bool:
        """Whether the Namespaces are listed (until then the set is not known)."""
        return self.informer.has_synced()

    def follow(self, *_: Any) -> None:
        """Make the set the namespaces the selector selects now (nothing before the first list)."""
        if not self.informer.has_synced():
            return
        with self._lock:
            if not self.informer.has_synced():
                return
            selector = self.selector
            wanted = sorted(
                ns.metadata.name
                for ns in self.informer.store.list(None)
                if selector.matches(ns.metadata.name, ns.metadata.labels)
            )
            move_set(self._current(), wanted, self._add, self._remove)

    def settle(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` for the Namespaces to be listed, then ``follow()``: True, or False
        on timeout. A hard failure of the list (no RBAC to list Namespaces) raises."""
        if not self.informer.wait_for_sync(timeout):
            return False
        self.follow()
        return True


def move_set(
    current: Iterable[str], wanted: Iterable[str], add: Callable[[str], Any], remove: Callable[[str], Any]
) -> None:
    """Move a set of namespaces from ``current`` to ``wanted``: ``add`` each one new, then ``remove``
    each one gone (adds first: a namespace in both sets is never dropped for a moment)."""
    current, wanted = tuple(current), tuple(wanted)
    for namespace in wanted:
        if namespace not in current:
            add(namespace)
    for namespace in current:
        if namespace not in wanted:
            remove(namespace)
