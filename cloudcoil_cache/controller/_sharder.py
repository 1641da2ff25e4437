"""The sharder: run by the ring's elected replica, it assigns unlabelled objects, moves a dead shard's, and drains."""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

import attrs

from cloudcoil_cache._clock import Clock
from cloudcoil_cache._runnable import RunnableThread
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller._informers import InformerSet, Scope
from cloudcoil_cache.controller._ring import HashRing, hash_key, owner_hash_key, xxh64
from cloudcoil_cache.controller._shard_labels import drain_label, patch_labels, shard_label
from cloudcoil_cache.errors import CloudcoilError, ResourceConflict, ResourceNotFound
from cloudcoil_cache.models._partial import metadata_class

__all__ = ["Sharded", "Sharder"]

log = logging.getLogger("cloudcoil_cache.controller.sharding")


@attrs.frozen
class Sharded:
    """One sharded kind of a ring: ``kind`` (a controller's primary) in ``namespace`` (None: all), and
    the ``children`` kinds whose controller ownerReference names one of them (they follow it)."""

    kind: Any
    namespace: str | None
    children: tuple[Any, ...] = ()


class Sharder:
    """What the ring's elected replica runs (timebertt's sharder controller): metadata-only informers
    on every sharded kind (no shard selector), and a thread that, on every change of an object or of
    the members (and every ``resync_period`` on ``clock``), looks at the objects and

    - labels an object without a shard label, or whose shard is not a live member, with the shard the
      ring gives it (a move when it had one: its replica is gone; no drain);
    - for an object whose live shard is not the one the ring gives it, sets the drain label: its
      replica lets it go (removes both labels) after its current pass, and the next look assigns it;
    - labels a child with its owner's shard once the owner has a live one (children are never drained:
      their owner's replica does not reconcile them).

    Every write is a merge patch with the object's resourceVersion as a precondition (a conflict: the
    next event brings the new version). ``counted(what)`` is told of each ``assigned``, ``moved`` and
    ``drain_requested``."""

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
        self._informers: InformerSet | None = None
        self._handles: list[Any] = []
        self._thread: RunnableThread | None = None
        self._hashes: dict[str, int] = {}  # key -> xxh64(key): a key's hash never changes
        self.passes = 0
        self.idle = threading.Event()  # set after a pass that wrote nothing (tests wait on it)

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
        return [self._thread] if self._thread is not None else []

    def kick(self, *_: Any) -> None:
        """Look again soon (a change of the members or of an object)."""
        self.idle.clear()
        self._wake.set()

    def _run(self, config: Config) -> None:
        scopes: dict[Any, Scope] = {}
        for target in self.targets:
            for kind in (target.kind, *target.children):
                cls = metadata_class(kind)
                scopes.setdefault(cls, Scope(cls, target.namespace if kind.namespaced else None))
        informers = InformerSet(f"ring {self.ring} sharder", config, list(scopes.values()), resync_period=None)
        self._informers = informers
        try:
            if not informers.start(self._stop):
                return
            for source in informers.sources.values():
                self._handles += source.view.add_event_handler(self.kick, self.kick, self.kick, replay=False)
            self._wake.set()
            while not self._stop.is_set():
                self._wake.clear()
                try:
                    wrote = self._pass(informers)
                except Exception:
                    log.exception("ring %s: the sharder's pass failed", self.ring)
                    wrote = 0
                self.passes += 1
                if wrote == 0:
                    self.idle.set()
                # what was written comes back as events, which wake the next look; else the resync
                self._clock.wait(self._wake, self.resync_period)
        finally:
            for handle in self._handles:
                handle.remove(1.0)
            self._handles = []
            informers.stop()
            informers.close()
            self._informers = None

    # ------------------------------------------------------------- one pass
    def _pass(self, informers: InformerSet) -> int:
        """Look at every object once; the number of writes made."""
        ring = self._members()
        if not ring:
            return 0  # no live member: nothing to assign to
        members = set(ring.members)
        wrote = 0
        for target in self.targets:
            if self._stop.is_set():
                break
            source = informers.sources[metadata_class(target.kind)]
            kind = target.kind
            owners: dict[tuple[str | None, str], Any] = {}
            for obj in source.view.list():
                meta = obj.metadata
                owners[(meta.namespace, meta.name)] = obj
                labels = meta.labels or {}
                current = labels.get(self._shard)
                desired = self._owner_of(ring, hash_key(kind.group, kind.kind, meta.namespace, meta.name))
                if not current or current not in members:
                    what = "moved" if current else "assigned"
                    wrote += self._write(config_of(source), kind, obj, {self._shard: desired, self._drain: None}, what)
                elif current != desired and self._drain not in labels:
                    wrote += self._write(config_of(source), kind, obj, {self._drain: "true"}, "drain_requested")
            for child_kind in target.children:
                child_source = informers.sources[metadata_class(child_kind)]
                for child in child_source.view.list():
                    if owner_hash_key(child, kind) is None:
                        continue
                    ref = next(r for r in child.metadata.owner_references if r.controller)
                    owner = owners.get((child.metadata.namespace if kind.namespaced else None, ref.name))
                    if owner is None or owner.metadata.uid != ref.uid:
                        continue
                    target_shard = (owner.metadata.labels or {}).get(self._shard)
                    labels = child.metadata.labels or {}
                    if target_shard in members and labels.get(self._shard) != target_shard:
                        what = "moved" if labels.get(self._shard) else "assigned"
                        wrote += self._write(
                            config_of(child_source), child_kind, child, {self._shard: target_shard}, what
                        )
        return wrote

    def _owner_of(self, ring: HashRing, key: str) -> str:
        digest = self._hashes.get(key)
        if digest is None:
            digest = self._hashes[key] = xxh64(key.encode("utf-8"))
        owner = ring.owner_of_hash(digest)
        assert owner is not None
        return owner

    def _write(self, config: Config, kind: Any, obj: Any, labels: dict[str, Any], what: str) -> int:
        """One guarded label patch; 1 when something was (or may have been) to do."""
        meta = obj.metadata
        try:
            patch_labels(config, kind, meta.namespace, meta.name, meta.resource_version, labels)
        except (ResourceConflict, ResourceNotFound):
            return 1  # changed or gone meanwhile: its event brings the new version (and a look)
        except CloudcoilError as exc:
            log.warning("ring %s: could not label %s %s/%s: %s", self.ring, kind.kind, meta.namespace, meta.name, exc)
            return 1
        self._counted(what)
        return 1


def config_of(source: Any) -> Config:
    config: Config = source.config
    return config
