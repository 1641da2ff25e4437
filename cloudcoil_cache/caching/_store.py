"""The thread-safe object store of one informer: a dict, one RLock, a namespace index and custom indexes."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Any, Callable, Generic, Iterable, TypeVar, Union

import attrs

__all__ = [
    "Added",
    "Deleted",
    "IndexFunc",
    "Key",
    "Notification",
    "Store",
    "Updated",
    "key_of",
]

T = TypeVar("T")

log = logging.getLogger(__name__)

#: ``(namespace or "", name)``: structured, never a "ns/name" string.
Key = tuple[str, str]
#: An index function: object → index values. Runs under the store lock, so it must be pure and fast.
IndexFunc = Callable[[Any], Iterable[str]]


@attrs.frozen(slots=True)
class Added:
    """An object appeared (``initial``: part of a (re)list or a late handler's replay)."""

    obj: Any
    initial: bool = False


@attrs.frozen(slots=True)
class Updated:
    """An object changed (``resync``: a periodic relist re-delivering an unchanged object)."""

    old: Any
    new: Any
    resync: bool = False


@attrs.frozen(slots=True)
class Deleted:
    """An object went away. ``final_state_unknown``: a relist found it gone; ``obj`` is its last known state."""

    obj: Any
    final_state_unknown: bool = False


Notification = Union[Added, Updated, Deleted]


def key_of(obj: Any) -> Key:
    metadata = obj.metadata
    return (metadata.namespace or "", metadata.name)


def _rv(obj: Any) -> str | None:
    return obj.metadata.resource_version


class Store(Generic[T]):
    """The objects of one informer, shared read-only with every reader.

    Thread safety: every method may be called from any thread. Writes come from one writer (the
    reflector thread); reads from any number of threads.

    Locking rule: ``_lock`` (an RLock) guards ``_items``, ``_by_namespace``, ``_indexers``,
    ``_indices`` and ``_index_values``; it is held for every read and write of them. Methods ending
    in ``_locked`` must be called with it held. Nothing user-supplied runs under it except index
    functions, which must be pure and fast. Writes *return* notifications; the caller hands them
    out after the lock is released.

    Objects are stored and returned as they are (the reflector stores sealed, read-only objects):
    reads copy nothing.
    """

    def __init__(self, capacity: int = 0) -> None:
        self._lock = threading.RLock()
        self._capacity = max(0, int(capacity))
        self._items: dict[Key, T] = OrderedDict() if self._capacity else {}
        self._by_namespace: dict[str, dict[Key, T]] = {}
        self._indexers: dict[str, IndexFunc] = {}
        self._indices: dict[str, dict[str, set[Key]]] = {}
        self._index_values: dict[str, dict[Key, tuple[str, ...]]] = {}
        self.evictions = 0  # cumulative, for status()
        self._complete = True  # False from an eviction until a (re)list that fits

    # ------------------------------------------------------------------ reads
    def get(self, namespace: str | None, name: str) -> T | None:
        key = (namespace or "", name)
        with self._lock:
            obj = self._items.get(key)
            if obj is not None and self._capacity:
                self._items.move_to_end(key)  # type: ignore[attr-defined]
            return obj

    def list(self, namespace: str | None = None) -> list[T]:
        """Every object, or the objects of one namespace (through the namespace index)."""
        with self._lock:
            if namespace is None:
                return list(self._items.values())
            return list(self._by_namespace.get(namespace, {}).values())

    def keys(self) -> list[Key]:
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def complete(self) -> bool:
        """False when objects were evicted since the last (re)list: a list may miss some."""
        return self._complete

    # ---------------------------------------------------------------- indexes
    def add_index(self, name: str, func: IndexFunc) -> None:
        """Add an index and fill it from the objects already stored."""
        if not name or not callable(func):
            raise ValueError("add_index needs a name and a callable")
        with self._lock:
            if name in self._indexers:
                raise ValueError(f"index {name!r} already exists")
            self._indexers[name] = func
            self._indices[name] = {}
            self._index_values[name] = {}
            for key, obj in self._items.items():
                self._index_add_locked(name, key, obj)

    def get_by_index(self, name: str, value: str) -> list[T]:
        with self._lock:
            index = self._index_locked(name)
            return [self._items[k] for k in index.get(value, ()) if k in self._items]

    def list_index_keys(self, name: str) -> list[str]:
        with self._lock:
            return list(self._index_locked(name))

    def _index_locked(self, name: str) -> dict[str, set[Key]]:
        try:
            return self._indices[name]
        except KeyError:
            raise KeyError(f"no index named {name!r}; add it with add_index()") from None

    def _index_add_locked(self, name: str, key: Key, obj: T) -> None:
        try:
            values = tuple(self._indexers[name](obj) or ())
        except Exception:  # a user's index function must not break the store: skip this object
            log.exception("index function %r raised for %s/%s; the object is left out of the index",
                          name, key[0], key[1])
            return
        if values:
            self._index_values[name][key] = values
            index = self._indices[name]
            for value in values:
                index.setdefault(value, set()).add(key)

    def _index_remove_locked(self, name: str, key: Key) -> None:
        values = self._index_values[name].pop(key, ())
        index = self._indices[name]
        for value in values:
            keys = index.get(value)
            if keys is not None:
                keys.discard(key)
                if not keys:  # drop empty sets: high-cardinality values must not leak (k8s#84959)
                    del index[value]

    # ----------------------------------------------------------------- writes
    def upsert(self, obj: T) -> Notification:
        """Add or replace one object; returns ``Added`` or ``Updated``."""
        key = key_of(obj)
        with self._lock:
            old = self._items.get(key)
            self._put_locked(key, obj, old)
            self._evict_locked()
        return Added(obj) if old is None else Updated(old, obj)

    def delete(self, obj: T) -> Deleted | None:
        """Remove the object with ``obj``'s key; ``None`` if it was not stored."""
        key = key_of(obj)
        with self._lock:
            old = self._items.get(key)
            if old is None:
                return None
            self._remove_locked(key)
        return Deleted(obj)

    def replace(self, items: Iterable[T], *, resync: bool = False) -> list[Notification]:
        """Swap in a complete list in one step and return what changed.

        Objects new to the store are ``Added(initial=True)``; objects whose resourceVersion changed
        (every object when ``resync``) are ``Updated``; stored objects missing from ``items`` are
        ``Deleted(final_state_unknown=True)`` carrying their last known state.
        """
        fresh: dict[Key, T] = OrderedDict() if self._capacity else {}
        for obj in items:
            fresh[key_of(obj)] = obj
        notes: list[Notification] = []
        with self._lock:
            old_items = self._items
            for key, obj in fresh.items():
                old = old_items.get(key)
                if old is None:
                    notes.append(Added(obj, initial=True))
                elif resync or _rv(old) != _rv(obj):
                    notes.append(Updated(old, obj, resync=resync and _rv(old) == _rv(obj)))
            for key, old in old_items.items():
                if key not in fresh:
                    notes.append(Deleted(old, final_state_unknown=True))
            self._items = fresh
            self._complete = True
            self._rebuild_indexes_locked()
            self._evict_locked()
        return notes

    def clear(self) -> None:
        """Forget everything without notifications (the informer stopped)."""
        with self._lock:
            self._items = OrderedDict() if self._capacity else {}
            self._rebuild_indexes_locked()
            self.evictions = 0
            self._complete = True

    def _put_locked(self, key: Key, obj: T, old: T | None) -> None:
        if old is not None:
            for name in self._indexers:
                self._index_remove_locked(name, key)
        self._items[key] = obj
        if self._capacity:
            self._items.move_to_end(key)  # type: ignore[attr-defined]
        self._by_namespace.setdefault(key[0], {})[key] = obj
        for name in self._indexers:
            self._index_add_locked(name, key, obj)

    def _remove_locked(self, key: Key) -> None:
        del self._items[key]
        bucket = self._by_namespace.get(key[0])
        if bucket is not None:
            bucket.pop(key, None)
            if not bucket:
                del self._by_namespace[key[0]]
        for name in self._indexers:
            self._index_remove_locked(name, key)

    def _rebuild_indexes_locked(self) -> None:
        by_namespace: dict[str, dict[Key, T]] = {}
        for key, obj in self._items.items():
            bucket = by_namespace.get(key[0])
            if bucket is None:
                bucket = by_namespace[key[0]] = {}
            bucket[key] = obj
        self._by_namespace = by_namespace
        for name in self._indexers:
            self._indices[name] = {}
            self._index_values[name] = {}
            for key, obj in self._items.items():
                self._index_add_locked(name, key, obj)

    def _evict_locked(self) -> None:
        """Drop least-recently-used objects over capacity. Not a delete: no notification."""
        if not self._capacity:
            return
        while len(self._items) > self._capacity:
            key = next(iter(self._items))
            self._remove_locked(key)
            self.evictions += 1
            self._complete = False
