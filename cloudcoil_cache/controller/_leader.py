"""LeaderElection: client-go's Lease-based leader election (acquire, renew, step down, release)."""

from __future__ import annotations

import collections
import datetime
import json
import logging
import random
import socket
import threading
import uuid
from typing import Any, Callable

from cloudcoil_cache._clock import ClockLike, as_clock
from cloudcoil_cache._runnable import RunnableThread
from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import CloudcoilError, ResourceNotFound
from cloudcoil_cache.models.kubernetes.coordination.v1 import Lease, LeaseSpec

__all__ = ["LeaderElection"]

log = logging.getLogger("cloudcoil_cache.controller.leader")

#: Acquire attempts wait ``retry_period`` plus up to this fraction of it (client-go jitters by up to
#: 1.2x; a smaller jitter keeps takeover within ``lease_duration + retry_period`` plus a little).
JITTER = 0.2


class LeaderElection:
    """Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's algorithm.

    - Acquire: a replica takes the Lease when it does not exist, when its holder is empty (released),
      or when the record it observed has not changed for ``leaseDurationSeconds`` on this replica's
      monotonic clock. Writes use the Lease's resourceVersion (optimistic concurrency): of two replicas
      racing, one gets 409 and stays a follower. ``leaseTransitions`` counts changes of holder.
    - Renew: the leader renews every ``retry_period``; when no renewal succeeded for ``renew_deadline``
      it steps down (``on_stopped_leading``) and campaigns again.
    - Release: on a graceful stop the leader writes an empty holder, so another replica takes over
      at its next attempt (about ``retry_period``) instead of after ``lease_duration``.

    Callbacks (each optional, called on the election's own thread, never while it renews):
    ``on_started_leading()``, ``on_stopped_leading()``, ``on_new_leader(identity)``.

    As in client-go, safety rests on ``lease_duration > renew_deadline``: a leader that cannot renew
    stops before another replica may take over, provided stopping takes less than the difference.

    ``clock``: the ``Clock`` of the lease timings and of the campaign's waits between attempts
    (``cloudcoil_cache.testing.FakeClock`` in tests; a bare function returning seconds still works).
    """

    def __init__(
        self,
        name: str,
        *,
        namespace: str | None = None,
        identity: str | None = None,
        lease_duration: float = 15,
        renew_deadline: float = 10,
        retry_period: float = 2,
        on_started_leading: Callable[[], Any] | None = None,
        on_stopped_leading: Callable[[], Any] | None = None,
        on_new_leader: Callable[[str], Any] | None = None,
        clock: ClockLike | None = None,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError("LeaderElection(name): a non-empty Lease name is required")
        for what, value in (
            ("lease_duration", lease_duration),
            ("renew_deadline", renew_deadline),
            ("retry_period", retry_period),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"LeaderElection({what}=...) must be a number of seconds > 0, got {value!r}")
        if not lease_duration > renew_deadline:
            raise ValueError(
                f"LeaderElection: lease_duration ({lease_duration}) must be greater than "
                f"renew_deadline ({renew_deadline})"
            )
        if not renew_deadline > retry_period * (1 + JITTER):
            raise ValueError(
                f"LeaderElection: renew_deadline ({renew_deadline}) must be greater than "
                f"{1 + JITTER:g} x retry_period ({retry_period})"
            )
        self.name = name
        self.namespace = namespace
        self.identity = identity or f"{socket.gethostname()}_{uuid.uuid4()}"
        self.lease_duration = float(lease_duration)
        self.renew_deadline = float(renew_deadline)
        self.retry_period = float(retry_period)
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.on_new_leader = on_new_leader
        self._clock = as_clock(clock)  # the campaign waits on it: a FakeClock drives retries and renewals
        self._cond = threading.Condition(threading.Lock())  # guards the state below
        self._renewed_at: float | None = None  # monotonic start of the last successful acquire/renew
        self._observed: Lease | None = None  # the Lease as last read or written
        self._observed_spec: dict[str, Any] | None = None
        self._observed_at = 0.0  # when the observed record last changed (monotonic)
        self._leader_events: collections.deque[str] = collections.deque()
        self._reported_leader: str | None = None
        self._leading = False  # what the watcher last acted on
        self._closing = False  # no new acquisition (the manager is stopping)
        self._stopped = False
        self._stop_event = threading.Event()
        self._config: Config | None = None
        self._elector: RunnableThread | None = None
        self._watcher: RunnableThread | None = None
        self._started_cb: Callable[[], Any] = lambda: None
        self._stopped_cb: Callable[[], Any] = lambda: None

    def __repr__(self) -> str:
        return (
            f"<LeaderElection {self.namespace or '?'}/{self.name} identity={self.identity!r} "
            f"leading={self.is_leader()}>"
        )

    # ----------------------------------------------------------- lifecycle
    def _start(
        self, config: Config, started: Callable[[], Any] | None = None, stopped: Callable[[], Any] | None = None
    ) -> None:
        """Campaign (a thread doing the Lease I/O) and act on leadership (a thread calling callbacks)."""
        if self._elector is not None and self._elector.is_alive():
            raise RuntimeError(f"leader election {self.name!r} is already running")
        self._config = config
        self.namespace = self.namespace or config.namespace
        with self._cond:  # a fresh campaign (the election may be started again after a stop)
            self._stop_event = threading.Event()
            self._stopped = self._closing = self._leading = False
            self._renewed_at = None
            self._leader_events.clear()
        self._started_cb = started or (lambda: None)
        self._stopped_cb = stopped or (lambda: None)
        owner = f"leader election {self.name}"
        self._elector = RunnableThread(f"leader-election-{self.name}", self._campaign, owner=owner)
        self._watcher = RunnableThread(f"leader-watch-{self.name}", self._watch, owner=owner)
        self._watcher.start()
        self._elector.start()

    def _begin_shutdown(self) -> None:
        """Acquire no more, and start leading no more; a leader keeps renewing until ``_stop``."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()

    def _stop(self, release: bool = True) -> None:
        """Stop renewing, release the Lease if we hold it, then end the watcher (which reports the end
        of leadership) and join both threads."""
        self._begin_shutdown()
        self._stop_event.set()
        if self._elector is not None:
            self._elector.join()
        if release:
            try:
                self._release()
            except Exception as exc:
                log.warning("leader election %s: could not release the Lease: %s", self.name, exc)
        with self._cond:
            self._stopped = True
            self._renewed_at = None
            self._cond.notify_all()
        if self._watcher is not None:
            self._watcher.join()
        self._elector = self._watcher = None

    def threads(self) -> list[threading.Thread]:
        return [t for t in (self._elector, self._watcher) if t is not None]

    # --------------------------------------------------------------- state
    def is_leader(self) -> bool:
        """Does this replica hold the Lease, renewed within ``renew_deadline``?"""
        with self._cond:
            return self._holds_locked()

    def _holds_locked(self) -> bool:
        return self._renewed_at is not None and self._clock.now() < self._renewed_at + self.renew_deadline

    @property
    def leader(self) -> str | None:
        """The holder identity last observed (None when unknown or released)."""
        with self._cond:
            spec = self._observed_spec or {}
        return spec.get("holderIdentity") or None

    # ------------------------------------------------------------ campaign
    def _campaign(self) -> None:
        while not self._stop_event.is_set():
            with self._cond:
                leading = self._holds_locked()
                closing = self._closing
            if leading or not closing:
                attempt_start = self._clock.now()
                try:
                    acquired = self._try_acquire_or_renew(renew_only=closing)
                except Exception as exc:  # never let the campaign thread die
                    log.warning("leader election %s: %s: %s", self.name, type(exc).__name__, exc)
                    acquired = False
                with self._cond:
                    if acquired and not self._stop_event.is_set():
                        self._renewed_at = attempt_start
                    self._cond.notify_all()
            interval = self.retry_period if leading else self.retry_period * (1 + JITTER * random.random())
            self._clock.wait(self._stop_event, interval)

    def _watch(self) -> None:
        """Turn leadership changes into callbacks, in order; step down when renewals stop succeeding."""
        while True:
            with self._cond:
                while True:
                    events = list(self._leader_events)
                    self._leader_events.clear()
                    holds = self._holds_locked() and not self._stopped
                    want = holds and (self._leading or not self._closing)
                    if events or want != self._leading or self._stopped:
                        break
                    timeout = None
                    if self._leading and self._renewed_at is not None:
                        timeout = max(self._renewed_at + self.renew_deadline - self._clock.now(), 0.0) + 0.001
                    self._cond.wait(timeout)
                stopped = self._stopped
            for identity in events:
                self._call("on_new_leader", self.on_new_leader, identity)
            if want and not self._leading:
                self._leading = True
                log.info("leader election %s: %s started leading", self.name, self.identity)
                self._call("start", self._started_cb)
                self._call("on_started_leading", self.on_started_leading)
            elif not want and self._leading:
                self._leading = False
                log.info("leader election %s: %s stopped leading", self.name, self.identity)
                self._call("stop", self._stopped_cb)
                self._call("on_stopped_leading", self.on_stopped_leading)
            if stopped and not self._leading:
                return

    def _call(self, what: str, func: Callable[..., Any] | None, *args: Any) -> None:
        if func is None:
            return
        try:
            func(*args)
        except Exception:
            log.exception("leader election %s: %s callback failed", self.name, what)

    # ----------------------------------------------------------- the Lease
    def _path(self, collection: bool = False) -> str:
        base = f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases"
        return base if collection else f"{base}/{self.name}"

    def _request(self, method: str, lease: Lease | None = None) -> Lease:
        config = self._config
        assert config is not None
        body = json.dumps(lease.to_dict()).encode() if lease is not None else None
        response = config.transport.request(
            method,
            self._path(collection=method == "POST"),
            body=body,
            content_type="application/json" if body is not None else None,
            timeout=max(self.retry_period, self.renew_deadline / 2),
            stop_event=self._stop_event,
        )
        return Lease.from_dict(response.json())

    def _spec(
        self, holder: str, transitions: int, acquire_time: datetime.datetime | None, duration: float | None = None
    ) -> LeaseSpec:
        now = datetime.datetime.now(datetime.timezone.utc)
        spec: LeaseSpec = LeaseSpec(  # type: ignore[call-arg]
            holder_identity=holder,
            lease_duration_seconds=int(round(duration or self.lease_duration)),
            acquire_time=acquire_time or now,
            renew_time=now,
            lease_transitions=transitions,
        )
        return spec

    def _observe(self, lease: Lease) -> None:
        """Record what we read or wrote; a changed record restarts its lease-duration clock."""
        spec = lease.spec.to_dict() if lease.spec is not None else {}
        with self._cond:
            if spec != self._observed_spec:
                self._observed_spec = spec
                self._observed_at = self._clock.now()
            self._observed = lease
            holder = spec.get("holderIdentity") or None
            if holder and holder != self._reported_leader:
                self._reported_leader = holder
                self._leader_events.append(holder)
                self._cond.notify_all()

    def _is_leader_locked(self) -> bool:
        spec = self._observed_spec or {}
        return bool(spec.get("holderIdentity")) and spec.get("holderIdentity") == self.identity

    def _try_acquire_or_renew(self, renew_only: bool = False) -> bool:
        """One attempt (client-go's ``tryAcquireOrRenew``); True when we hold the Lease afterwards."""
        with self._cond:
            observed = self._observed
            leader = self._is_leader_locked()
            valid = self._clock.now() < self._observed_at + self._observed_duration_locked()
        if leader and valid and observed is not None:  # fast path: renew what we wrote last
            spec = observed.spec or LeaseSpec()
            try:
                self._observe(
                    self._request(
                        "PUT",
                        observed.evolve(spec=self._spec(self.identity, spec.lease_transitions or 0, spec.acquire_time)),
                    )
                )
                return True
            except CloudcoilError as exc:
                log.info("leader election %s: renew failed: %s", self.name, exc)
        try:
            current = self._request("GET")
        except ResourceNotFound:
            if renew_only:
                return False
            lease = Lease(
                metadata=ObjectMeta(  # type: ignore[call-arg]
                    name=self.name, namespace=self.namespace, labels=self._lease_labels() or None
                ),
                spec=self._spec(self.identity, 0, None),
            )
            try:
                self._observe(self._request("POST", lease))
            except CloudcoilError as exc:
                log.info("leader election %s: could not create the Lease: %s", self.name, exc)
                return False
            return True
        except CloudcoilError as exc:
            log.info("leader election %s: could not read the Lease: %s", self.name, exc)
            return False
        self._observe(current)
        with self._cond:
            record = dict(self._observed_spec or {})
            leader = self._is_leader_locked()
            valid = self._clock.now() < self._observed_at + self._observed_duration_locked()
        holder = record.get("holderIdentity")
        if holder and valid and not leader:
            return False  # someone else holds a lease that has not expired
        if renew_only and not leader:
            return False
        old = current.spec or LeaseSpec()
        if leader:
            desired = self._spec(self.identity, old.lease_transitions or 0, old.acquire_time)
        else:
            desired = self._spec(self.identity, (old.lease_transitions or 0) + 1, None)
        labels = self._lease_labels()
        meta = current.metadata
        if labels and meta is not None and any((meta.labels or {}).get(k) != v for k, v in labels.items()):
            current = current.evolve(metadata=meta.evolve(labels={**(meta.labels or {}), **labels}))
        try:
            self._observe(self._request("PUT", current.evolve(spec=desired)))
        except CloudcoilError as exc:  # 409: someone else wrote first
            log.info("leader election %s: could not %s the Lease: %s", self.name, "renew" if leader else "acquire", exc)
            return False
        return True

    def _lease_labels(self) -> dict[str, str]:
        """Labels the Lease carries (none here; a shard's Lease names its ring), set when it is
        created or acquired."""
        return {}

    def _observed_duration_locked(self) -> float:
        spec = self._observed_spec or {}
        return float(spec.get("leaseDurationSeconds") or self.lease_duration)

    def _release(self) -> None:
        """Write an empty holder if we hold the Lease (client-go's ``release``)."""
        with self._cond:
            observed = self._observed
            leader = self._is_leader_locked()
        if not leader or observed is None:
            return
        spec = observed.spec or LeaseSpec()
        released = observed.evolve(spec=self._spec("", spec.lease_transitions or 0, None, duration=1))
        config = self._config
        assert config is not None
        response = config.transport.request(
            "PUT",
            self._path(),
            body=json.dumps(released.to_dict()).encode(),
            content_type="application/json",
            timeout=max(self.retry_period, self.renew_deadline / 2),
        )
        self._observe(Lease.from_dict(response.json()))
        log.info("leader election %s: %s released the Lease", self.name, self.identity)
