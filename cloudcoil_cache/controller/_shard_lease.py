"""A shard's membership in a ring: its own Lease (LeaderElection's algorithm), and the live members seen from Leases."""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

from cloudcoil_cache._clock import Clock
from cloudcoil_cache._runnable import RunnableThread
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller._informers import InformerSet, Scope
from cloudcoil_cache.controller._leader import LeaderElection
from cloudcoil_cache.controller._ring import HashRing
from cloudcoil_cache.models.kubernetes.coordination.v1 import Lease

__all__ = ["DEAD", "EXPIRED", "READY", "RING_LABEL", "Membership", "ShardLease", "member_state"]

log = logging.getLogger("cloudcoil_cache.controller.sharding")

#: The label of every shard Lease of a ring: ``cloudcoil.dev/ring=<ring>`` (the member informer selects it).
RING_LABEL = "cloudcoil.dev/ring"

#: Held and renewed within its duration: a member, objects are assigned to it.
READY = "ready"
#: Held, but its record has not changed for its ``leaseDurationSeconds``: out of the ring (its replica
#: stopped writing at its ``renew_deadline``, which is shorter); its objects move.
EXPIRED = "expired"
#: Released (empty holder) or held by someone else than the shard: out at once.
DEAD = "dead"


class ShardLease(LeaderElection):
    """This replica's own Lease in ring ``ring``: named after the replica's identity, labelled
    ``cloudcoil.dev/ring=<ring>``, acquired, renewed and released exactly as ``LeaderElection`` does
    (a graceful stop writes an empty holder: the shard is dead at once and its objects move). The
    replica's workers run while it holds its Lease; a replica that cannot renew within
    ``renew_deadline`` stops them and fences their writes (``LeadershipLost``)."""

    def __init__(
        self,
        ring: str,
        identity: str,
        *,
        namespace: str | None,
        lease_duration: float,
        renew_deadline: float,
        retry_period: float,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(
            identity,
            namespace=namespace,
            identity=identity,
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=retry_period,
            clock=clock,
        )
        self.ring = ring

    def __repr__(self) -> str:
        return f"<ShardLease ring={self.ring!r} {self.namespace or '?'}/{self.name} holding={self.is_leader()}>"

    def _lease_labels(self) -> dict[str, str]:
        return {RING_LABEL: self.ring}


def member_state(lease: Lease, observed_at: float, now: float) -> str:
    """A shard Lease's state: ``dead`` (holder empty or not the Lease's name), ``expired`` (its record
    unchanged for ``leaseDurationSeconds`` on this replica's clock since ``observed_at``) or ``ready``.

    A simplification of timebertt's states: ``expired`` and ``uncertain`` are one state, and not
    available (the replica fences itself at ``renew_deadline`` < ``lease_duration``, so its objects may
    move once its Lease expired); no sharder acquires a Lease to prove it dead, nor deletes old ones."""
    spec = lease.spec
    holder = spec.holder_identity if spec is not None else None
    if not holder or holder != (lease.metadata.name if lease.metadata is not None else None):
        return DEAD
    duration = float((spec.lease_duration_seconds if spec is not None else None) or 0)
    return READY if now < observed_at + duration else EXPIRED


class Membership:
    """The members of a ring: an informer on the ring's Leases (label ``cloudcoil.dev/ring=<ring>``), and
    a thread that turns them into a ``HashRing`` of the ready ones whenever a Lease changes or one
    expires, calling ``listeners`` (each with the new ring, on that thread) when the members change.

    A Lease's expiry is judged as client-go judges the leader's: from when its record last changed, on
    this replica's clock (no comparison of wall clocks between replicas); so a Lease found at the start
    counts as held for one duration."""

    def __init__(self, ring: str, namespace: str | None, *, tokens: int, clock: Clock) -> None:
        self.ring_name = ring
        self.namespace = namespace
        self.tokens = tokens
        self._clock = clock
        # guards the state below (reentrant: a wait_for predicate may read states())
        self._cond = threading.Condition(threading.RLock())
        self._leases: dict[str, tuple[Lease, float]] = {}  # name -> (lease, when its spec last changed)
        self._ring = HashRing((), tokens)
        self._states: dict[str, str] = {}
        self._dirty = False
        self._wake = threading.Event()  # set on a Lease event and on the stop
        self._stop = threading.Event()
        self._informers: InformerSet | None = None
        self._handles: list[Any] = []
        self._thread: RunnableThread | None = None
        self.listeners: list[Callable[[HashRing], Any]] = []

    def __repr__(self) -> str:
        return f"<Membership ring={self.ring_name!r} members={list(self.ring().members)}>"

    def start(self, config: Config, *, sync_timeout: float = 30.0, cancel: threading.Event | None = None) -> None:
        """Watch the ring's Leases (synced) and start the thread that keeps the ring."""
        self.namespace = self.namespace or config.namespace
        scope = Scope(Lease, self.namespace, f"{RING_LABEL}={self.ring_name}")
        informers = InformerSet(
            f"ring {self.ring_name}", config, [scope], resync_period=None, sync_timeout=sync_timeout
        )
        self._informers = informers
        self._stop = threading.Event()
        if not informers.start(cancel):
            return
        view = informers.sources[Lease].view
        self._handles = view.add_event_handler(self._seen, lambda old, new: self._seen(new), self._gone)
        self._recompute()
        self._thread = RunnableThread(f"ring-{self.ring_name}-members", self._keep, owner=f"ring {self.ring_name}")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        for handle in self._handles:
            handle.remove(1.0)
        self._handles = []
        if self._informers is not None:
            self._informers.stop()
            self._informers.close()
            self._informers = None

    def threads(self) -> list[threading.Thread]:
        return [self._thread] if self._thread is not None else []

    # ------------------------------------------------------------- events
    def _seen(self, lease: Lease) -> None:
        name = lease.metadata.name if lease.metadata is not None else None
        if not name:
            return
        with self._cond:
            previous = self._leases.get(name)
            unchanged = previous is not None and previous[0].spec == lease.spec
            self._leases[name] = (lease, previous[1] if unchanged and previous is not None else self._clock.now())
            self._dirty = True
            self._wake.set()
            self._cond.notify_all()

    def _gone(self, lease: Lease) -> None:
        name = lease.metadata.name if lease.metadata is not None else None
        with self._cond:
            self._leases.pop(name or "", None)
            self._dirty = True
            self._wake.set()
            self._cond.notify_all()

    # --------------------------------------------------------------- ring
    def ring(self) -> HashRing:
        """The ring of the ready members now."""
        with self._cond:
            return self._ring

    def states(self) -> dict[str, str]:
        """Every Lease of the ring and its state (``ready``, ``expired``, ``dead``)."""
        with self._cond:
            return dict(self._states)

    def wait_for(self, predicate: Callable[[HashRing], bool], timeout: float | None) -> bool:
        """Wait (real time) until ``predicate(ring)`` holds or the membership is not running (stopped, or its
        start was cancelled); True when it holds."""
        with self._cond:
            self._cond.wait_for(lambda: self._stop.is_set() or self._thread is None or predicate(self._ring), timeout)
            return predicate(self._ring)

    def _recompute(self) -> tuple[HashRing, bool, float | None]:
        """Compute the states and the ring now; the ring, whether its members changed, and when the
        next ready Lease expires (None: none)."""
        with self._cond:
            now = self._clock.now()
            self._dirty = False
            states: dict[str, str] = {}
            next_expiry: float | None = None
            for name, (lease, observed_at) in self._leases.items():
                state = member_state(lease, observed_at, now)
                states[name] = state
                if state == READY and lease.spec is not None:
                    expiry = observed_at + float(lease.spec.lease_duration_seconds or 0)
                    next_expiry = expiry if next_expiry is None else min(next_expiry, expiry)
            self._states = states
            members = tuple(sorted(n for n, s in states.items() if s == READY))
            changed = members != self._ring.members
            if changed:
                self._ring = HashRing(members, self.tokens)
            self._cond.notify_all()
            return self._ring, changed, next_expiry

    def _keep(self) -> None:
        while not self._stop.is_set():
            ring, changed, next_expiry = self._recompute()
            if changed:
                log.info("ring %s: members %s", self.ring_name, ", ".join(ring.members) or "(none)")
                for listener in list(self.listeners):
                    try:
                        listener(ring)
                    except Exception:
                        log.exception("ring %s: a membership listener failed", self.ring_name)
            with self._cond:
                if self._dirty or self._stop.is_set():
                    continue
                self._wake.clear()
            # a Lease event or the stop sets _wake; else the next expiry, on the ring's clock
            self._clock.wait(
                self._wake, None if next_expiry is None else max(next_expiry - self._clock.now(), 0) + 0.001
            )
