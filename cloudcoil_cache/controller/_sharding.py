"""Ring: active-active controllers; each replica holds a shard Lease, objects go to replicas by a hash ring."""

from __future__ import annotations

import collections
import logging
import os
import re
import socket
import threading
import uuid
from typing import Any, Callable

import attrs

from cloudcoil_cache._clock import ClockLike, as_clock
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller._keys import key_of
from cloudcoil_cache.controller._leader import LeaderElection
from cloudcoil_cache.controller._queue import Priority
from cloudcoil_cache.controller._ring import HashRing, controller_ref, hash_key
from cloudcoil_cache.controller._shard_labels import (
    SHARDER_LEASE_SUFFIX,
    drain_label,
    patch_labels,
    shard_label,
)
from cloudcoil_cache.controller._shard_lease import Membership, ShardLease
from cloudcoil_cache.controller._sharder import Sharded, Sharder
from cloudcoil_cache.errors import CloudcoilError, ResourceConflict, ResourceNotFound
from cloudcoil_cache.models._partial import metadata_class

__all__ = ["Ring", "ShardStatus"]

log = logging.getLogger("cloudcoil_cache.controller.sharding")

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def default_identity() -> str:
    """``<hostname>-<pid>-<6 hex>``, made a DNS label (a Lease name and a label value)."""
    host = re.sub(r"[^a-z0-9-]+", "-", socket.gethostname().lower()).strip("-") or "replica"
    suffix = f"-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    return host[: 63 - len(suffix)].rstrip("-") + suffix


@attrs.frozen
class ShardStatus:
    """A sharded controller's part of ``Controller.status()``: the ``ring``, this replica's
    ``identity``, ``mode`` (``"labels"`` or ``"hash"``: the fallback without labels), whether it
    ``holds`` its shard Lease, the live ``members``, its ``share`` (primaries it holds now), and counts
    since the start: ``drains`` (objects this replica let go), ``assigned``, ``moves`` and
    ``drain_requests`` (writes of the sharder, when this replica runs it)."""

    ring: str
    identity: str
    mode: str
    holds: bool
    members: tuple[str, ...]
    share: int
    drains: int
    assigned: int
    moves: int
    drain_requests: int


class Ring:
    """Active-active sharding of controllers (``Controller(..., sharding=Ring("widgets"))``, or on the
    ``Manager``/``Application`` for all of their controllers): every replica reconciles its share.

    - **Membership**: each replica holds its own Lease named ``identity`` (default
      ``<hostname>-<pid>-<hex>``), labelled ``cloudcoil.dev/ring=<name>`` in ``namespace`` (default: the
      Config's), renewed like the leader's (``lease_duration``, ``renew_deadline``, ``retry_period``).
      Its workers run while it holds it; a replica that cannot renew stops writing (``LeadershipLost``);
      a graceful stop releases it, so its objects move at once. Live members: held and not expired.
    - **Assignment**: a consistent hash ring of the live members (XXH64, ``tokens`` virtual nodes each:
      400 by default, 100 agrees with timebertt's sharder) over ``group/Kind/namespace/name``; children
      follow their controller owner. An object is labelled ``shard.cloudcoil.dev/<name>=<replica>`` by
      the mutating webhook (``Application(sharding=...)``) or the sharder, run by one replica elected on
      the Lease ``<name>-sharder``.
    - **Drain**: to move an object from a live replica the sharder sets ``drain.cloudcoil.dev/<name>``;
      that replica finishes its pass, removes both labels, and forgets the key; the object is then
      assigned again. No two replicas reconcile one object at once.
    - **Each replica caches its share**: its informers of the primary and owned kinds select its label.
      ``labels=False`` is the fallback where objects cannot be labelled: every replica watches all and
      reconciles the keys the ring gives it (no drain: a move may overlap a pass in flight).

    ``resync_period``: how often the sharder looks at every object besides when the members change (a
    safety net: unlabelled objects reach it through its informer, moves through the members' changes).
    ``clock``: the ``Clock`` of the Leases and of expiry (``FakeClock`` in tests).
    """

    def __init__(
        self,
        name: str,
        *,
        identity: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        tokens: int = 400,
        labels: bool = True,
        namespace: str | None = None,
        resync_period: float = 300.0,
        clock: ClockLike | None = None,
    ) -> None:
        if not isinstance(name, str) or not _DNS_LABEL.fullmatch(name):
            raise ValueError(
                f"Ring(name): a DNS label (lowercase letters, digits and '-', at most 63: it is part of label "
                f"keys), got {name!r}"
            )
        identity = default_identity() if identity is None else identity
        if not isinstance(identity, str) or not _DNS_LABEL.fullmatch(identity):
            raise ValueError(
                f"Ring(identity=...): a DNS label (it names the replica's Lease and is a label value), got {identity!r}"
            )
        if not isinstance(labels, bool):
            raise TypeError(f"Ring(labels=...) must be True or False, got {labels!r}")
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
            raise ValueError(f"Ring(tokens=...) must be an int >= 1, got {tokens!r}")
        if isinstance(resync_period, bool) or not isinstance(resync_period, (int, float)) or resync_period <= 0:
            raise ValueError(f"Ring(resync_period=...) must be a number of seconds > 0, got {resync_period!r}")
        self.name = name
        self.identity = identity
        self.tokens = tokens
        self.labels = labels
        self.namespace = namespace
        self.resync_period = float(resync_period)
        #: ``shard.cloudcoil.dev/<ring>`` and ``drain.cloudcoil.dev/<ring>`` (read on every event and pass)
        self.shard_label = shard_label(name)
        self.drain_label = drain_label(name)
        self._clock = as_clock(clock)
        timings = dict(lease_duration=lease_duration, renew_deadline=renew_deadline, retry_period=retry_period)
        # the Lease of this replica (validates the timings as LeaderElection does)
        self.lease = ShardLease(name, identity, namespace=namespace, clock=self._clock, **timings)
        self.lease_duration = self.lease.lease_duration
        self.renew_deadline = self.lease.renew_deadline
        self.retry_period = self.lease.retry_period
        self.sharder_election = LeaderElection(
            name + SHARDER_LEASE_SUFFIX,
            namespace=namespace,
            identity=identity,
            clock=self._clock,
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=retry_period,
        )
        self.membership = Membership(name, namespace, tokens=tokens, clock=self._clock)
        self.membership.listeners.append(self._members_changed)
        self.sharder: Sharder | None = None
        self._controllers: list[Any] = []  # the Controllers sharded by this ring
        self._lock = threading.Lock()  # guards the counts and the run state below
        self._counts: collections.Counter[tuple[str, str]] = collections.Counter()  # (controller, what)
        self._users = 0
        self._config: Config | None = None

    def __repr__(self) -> str:
        return f"<Ring {self.name!r} identity={self.identity!r} members={list(self.members)}>"

    # ------------------------------------------------------------ names
    def selector(self) -> str | None:
        """The label requirement of this replica's informers (None in the fallback mode)."""
        return f"{self.shard_label}={self.identity}" if self.labels else None

    @property
    def members(self) -> tuple[str, ...]:
        """The live members now (as this replica sees them)."""
        return self.membership.ring().members

    def ring(self) -> HashRing:
        return self.membership.ring()

    def owner_of(self, kind: Any, namespace: str | None, name: str) -> str | None:
        """The member the ring gives an object of ``kind`` now."""
        return self.membership.ring().owner(hash_key(kind.group, kind.kind, namespace, name))

    # --------------------------------------------------------- controllers
    def _attach(self, controller: Any) -> None:
        with self._lock:
            if controller not in self._controllers:
                self._controllers.append(controller)

    def _targets(self) -> list[Sharded]:
        targets = []
        for controller in self._controllers:
            namespace = controller._primary_namespace if controller.kind.namespaced else None
            main = metadata_class(controller.kind)
            # a child of the primary's own kind is a primary: its own key decides (no following)
            children = tuple(k for k in controller._owned if metadata_class(k) is not main)
            targets.append(Sharded(controller.kind, namespace, children))
        return targets

    # ----------------------------------------------------------- lifecycle
    def _start(self, config: Config, cancel: threading.Event | None = None, sync_timeout: float = 30.0) -> None:
        """Watch the members (synced) and campaign for the sharder (labels mode). The shard Lease is
        campaigned for by whoever runs the workers (a Manager, or a standalone controller)."""
        with self._lock:
            self._users += 1
            if self._users > 1:
                return
            self._config = config
        self.namespace = self.namespace or config.namespace
        self.lease.namespace = self.lease.namespace or self.namespace
        self.sharder_election.namespace = self.sharder_election.namespace or self.namespace
        self.membership.namespace = self.namespace
        try:
            self.membership.start(config, sync_timeout=sync_timeout, cancel=cancel)
            if self.labels:
                self.sharder_election._start(config, started=self._start_sharder, stopped=self._stop_sharder)
        except BaseException:
            with self._lock:
                self._users = 0
            self.membership.stop()
            raise

    def _stop(self) -> None:
        with self._lock:
            self._users = max(self._users - 1, 0)
            if self._users:
                return
        if self.sharder_election.threads():
            self.sharder_election._stop(release=True)
        self._stop_sharder()
        self.membership.stop()

    def threads(self) -> list[threading.Thread]:
        sharder = self.sharder
        return (
            self.membership.threads()
            + self.sharder_election.threads()
            + (sharder.threads() if sharder is not None else [])
        )

    def _start_sharder(self) -> None:
        config = self._config
        if config is None:
            return
        sharder = Sharder(
            self.name,
            self._targets(),
            members=self.membership.ring,
            clock=self._clock,
            resync_period=self.resync_period,
            counted=lambda what: self._count("", what),
        )
        with self._lock:
            self.membership.listeners.append(sharder.kick)
            self.sharder = sharder
        log.info("ring %s: %s runs the sharder", self.name, self.identity)
        sharder.start(config)

    def _stop_sharder(self) -> None:
        """Stop the sharder (from the sharder election's thread, or the ring's stop: both may come)."""
        with self._lock:
            sharder, self.sharder = self.sharder, None
            if sharder is not None and sharder.kick in self.membership.listeners:
                self.membership.listeners.remove(sharder.kick)
        if sharder is not None:
            sharder.stop()

    # --------------------------------------------------------- the replica
    def _count(self, controller: str, what: str) -> None:
        with self._lock:
            self._counts[(controller, what)] += 1

    def child_labels(self, controller: Any) -> Callable[[Any], dict[str, str] | None]:
        """What ``create`` adds to an object its reconcile creates (``Config.create_labels``), as the
        ring's webhook would: an object of the primary kind, the member the ring gives its own key; one
        of an owned kind, the shard of its controller owner (a primary this replica holds). Nothing in
        the fallback mode, for other kinds, for an object that has the label, one without a name yet
        (``generateName``: the sharder assigns it), or a child whose owner is not in this replica's cache."""
        kind = controller.kind
        primary = metadata_class(kind)
        # (a child of the primary's own kind is a primary: its own key decides, as in the sharder and webhook)
        owned = {metadata_class(k) for k in controller._owned} - {primary}

        def labels(obj: Any) -> dict[str, str] | None:
            meta = getattr(obj, "metadata", None)
            if not self.labels or meta is None or (meta.labels or {}).get(self.shard_label):
                return None
            source = controller.sources.get(kind)
            if source is None:
                return None
            namespace = (meta.namespace or source.config.namespace) if kind.namespaced else None
            cls = metadata_class(obj.__class__)
            if cls is primary:
                member = self.owner_of(kind, namespace, meta.name) if meta.name else None
                return {self.shard_label: member} if member else None
            if cls not in owned:
                return None
            ref = controller_ref(meta, kind)
            owner = source.view.get(ref.name, namespace) if ref is not None else None
            shard = (owner.metadata.labels or {}).get(self.shard_label) if owner is not None else None
            return {self.shard_label: shard} if shard else None

        return labels

    def admit(self, controller: Any, obj: Any) -> bool:
        """Before a pass (on a worker): may this replica reconcile ``obj``? In the labels mode, only
        when its shard label names this replica; with the drain label, it lets the object go instead
        (removes both labels with the object's resourceVersion) and answers False. In the fallback
        mode, when the ring gives its key to this replica."""
        meta = obj.metadata
        if not self.labels:
            return self.owner_of(controller.kind, meta.namespace, meta.name) == self.identity
        labels = meta.labels or {}
        if labels.get(self.shard_label) != self.identity:
            return False
        if self.drain_label in labels:
            try:
                patch_labels(
                    controller._write_config(),
                    controller.kind,
                    meta.namespace,
                    meta.name,
                    meta.resource_version,
                    {self.shard_label: None, self.drain_label: None},
                )
            except (ResourceConflict, ResourceNotFound):
                return False  # changed meanwhile: its new version is queued again (and checked again)
            except CloudcoilError as exc:
                raise CloudcoilError(f"ring {self.name}: could not let {key_of(obj)} go: {exc}") from exc
            self._count(controller.name, "drains")
            controller.logger.info("ring %s: %s drained (moves to another replica)", self.name, key_of(obj))
            return False
        return True

    def draining(self, obj: Any) -> bool:
        """Does ``obj`` carry this ring's drain label (it passes every predicate)?"""
        return self.labels and self.drain_label in ((obj.metadata.labels or {}) if obj.metadata else {})

    def _members_changed(self, ring: HashRing) -> None:
        """Fallback mode: queue the cached primaries the ring now gives this replica."""
        if self.labels:
            return
        for controller in list(self._controllers):
            workers = controller.run.running
            primary = controller.sources.get(controller.kind)
            if workers is None or primary is None:
                continue
            for obj in primary.view.list():
                meta = obj.metadata
                if ring.owner(hash_key(controller.kind.group, controller.kind.kind, meta.namespace, meta.name)) == (
                    self.identity
                ):
                    workers.queue.add(key_of(obj), Priority.REPLAY)

    def status_for(self, controller: Any) -> ShardStatus:
        """``controller``'s part of the ring now."""
        primary = controller.sources.get(controller.kind)
        objects = primary.view.list() if primary is not None else []
        if self.labels:
            share = sum(1 for o in objects if (o.metadata.labels or {}).get(self.shard_label) == self.identity)
        else:
            ring = self.membership.ring()
            kind = controller.kind
            share = sum(
                1
                for o in objects
                if ring.owner(hash_key(kind.group, kind.kind, o.metadata.namespace, o.metadata.name)) == self.identity
            )
        with self._lock:
            counts = dict(self._counts)
        return ShardStatus(
            ring=self.name,
            identity=self.identity,
            mode="labels" if self.labels else "hash",
            holds=self.lease.is_leader(),
            members=self.members,
            share=share,
            drains=counts.get((controller.name, "drains"), 0),
            assigned=counts.get(("", "assigned"), 0),
            moves=counts.get(("", "moved"), 0),
            drain_requests=counts.get(("", "drain_requested"), 0),
        )
