"""Prometheus metrics of a Manager (a private registry): client-go's workqueue_*, controller-runtime's
controller_runtime_*, leader election and informer gauges. Needs the ``metrics`` extra."""

from __future__ import annotations

import time
from typing import Any, Iterator, Protocol

from cloudcoil_cache.controller._controller import Controller
from cloudcoil_cache.controller._leader import LeaderElection
from cloudcoil_cache.controller._observe import ControllerObserver
from cloudcoil_cache.controller._queue import QueueHooks

__all__ = ["ManagerMetrics", "Measured", "metrics_available"]


class Measured(Protocol):
    """What the metrics read from a Manager (its controllers, election and informers), so that this
    module does not import the Manager that owns it."""

    @property
    def controllers(self) -> list[Controller]: ...

    @property
    def leader_election(self) -> LeaderElection | None: ...

    def informer_statuses(self) -> list[Any]: ...


#: client-go's workqueue histogram buckets: 1e-8 s .. 10 s, one per power of ten.
QUEUE_BUCKETS = tuple(10.0**e for e in range(-8, 2))
#: controller-runtime's reconcile-time buckets.
RECONCILE_BUCKETS = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.15,
    0.2,
    0.25,
    0.3,
    0.35,
    0.4,
    0.45,
    0.5,
    0.6,
    0.7,
    0.8,
    0.9,
    1.0,
    1.25,
    1.5,
    1.75,
    2.0,
    2.5,
    3.0,
    3.5,
    4.0,
    4.5,
    5,
    6,
    7,
    8,
    9,
    10,
    15,
    20,
    25,
    30,
    40,
    50,
    60,
)


def metrics_available() -> bool:
    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        return False
    return True


class _QueueHooks(QueueHooks):
    def __init__(self, metrics: ManagerMetrics, name: str) -> None:
        self._adds = metrics.adds.labels(name)
        self._retries = metrics.retries.labels(name)
        self._queued = metrics.queue_duration.labels(name)
        self._work = metrics.work_duration.labels(name)

    def added(self) -> None:
        self._adds.inc()

    def got(self, queued_seconds: float) -> None:
        self._queued.observe(queued_seconds)

    def finished(self, work_seconds: float) -> None:
        self._work.observe(work_seconds)

    def retried(self) -> None:
        self._retries.inc()


class _Observer(ControllerObserver):
    def __init__(self, metrics: ManagerMetrics, name: str) -> None:
        self._metrics = metrics
        self._name = name
        self._errors = metrics.reconcile_errors.labels(name)
        self._time = metrics.reconcile_time.labels(name)
        self._active = metrics.active_workers.labels(name)
        for result in ("success", "error", "requeue", "requeue_after"):
            metrics.reconcile_total.labels(name, result)  # every series exists from the start, at 0
        self._errors.inc(0)

    def queue_hooks(self) -> QueueHooks:
        return _QueueHooks(self._metrics, self._name)

    def reconciled(self, result: str, seconds: float) -> None:
        self._metrics.reconcile_total.labels(self._name, result).inc()
        if result == "error":
            self._errors.inc()
        self._time.observe(seconds)

    def workers(self, active: int) -> None:
        self._active.set(active)


class ManagerMetrics:
    """The metrics of one Manager, in a ``CollectorRegistry`` of its own (no global state)."""

    def __init__(self, manager: Measured) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        r = self.registry
        self.adds = Counter("workqueue_adds", "Total number of adds handled by workqueue", ["name"], registry=r)
        self.retries = Counter(
            "workqueue_retries", "Total number of retries handled by workqueue", ["name"], registry=r
        )
        self.queue_duration = Histogram(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            ["name"],
            buckets=QUEUE_BUCKETS,
            registry=r,
        )
        self.work_duration = Histogram(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            ["name"],
            buckets=QUEUE_BUCKETS,
            registry=r,
        )
        self.reconcile_total = Counter(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            ["controller", "result"],
            registry=r,
        )
        self.reconcile_errors = Counter(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            ["controller"],
            registry=r,
        )
        self.reconcile_time = Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            ["controller"],
            buckets=RECONCILE_BUCKETS,
            registry=r,
        )
        self.active_workers = Gauge(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            ["controller"],
            registry=r,
        )
        max_workers = Gauge(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            ["controller"],
            registry=r,
        )
        for controller in manager.controllers:
            controller.observer = _Observer(self, controller.name)
            max_workers.labels(controller.name).set(controller.workers)
        r.register(_PullCollector(manager))

    def render(self) -> tuple[bytes, str]:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class _PullCollector:
    """Gauges read at scrape time: queue depth and running work, leadership, informers."""

    def __init__(self, manager: Measured) -> None:
        self._manager = manager

    def describe(self) -> list[Any]:
        return []  # computed at collection time only

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        depth = GaugeMetricFamily("workqueue_depth", "Current depth of workqueue", labels=["name"])
        unfinished = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been observed by work_duration",
            labels=["name"],
        )
        longest = GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running",
            labels=["name"],
        )
        for controller in self._manager.controllers:
            stats = controller.queue_stats()
            depth.add_metric([controller.name], stats.depth if stats else 0)
            unfinished.add_metric([controller.name], stats.unfinished_work_seconds if stats else 0.0)
            longest.add_metric([controller.name], stats.longest_running_processor_seconds if stats else 0.0)
        yield depth
        yield unfinished
        yield longest

        election = self._manager.leader_election
        if election is not None:
            master = GaugeMetricFamily(
                "leader_election_master_status",
                "Gauge of if the reporting system is master of the relevant lease, 0 "
                "indicates backup, 1 indicates master. 'name' is the string used to "
                "identify the lease.",
                labels=["name"],
            )
            master.add_metric([election.name], 1.0 if election.is_leader() else 0.0)
            yield master

        yield from _shard_metrics(self._manager.controllers)

        labels = ["kind", "namespace", "label_selector"]
        objects = GaugeMetricFamily("cloudcoil_cache_informer_objects", "Objects held by the informer", labels=labels)
        synced = GaugeMetricFamily("cloudcoil_cache_informer_synced", "1 when the informer has synced", labels=labels)
        relists = CounterMetricFamily("cloudcoil_cache_informer_relists", "Relists of the informer", labels=labels)
        last_sync = GaugeMetricFamily(
            "cloudcoil_cache_informer_last_sync_timestamp_seconds",
            "Unix time of the informer's last complete list",
            labels=labels,
        )
        staleness = GaugeMetricFamily(
            "cloudcoil_cache_informer_staleness_seconds",
            "Seconds since the informer was last known current (0 when current)",
            labels=labels,
        )
        for status in self._manager.informer_statuses():
            values = [status.kind, status.namespace or "", status.label_selector or ""]
            objects.add_metric(values, status.object_count)
            synced.add_metric(values, 1.0 if status.synced else 0.0)
            relists.add_metric(values, float(getattr(status, "relist_count", 0) or 0))
            last = getattr(status, "last_sync_time", None)
            if last is not None:
                last_sync.add_metric(values, float(last))
            staleness.add_metric(values, _staleness(status))
        yield objects
        yield synced
        yield relists
        yield last_sync
        yield staleness


def _shard_metrics(controllers: list[Controller]) -> Iterator[Any]:
    """The sharded controllers' rings: members, Lease held, share, drains; the sharder's writes."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    statuses = [(c.name, c.status().sharding) for c in controllers]
    statuses = [(name, status) for name, status in statuses if status is not None]
    if not statuses:
        return
    members = GaugeMetricFamily("cloudcoil_cache_shard_members", "Live members of the ring", labels=["ring"])
    holds = GaugeMetricFamily(
        "cloudcoil_cache_shard_lease_held", "1 while this replica holds its shard Lease", labels=["ring", "identity"]
    )
    share = GaugeMetricFamily(
        "cloudcoil_cache_shard_objects", "Primaries this replica holds (its share)", labels=["name", "ring"]
    )
    drains = CounterMetricFamily(
        "cloudcoil_cache_shard_drains", "Objects this replica let go (drains acknowledged)", labels=["name", "ring"]
    )
    writes = CounterMetricFamily(
        "cloudcoil_cache_sharder_writes",
        "Label writes of the sharder run by this replica (assigned, moved, drain_requested)",
        labels=["ring", "what"],
    )
    rings: dict[str, Any] = {}
    for name, status in statuses:
        share.add_metric([name, status.ring], float(status.share))
        drains.add_metric([name, status.ring], float(status.drains))
        rings[status.ring] = status
    for ring, status in rings.items():
        members.add_metric([ring], float(len(status.members)))
        holds.add_metric([ring, status.identity], 1.0 if status.holds else 0.0)
        writes.add_metric([ring, "assigned"], float(status.assigned))
        writes.add_metric([ring, "moved"], float(status.moves))
        writes.add_metric([ring, "drain_requested"], float(status.drain_requests))
    yield from (members, holds, share, drains, writes)


def _staleness(status: Any) -> float:
    """Seconds since the informer was last current: the status field where the cache reports it."""
    for field in ("seconds_since_current", "staleness_seconds", "stale_seconds", "seconds_since_last_current"):
        value = getattr(status, field, None)
        if isinstance(value, (int, float)):
            return float(value)
    last = getattr(status, "last_sync_time", None)
    if status.last_error and isinstance(last, (int, float)):
        return max(time.time() - last, 0.0)
    return 0.0
