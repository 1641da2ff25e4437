"""The sharder: run by the ring's elected replica, it assigns unlabelled objects, moves a dead shard's, and drains."""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any, Callable, Iterator, NamedTuple

import attrs

from cloudcoil_cache import _gc
from cloudcoil_cache._clock import Clock
from cloudcoil_cache._listwatch import ListWatch
from cloudcoil_cache._runnable import RunnableThread
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller._informers import InformerSet, Scope, SetView
from cloudcoil_cache.controller._ring import HashRing, api_group, hash_key, owner_hash_key
from cloudcoil_cache.controller._shard_labels import drain_label, patch_labels, shard_label
from cloudcoil_cache.errors import CloudcoilError, DecodeError, ResourceConflict, ResourceNotFound
from cloudcoil_cache.models._partial import metadata_class

__all__ = ["Sharded", "Sharder"]

log = logging.getLogger("cloudcoil_cache.controller.sharding")

#: How many label writes the sharder makes at once (timebertt's ``ConcurrentMoves`` is 100 by default).
CONCURRENT_MOVES = 16
#: The page size of the sharder's metadata-only LISTs (each page's JSON is dropped once read).
PAGE = 200
#: After its informers failed to start, the sharder tries again this soon (or its resync period if shorter).
RETRY = 30.0
#: After a whole look that left something to do (a conflict), the next comes this soon (seconds on the
#: sharder's clock), twice as late after each such look in a row, up to ``SOON_MAX`` (a write refused
#: every time, as by a webhook that denies it, is not tried twice a second for ever).
SOON = 0.5
SOON_MAX = 30.0
#: Owners just assigned from the informer of unlabelled objects: their children that carry another
#: shard's label follow at a look at that kind (owners and children only) this soon, one for all the
#: owners assigned meanwhile (their unlabelled children were assigned with them).
FOLLOW = 5.0


class Seen(NamedTuple):
    """What a look keeps of one object: its identity, version, labels of the ring, and controller owner."""

    namespace: str | None
    name: str
    uid: str
    resource_version: str
    shard: str | None  # its shard label's value
    draining: bool  # it has the drain label
    owner: tuple[str, str] | None = None  # (name, uid) of its controller ownerReference of the kind asked


#: One label write: (config, kind, the object as seen, labels, what it counts as).
Move = tuple[Config, Any, Seen, "dict[str, Any]", str]


class _Movers:
    """``count`` threads making a pass's label writes at once; ``run(moves)`` returns when all are done."""

    def __init__(
        self, ring: str, count: int, write: Callable[..., int], stopping: threading.Event, stale: Callable[[], bool]
    ) -> None:
        self._write = write
        self._stopping = stopping  # set: the moves left are dropped (the next sharder makes them)
        self._stale = stale  # True: the members changed since the look began; its moves left are dropped
        self._jobs: queue.SimpleQueue[Move | None] = queue.SimpleQueue()
        self._cond = threading.Condition(threading.Lock())  # guards the two counts below
        self._pending = 0
        self._wrote = 0
        self._threads = [
            RunnableThread(f"ring-{ring}-mover-{i}", self._work, owner=f"ring {ring}") for i in range(count)
        ]
        for thread in self._threads:
            thread.start()

    def run(self, moves: list[Move]) -> int:
        if not moves:
            return 0
        with self._cond:
            self._pending, self._wrote = len(moves), 0
        for move in moves:
            self._jobs.put(move)
        with self._cond:
            self._cond.wait_for(lambda: self._pending == 0)
            return self._wrote

    def _work(self) -> None:
        while True:
            move = self._jobs.get()
            if move is None:
                return
            wrote = 0
            try:
                if not self._stopping.is_set() and not self._stale():
                    wrote = self._write(*move)
            finally:
                with self._cond:
                    self._pending -= 1
                    self._wrote += wrote
                    self._cond.notify_all()

    def close(self) -> None:
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:
            thread.join()

    def threads(self) -> list[threading.Thread]:
        return list(self._threads)


@attrs.frozen
class Sharded:
    """One sharded kind of a ring: ``kind`` (a controller's primary) in ``namespace`` (None: all), and
    the ``children`` kinds whose controller ownerReference names one of them (they follow it)."""

    kind: Any
    namespace: str | None
    children: tuple[Any, ...] = ()


class Sharder:
    """What the ring's elected replica runs (timebertt's sharder controller), without a cache of every
    object: a metadata-only informer per sharded kind that selects the objects **without** a shard
    label (new ones the webhook missed, drained ones), and paged metadata-only LISTs of every object
    when the members change and every ``resync_period`` (on ``clock``). It

    - labels an object without a shard label, or whose shard is not a live member, with the shard the
      ring gives it (a move when it had one: its replica is gone; no drain);
    - for an object whose live shard is not the one the ring gives it, sets the drain label: its
      replica lets it go (removes both labels) after its current pass; the informer of unlabelled
      objects then sees it, and it is assigned at once;
    - labels a child with its owner's shard once the owner has a live one (children are never drained:
      their owner's replica does not reconcile them); an unlabelled child gets its owner's key's shard.

    Every write is a merge patch with the object's resourceVersion as a precondition (a conflict: the
    next look, soon, sees the new version). ``counted(what)`` is told of each ``assigned``, ``moved``
    and ``drain_requested``."""

    def __init__(
        self,
        ring: str,
        targets: list[Sharded],
        *,
        members: Callable[[], HashRing],
        clock: Clock,
        resync_period: float,
        counted: Callable[[str], None],
    ) -> None:
        self.ring = ring
        self.targets = targets
        self._members = members
        self._clock = clock
        self.resync_period = resync_period
        self._counted = counted
        self._shard = shard_label(ring)
        self._drain = drain_label(ring)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()  # guards _whole_due and the writes to _written
        self._whole_due = True  # look at every object next (the members changed, or the start)
        self._handles: list[Any] = []
        self._informers: InformerSet | None = None
        self._thread: RunnableThread | None = None
        # uid -> the resourceVersion a label write went against: that version, still in the informer of
        # unlabelled objects until its event arrives, is not written again (it would be a conflict)
        self._written: dict[str, str] = {}
        self._movers: _Movers | None = None

    def __repr__(self) -> str:
        return f"<Sharder ring={self.ring!r} kinds={[t.kind.kind for t in self.targets]}>"

    # ------------------------------------------------------------- lifecycle
    def start(self, config: Config) -> None:
        """Start the thread; it starts the informers (a sync may take a while: not on the caller's thread)."""
        self._stop.clear()
        self._thread = RunnableThread(f"ring-{self.ring}-sharder", self._run, config, owner=f"ring {self.ring}")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def threads(self) -> list[threading.Thread]:
        movers = self._movers
        return ([self._thread] if self._thread is not None else []) + (movers.threads() if movers else [])

    def held(self) -> int:
        """The objects the sharder's informers hold now (the unlabelled ones: its memory)."""
        informers = self._informers
        if informers is None:
            return 0
        return sum(len(source.view.list()) for source in list(informers.sources.values()))

    def kick(self, *_: Any) -> None:
        """Look at every object soon (the members changed)."""
        with self._lock:
            self._whole_due = True
        self._wake.set()

    def _members_changed(self) -> bool:
        """Did the members change since the current look began (its moves were computed for others)?"""
        with self._lock:
            return self._whole_due

    def _namespace_changed(self, namespace: str, added: bool) -> None:
        if added:
            self.kick()

    def _changed(self, *_: Any) -> None:
        """An unlabelled object appeared or changed: look at the unlabelled ones."""
        self._wake.set()

    def _kinds(self) -> dict[Any, Scope]:
        """The informer scopes of unlabelled objects, one per kind."""
        scopes: dict[Any, Scope] = {}
        for target in self.targets:
            for kind in (target.kind, *target.children):
                cls = metadata_class(kind)
                namespace = target.namespace if kind.namespaced else None
                scopes.setdefault(cls, Scope(cls, namespace, f"!{self._shard}"))
        return scopes

    def _started_informers(self, config: Config) -> InformerSet | None:
        """The informers of unlabelled objects, synced (tried again every ``RETRY`` seconds after a
        failure, which is logged); None once stopping."""
        while not self._stop.is_set():
            informers = InformerSet(
                f"ring {self.ring} sharder", config, list(self._kinds().values()), resync_period=None
            )
            try:
                if informers.start(self._stop):
                    return informers
            except Exception:
                log.exception("ring %s: the sharder's informers did not start; trying again", self.ring)
            informers.close()
            self._clock.wait(self._stop, min(RETRY, self.resync_period))
        return None

    def _run(self, config: Config) -> None:
        movers = self._movers = _Movers(self.ring, CONCURRENT_MOVES, self._write, self._stop, self._members_changed)
        informers = self._started_informers(config)
        if informers is None:
            movers.close()
            return
        self._informers = informers
        next_whole = self._clock.now()
        follow: list[Sharded] = []  # targets whose owners were assigned: their children follow at next_follow
        soon = SOON / 2  # (doubled before each use: SOON after one look that left something to do)
        next_follow = next_whole
        # a namespace joining a set of namespaces: look at every object (its objects of dead shards move)
        caches = [c.cache for c in informers.configs() if c.cache is not None and c.cache.namespaces is not None]
        unsubscribe = [cache.on_namespaces_changed(self._namespace_changed) for cache in caches]
        try:
            for source in informers.sources.values():
                self._handles += source.view.add_event_handler(self._changed, self._changed, None, replay=False)
            while not self._stop.is_set():
                self._wake.clear()
                with self._lock:
                    whole, self._whole_due = self._whole_due or self._clock.now() >= next_whole, False
                try:
                    if whole:
                        again = self._look_at_all(config, informers, movers, self.targets)
                        soon = min(soon * 2, SOON_MAX) if again else SOON / 2
                        next_whole = self._clock.now() + (soon if again else self.resync_period)
                        follow = []
                    elif follow and self._clock.now() >= next_follow:
                        again = self._look_at_all(config, informers, movers, follow)
                        soon = min(soon * 2, SOON_MAX) if again else SOON / 2
                        follow = follow if again else []
                        next_follow = self._clock.now() + soon  # (a write did not go through: soon again)
                    assigned = self._look_at_unlabelled(informers, movers)
                    if assigned and not follow:
                        next_follow = self._clock.now() + FOLLOW
                    follow += [t for t in assigned if t not in follow]
                except Exception:
                    log.exception("ring %s: the sharder's look failed", self.ring)
                    soon = min(soon * 2, SOON_MAX)
                    next_whole = self._clock.now() + soon
                wake_at = min(next_whole, next_follow) if follow else next_whole
                self._clock.wait(self._wake, max(wake_at - self._clock.now(), 0.0))
        finally:
            for stop in unsubscribe:
                stop()
            for handle in self._handles:
                handle.remove(1.0)
            self._handles = []
            self._informers = None
            informers.stop()
            informers.close()
            movers.close()

    # ------------------------------------------------------------- looks
    def _look_at_unlabelled(self, informers: InformerSet, movers: _Movers) -> list[Sharded]:
        """Assign the objects without a shard label; the targets with children whose owners were
        assigned (their children with another shard's label follow at a look at those)."""
        ring = self._members()
        if not ring:
            return []
        moves: list[Move] = []
        for target in self.targets:
            kind = target.kind
            source = informers.sources[metadata_class(kind)]
            for obj in source.view.list():
                meta = obj.metadata
                if (meta.labels or {}).get(self._shard) or self._written.get(meta.uid) == meta.resource_version:
                    continue  # (labelled meanwhile: leaving the informer)
                desired = self._owner_of(ring, hash_key(kind.group, kind.kind, meta.namespace, meta.name))
                labels = {self._shard: desired, self._drain: None}
                moves.append((source.config, kind, _seen_model(obj), labels, "assigned"))
            for child_kind in target.children:
                child_source = informers.sources[metadata_class(child_kind)]
                for child in child_source.view.list():
                    key = owner_hash_key(child, kind)
                    meta = child.metadata
                    if key is None or (meta.labels or {}).get(self._shard):
                        continue
                    if self._written.get(meta.uid) == meta.resource_version:
                        continue
                    labels = {self._shard: self._owner_of(ring, key)}
                    moves.append((child_source.config, child_kind, _seen_model(child), labels, "assigned"))
        movers.run(moves)  # (a write that did not go through: the informer brings the new version)
        kinds = {m[1] for m in moves}
        return [t for t in self.targets if t.children and t.kind in kinds]

    def _look_at_all(self, config: Config, informers: InformerSet, movers: _Movers, targets: list[Sharded]) -> bool:
        """Look at every object of ``targets`` (paged metadata-only LISTs, each page read into ``Seen``
        tuples and dropped): dead shards' objects move, others drain, children follow their owners. True
        when a write did not go through (look again soon)."""
        ring = self._members()
        if not ring:
            return False
        members = set(ring.members)
        moves: list[Move] = []
        for target in targets:
            kind = target.kind
            owners: dict[tuple[str | None, str], tuple[str, str | None]] = {}  # -> (uid, shard)
            where = self._namespaces(informers, target)
            for seen in (s for namespace in where for s in self._list(config, kind, namespace)):
                current = seen.shard
                desired = self._owner_of(ring, hash_key(kind.group, kind.kind, seen.namespace, seen.name))
                # (an owner assigned or moved now: its children follow it in this look)
                owners[(seen.namespace, seen.name)] = (seen.uid, current if current in members else desired)
                if not current or current not in members:
                    what = "moved" if current else "assigned"
                    moves.append((config, kind, seen, {self._shard: desired, self._drain: None}, what))
                elif current != desired and not seen.draining:
                    moves.append((config, kind, seen, {self._drain: "true"}, "drain_requested"))
            for child_kind in target.children:
                children = (c for namespace in where for c in self._list(config, child_kind, namespace, kind))
                for child in children:
                    if child.owner is None:
                        continue
                    name, owner_uid = child.owner
                    uid, owner_shard = owners.get((child.namespace if kind.namespaced else None, name), ("", None))
                    if uid == owner_uid and owner_shard in members and child.shard != owner_shard:
                        what = "moved" if child.shard else "assigned"
                        moves.append((config, child_kind, child, {self._shard: owner_shard}, what))
            del owners
        written = movers.run(moves)
        log.debug("ring %s: the sharder looked at every object: %d write(s) of %d", self.ring, written, len(moves))
        return written < len(moves)

    @staticmethod
    def _namespaces(informers: InformerSet, target: Sharded) -> tuple[str | None, ...]:
        """Where ``target``'s objects are: its namespace (None: all), or over a cache's set of namespaces
        (the controller's), each namespace of the set now (as the informers of unlabelled objects see it)."""
        if target.namespace is not None or not target.kind.namespaced:
            return (target.namespace,)
        view = informers.sources[metadata_class(target.kind)].view
        return view.namespaces if isinstance(view, SetView) else (None,)

    def _list(self, config: Config, kind: Any, namespace: str | None, owner_kind: Any = None) -> Iterator[Seen]:
        """Every object of ``kind`` (in ``namespace``) as a ``Seen`` (with its controller owner of
        ``owner_kind``), from metadata-only pages read as JSON, never as models, none kept."""
        lister: ListWatch[Any] = ListWatch(
            config.transport, metadata_class(kind), namespace=namespace, metadata_only=True
        )
        token: str | None = None
        while not self._stop.is_set():
            raw = lister.fetch_page(resource_version=None, limit=PAGE, continue_=token)
            with _gc.paused():  # (a page's dicts: no collection while they are made)
                page = lister.parse_page(raw)
                del raw
                seen = [self._seen(item, owner_kind) for item in page.raw_items]
            token = page.continue_
            del page
            yield from seen
            del seen
            if not token:
                return

    def _seen(self, item: Any, owner_kind: Any) -> Seen:
        """A ``Seen`` of one LIST item (JSON); a malformed one is a ``DecodeError``."""
        meta = item.get("metadata") if item.__class__ is dict else None
        if meta.__class__ is not dict or not meta.get("name"):
            raise DecodeError(f"ring {self.ring}: a LIST item without metadata.name: {str(item)[:200]}")
        labels = meta.get("labels") or {}
        owner: tuple[str, str] | None = None
        if owner_kind is not None:
            for ref in meta.get("ownerReferences") or ():
                if (
                    ref.get("controller")
                    and ref.get("kind") == owner_kind.kind
                    and api_group(ref.get("apiVersion")) == (owner_kind.group or "")
                ):
                    owner = (str(ref.get("name") or ""), str(ref.get("uid") or ""))
                    break
        return Seen(
            meta.get("namespace") or None,
            meta["name"],
            str(meta.get("uid") or ""),
            str(meta.get("resourceVersion") or ""),
            labels.get(self._shard) or None,
            self._drain in labels,
            owner,
        )

    def _owner_of(self, ring: HashRing, key: str) -> str:
        owner = ring.owner(key)  # (hashed each time: ~2 µs, where a dict of every key's hash held ~0.2 KB a key)
        assert owner is not None
        return owner

    def _write(self, config: Config, kind: Any, meta: Seen, labels: dict[str, Any], what: str) -> int:
        """One guarded label patch; 1 when it was written, 0 when not (changed or gone meanwhile)."""
        try:
            patch_labels(config, kind, meta.namespace, meta.name, meta.resource_version, labels)
            with self._lock:
                if len(self._written) > 100_000:  # (a bound: old entries only save a conflict)
                    self._written.clear()
                self._written[meta.uid] = meta.resource_version
        except (ResourceConflict, ResourceNotFound):
            return 0  # changed or gone meanwhile: the next look sees the new version
        except CloudcoilError as exc:
            log.warning("ring %s: could not label %s %s/%s: %s", self.ring, kind.kind, meta.namespace, meta.name, exc)
            return 0
        self._counted(what)
        return 1


def _seen_model(obj: Any) -> Seen:
    """A ``Seen`` of an informer's metadata-only object (what a label write needs of it)."""
    meta = obj.metadata
    return Seen(meta.namespace, meta.name, meta.uid or "", meta.resource_version or "", None, False)
