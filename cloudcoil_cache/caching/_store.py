"""The object store of one informer: one RLock over the objects, their indexes and the resourceVersion;
read handles (``Store``) and the one ``Writer`` are separate (kube-rs's Store / Writer)."""

from __future__ import annotations

import builtins
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
    "Writer",
    "drain",
    "index_values",
    "key_of",
]

T = TypeVar("T")

log = logging.getLogger(__name__)

#: ``(namespace or "", name)``: structured, never a "ns/name" string.
Key = tuple[str, str]
#: An index function: object → one key (``str``), an iterable of keys, or ``None``. Runs under the
#: store lock, so it must be pure and fast.
IndexFunc = Callable[[Any], Union[str, Iterable[str], None]]


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
"""What the store hands to the handler lanes for one change: an ``Added``, ``Updated`` or ``Deleted``."""


def key_of(obj: Any) -> Key:
    metadata = obj.metadata
    return (metadata.namespace or "", metadata.name)


def _rv(obj: Any) -> str | None:
    rv: str | None = obj.metadata.resource_version
    return rv


def _uid(obj: Any) -> str | None:
    uid: str | None = obj.metadata.uid
    return uid


def _recreated(old: Any, new: Any) -> bool:
    """Same name, different object: deleted and created again (a new UID)."""
    old_uid, new_uid = _uid(old), _uid(new)
    return old_uid is not None and new_uid is not None and old_uid != new_uid


def index_values(result: Any) -> tuple[str, ...]:
    """Normalise what an index function returned: one key (``str``), an iterable of keys, or None."""
    if result is None:
        return ()
    if isinstance(result, str):
        return (result,)
    if isinstance(result, bytes):
        raise TypeError("an index function must return str keys, not bytes")
    try:
        values = tuple(result)
    except TypeError:
        raise TypeError(
            f"an index function must return str keys (one, an iterable of them, or None), got {type(result).__name__}"
        ) from None
    for value in values:
        if not isinstance(value, str):
            raise TypeError(f"an index function must return str keys, got {type(value).__name__}")
    return values


class _Data(Generic[T]):
    """What a store holds, shared by its read handles and its writer; every field guarded by ``lock``."""

    def __init__(self, capacity: int) -> None:
        self.lock = threading.RLock()
        self.capacity = max(0, int(capacity))
        self.items: dict[Key, T] = OrderedDict() if self.capacity else {}
        self.by_namespace: dict[str, dict[Key, T]] = {}
        self.indexers: dict[str, IndexFunc] = {}
        self.indices: dict[str, dict[str, set[Key]]] = {}
        self.index_values: dict[str, dict[Key, tuple[str, ...]]] = {}
        #: name -> value -> namespace -> key -> object: what ``index_snapshot`` copies out (O(matches))
        self.index_objects: dict[str, dict[str, dict[str, dict[Key, T]]]] = {}
        self.index_failures: dict[str, int] = {}  # objects each index function failed on
        self.resource_version: str | None = None  # describes exactly ``items``
        self.evictions = 0  # cumulative, for status()
        self.complete = True  # False from an eviction until a (re)list that fits


class Store(Generic[T]):
    """A read handle over an informer's objects, shared read-only with every reader.

    Thread safety: every method may be called from any thread. Readers never get ``replace`` or
    ``apply``: only the ``Writer`` (the reflector's side) changes what a store holds.

    Locking rule: the data's one RLock guards the objects, the namespace index, the custom indexes
    and the resourceVersion; methods ending in ``_locked`` must be called with it held. Nothing
    user-supplied runs under it except index functions, which must be pure and fast. Writes
    *return* notifications; the caller hands them out after the lock is released.

    Objects are stored and returned as they are (the reflector stores sealed, read-only objects):
    reads copy nothing.
    """

    def __init__(self, capacity: int = 0, *, _data: _Data[T] | None = None) -> None:
        self._d: _Data[T] = _data if _data is not None else _Data(capacity)

    # ------------------------------------------------------------------ reads
    def get(self, namespace: str | None, name: str) -> T | None:
        """The stored object, or None. An unbounded store answers without its lock: the writer
        puts and deletes whole entries and swaps in a whole new dict, each one dict operation, so a
        reader sees an object before or after a write, never part of one. A relist empties the dict
        it replaced afterwards (``drain``): a miss in a dict that is no longer the store's is looked
        up again in the current one. Eight threads reading one locked store through a steady watch
        formed a lock convoy: with paced readers, reads fell to 11-97% of their idle rate (three
        runs), itself ~17x below the unlocked rate (``benchmarks/run.py``, reads under load). A
        bounded store updates its LRU order, so it takes the lock."""
        key = (namespace or "", name)
        d = self._d
        if not d.capacity:
            items = d.items
            found = items.get(key)
            if found is None and items is not d.items:
                found = d.items.get(key)
            return found
        with d.lock:
            obj = d.items.get(key)
            if obj is not None:
                d.items.move_to_end(key)  # type: ignore[attr-defined]
            return obj

    def list(self, namespace: str | None = None) -> builtins.list[T]:
        """Every object, or the objects of one namespace (through the namespace index)."""
        return self.snapshot(namespace)[0]

    def snapshot(self, namespace: str | None = None) -> tuple[builtins.list[T], str | None]:
        """The objects (all, or of one namespace) and the resourceVersion that describes exactly them,
        read in one step under the lock: list-then-watch from that version loses nothing."""
        d = self._d
        with d.lock:
            if namespace is None:
                return list(d.items.values()), d.resource_version
            return list(d.by_namespace.get(namespace, {}).values()), d.resource_version

    @property
    def resource_version(self) -> str | None:
        with self._d.lock:
            return self._d.resource_version

    def keys(self) -> builtins.list[Key]:
        with self._d.lock:
            return list(self._d.items)

    def __len__(self) -> int:
        with self._d.lock:
            return len(self._d.items)

    def __contains__(self, key: object) -> bool:
        with self._d.lock:
            return key in self._d.items

    @property
    def capacity(self) -> int:
        return self._d.capacity

    @property
    def complete(self) -> bool:
        """False when objects were evicted since the last (re)list: a list may miss some."""
        return self._d.complete

    @property
    def evictions(self) -> int:
        return self._d.evictions

    # ---------------------------------------------------------------- indexes
    def add_index(self, name: str, func: IndexFunc) -> None:
        """Add an index and fill it from the objects already stored."""
        if not isinstance(name, str) or not name or not callable(func):
            raise ValueError("add_index needs a name (a non-empty string) and a callable")
        d = self._d
        with d.lock:
            if name in d.indexers:
                raise ValueError(f"index {name!r} already exists")
            d.indexers[name] = func
            d.indices[name] = {}
            d.index_values[name] = {}
            d.index_objects[name] = {}
            for key, obj in d.items.items():
                _index_add_locked(d, name, key, obj)

    def get_by_index(self, name: str, value: str) -> builtins.list[T]:
        d = self._d
        with d.lock:
            index = _index_locked(d, name)
            return [d.items[k] for k in index.get(value, ()) if k in d.items]

    def has_index(self, name: str) -> bool:
        """Whether an index named ``name`` exists (no lock: ``indexers`` only grows, one dict op)."""
        return name in self._d.indexers

    def index_names(self) -> builtins.list[str]:
        with self._d.lock:
            return sorted(self._d.indexers)

    def index_snapshot(
        self, name: str, value: str, namespace: str | None = None
    ) -> tuple[builtins.list[T], str | None] | None:
        """The objects whose index ``name`` holds ``value`` (of one namespace, or all) and the
        resourceVersion that describes them, in one step under the lock; None when there is no
        such index. O(matches): the index's keys, each looked up once."""
        d = self._d
        with d.lock:
            index = d.index_objects.get(name)
            if index is None:
                return None
            by_namespace = index.get(value)
            if not by_namespace:
                return [], d.resource_version
            if namespace is not None:
                bucket = by_namespace.get(namespace)
                return ([] if bucket is None else list(bucket.values())), d.resource_version
            found: builtins.list[T] = []
            for bucket in by_namespace.values():
                found += bucket.values()
            return found, d.resource_version

    def list_index_keys(self, name: str) -> builtins.list[str]:
        with self._d.lock:
            return list(_index_locked(self._d, name))


class Writer(Store[T]):
    """The one writer of a store (the informer's reflector side); ``reader`` is the handle to share.

    Every write sets the resourceVersion under the same lock as the objects, so a reader's
    ``snapshot()`` always gets a version that describes exactly the objects it got.
    """

    def __init__(self, capacity: int = 0) -> None:
        super().__init__(capacity)
        self.reader: Store[T] = Store(_data=self._d)

    def apply(self, event_type: str, obj: T, resource_version: str | None = None) -> builtins.list[Notification]:
        """Apply one watch event (ADDED, MODIFIED or DELETED) and return what handlers must see.

        An object re-created under a stored name (a new UID) is ``Deleted(old)`` then ``Added(new)``.
        """
        key = key_of(obj)
        d = self._d
        with d.lock:
            old = d.items.get(key)
            if event_type == "DELETED":
                if old is not None:
                    _remove_locked(d, key)
                notes: list[Notification] = [] if old is None else [Deleted(obj)]
            else:
                _put_locked(d, key, obj, old)
                _evict_locked(d)
                if old is None:
                    notes = [Added(obj)]
                elif _recreated(old, obj):
                    notes = [Deleted(old, final_state_unknown=True), Added(obj)]
                else:
                    notes = [Updated(old, obj)]
            if resource_version is not None:
                d.resource_version = resource_version
        return notes

    def peek(self, key: Key) -> T | None:
        """The object stored under ``key``, without touching the eviction order or taking the lock:
        the writer's own lookup (once per decoded object), made on the thread that changes the
        store, so nothing can change it meanwhile but a stop's ``clear()`` (a miss, harmlessly)."""
        return self._d.items.get(key)

    def upsert(self, obj: T) -> Notification:
        """Add or replace one object; returns ``Added`` or ``Updated`` (no resourceVersion change)."""
        return self.apply("MODIFIED", obj)[-1]

    def delete(self, obj: T) -> Deleted | None:
        """Remove the object with ``obj``'s key; ``None`` if it was not stored."""
        notes = self.apply("DELETED", obj)
        return notes[0] if notes else None  # type: ignore[return-value]

    def bookmark(self, resource_version: str) -> None:
        """The server says the watch reached ``resource_version`` with nothing for us in between."""
        with self._d.lock:
            self._d.resource_version = resource_version

    def replace(
        self, items: Iterable[T], resource_version: str | None = None, *, resync: bool = False
    ) -> builtins.list[Notification]:
        """Swap in a complete list in one step and return what changed.

        Objects new to the store are ``Added(initial=True)``; objects whose resourceVersion changed
        (every object when ``resync``) are ``Updated``; stored objects missing from ``items`` are
        ``Deleted(final_state_unknown=True)`` carrying their last known state; an object re-created
        under a stored name (a new UID) is that ``Deleted`` followed by an ``Added``.
        """
        d = self._d
        fresh: dict[Key, T] = OrderedDict() if d.capacity else {}
        for obj in items:
            fresh[key_of(obj)] = obj
        notes: list[Notification] = []
        with d.lock:
            old_items = d.items
            for key, old in old_items.items():
                fresh_obj = fresh.get(key)
                if fresh_obj is None or _recreated(old, fresh_obj):
                    notes.append(Deleted(old, final_state_unknown=True))
            for key, obj in fresh.items():
                previous = old_items.get(key)
                if previous is None or _recreated(previous, obj):
                    notes.append(Added(obj, initial=True))
                elif resync or _rv(previous) != _rv(obj):
                    notes.append(Updated(previous, obj, resync=resync and _rv(previous) == _rv(obj)))
            d.items = fresh
            d.complete = True
            if resource_version is not None:
                d.resource_version = resource_version
            _rebuild_indexes_locked(d)
            _evict_locked(d)
        drain(old_items)  # outside the lock, one object at a time (see drain)
        return notes

    def after_fork(self) -> bool:
        """In a fork child: a new lock for the data (the old one may be held by a thread that is
        gone). False when it was held at the fork: a write was half applied, the data is torn."""
        d = self._d
        free = d.lock.acquire(blocking=False)  # the child's one thread: only a lost thread holds it
        d.lock = threading.RLock()
        return free

    def clear(self) -> None:
        """Forget everything without notifications (the informer stopped)."""
        d = self._d
        with d.lock:
            old_items = d.items
            d.items = OrderedDict() if d.capacity else {}
            d.resource_version = None
            _rebuild_indexes_locked(d)
            d.evictions = 0
            d.complete = True
        drain(old_items)


def drain(container: Any) -> None:
    """Empty a list or dict one element at a time.

    Dropping a container of 10,000 objects frees them all in one C call that holds the GIL (60-90 ms
    for realistic pods: every other thread and event loop of the program waits that long). Popping
    them one by one frees the same memory in small steps the interpreter can switch threads between.
    """
    pop = container.popitem if isinstance(container, dict) else container.pop
    while container:
        pop()


# ------------------------------------------------------------ helpers (lock held)
def _index_locked(d: _Data[Any], name: str) -> dict[str, set[Key]]:
    try:
        return d.indices[name]
    except KeyError:
        raise KeyError(f"no index named {name!r}; add it with add_index()") from None


def _index_add_locked(d: _Data[Any], name: str, key: Key, obj: Any) -> None:
    try:
        values = index_values(d.indexers[name](obj))
    except Exception as exc:  # a user's index function must not break the store: skip this object
        failures = d.index_failures[name] = d.index_failures.get(name, 0) + 1
        if failures == 1:  # once per index, not once per object (and never a traceback per object)
            log.error(
                "index function %r failed for %s/%s (%s: %s); such objects are left out of the index (logged once)",
                name,
                key[0],
                key[1],
                type(exc).__name__,
                exc,
            )
        return
    if values:
        d.index_values[name][key] = values
        index = d.indices[name]
        objects = d.index_objects[name]
        for value in values:
            index.setdefault(value, set()).add(key)
            by_namespace = objects.get(value)
            if by_namespace is None:
                by_namespace = objects[value] = {}
            bucket = by_namespace.get(key[0])
            if bucket is None:
                bucket = by_namespace[key[0]] = {}
            bucket[key] = obj


def _index_remove_locked(d: _Data[Any], name: str, key: Key) -> None:
    values = d.index_values[name].pop(key, ())
    index = d.indices[name]
    objects = d.index_objects[name]
    for value in values:
        keys = index.get(value)
        if keys is not None:
            keys.discard(key)
            if not keys:  # drop empty sets: high-cardinality values must not leak (k8s#84959)
                del index[value]
        by_namespace = objects.get(value)
        if by_namespace is not None:
            bucket = by_namespace.get(key[0])
            if bucket is not None:
                bucket.pop(key, None)
                if not bucket:
                    del by_namespace[key[0]]
            if not by_namespace:
                del objects[value]


def _put_locked(d: _Data[T], key: Key, obj: T, old: T | None) -> None:
    if old is not None:
        for name in d.indexers:
            _index_remove_locked(d, name, key)
    d.items[key] = obj
    if d.capacity:
        d.items.move_to_end(key)  # type: ignore[attr-defined]
    d.by_namespace.setdefault(key[0], {})[key] = obj
    for name in d.indexers:
        _index_add_locked(d, name, key, obj)


def _remove_locked(d: _Data[Any], key: Key) -> None:
    del d.items[key]
    bucket = d.by_namespace.get(key[0])
    if bucket is not None:
        bucket.pop(key, None)
        if not bucket:
            del d.by_namespace[key[0]]
    for name in d.indexers:
        _index_remove_locked(d, name, key)


def _rebuild_indexes_locked(d: _Data[Any]) -> None:
    by_namespace: dict[str, dict[Key, Any]] = {}
    for key, obj in d.items.items():
        bucket = by_namespace.get(key[0])
        if bucket is None:
            bucket = by_namespace[key[0]] = {}
        bucket[key] = obj
    d.by_namespace = by_namespace
    for name in d.indexers:
        d.indices[name] = {}
        d.index_values[name] = {}
        d.index_objects[name] = {}
        for key, obj in d.items.items():
            _index_add_locked(d, name, key, obj)


def _evict_locked(d: _Data[Any]) -> None:
    """Drop least-recently-used objects over capacity. Not a delete: no notification."""
    if not d.capacity:
        return
    while len(d.items) > d.capacity:
        key = next(iter(d.items))
        _remove_locked(d, key)
        d.evictions += 1
        d.complete = False
