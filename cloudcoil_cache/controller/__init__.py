"""Controllers on the informer cache: a work queue with per-item backoff, reconcile loops with
``ctx.cached``, a Manager with Lease-based leader election, health and Prometheus metrics.

Sync-first and threaded (client-go's workqueue and leaderelection, controller-runtime's shape)::

    mirror = Controller(ConfigMap, namespace="default", label_selector="mirror=yes").owns(ConfigMap)

    @mirror.reconcile()
    def sync(cm, ctx):
        ...

    Manager(mirror, leader_election=LeaderElection("mirror"), health_port=8081).run()

Active-active replicas, each reconciling its share: ``Manager(mirror, sharding=Ring("mirror"))`` (docs/sharding.md).

An operator's writes: ``@ctl.finalize("example.com/cleanup")``, ``ctx.set_status(...)``,
``ctx.condition("Synced", True, reason=...)``, ``ctx.event(...)`` and ``ctx.ensure(child)``.
"""

from cloudcoil_cache.controller._context import CachedKind, CachedResources, Context
from cloudcoil_cache.controller._controller import Controller
from cloudcoil_cache.controller._events import EventRecorder
from cloudcoil_cache.controller._fence import LeadershipLost
from cloudcoil_cache.controller._finalizers import ensure_finalizer, remove_finalizer
from cloudcoil_cache.controller._keys import ResourceKey
from cloudcoil_cache.controller._leader import LeaderElection
from cloudcoil_cache.controller._manager import Manager
from cloudcoil_cache.controller._mutations import mutate
from cloudcoil_cache.controller._outcomes import Result, TerminalError, Wait
from cloudcoil_cache.controller._predicates import (
    AllOf,
    AnnotationsChanged,
    AnyOf,
    Funcs,
    GenerationChanged,
    LabelsChanged,
    Predicate,
    ResourceVersionChanged,
    all_of,
    any_of,
    default_predicates,
)
from cloudcoil_cache.controller._queue import Priority, QueueHooks, QueueStats, WorkQueue
from cloudcoil_cache.controller._ratelimit import (
    BucketRateLimiter,
    ItemExponentialRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_rate_limiter,
)
from cloudcoil_cache.controller._shard_webhook import register_shard_webhook
from cloudcoil_cache.controller._sharding import Ring, ShardStatus
from cloudcoil_cache.controller._stages import StageScope
from cloudcoil_cache.controller._status import get_condition, set_condition, update_status
from cloudcoil_cache.controller._status_report import ControllerStatus
from cloudcoil_cache.controller._timeout import ReconcileTimeout

__all__ = [
    "AllOf",
    "AnnotationsChanged",
    "AnyOf",
    "BucketRateLimiter",
    "CachedKind",
    "CachedResources",
    "Context",
    "Controller",
    "ControllerStatus",
    "EventRecorder",
    "Funcs",
    "GenerationChanged",
    "ItemExponentialRateLimiter",
    "LabelsChanged",
    "LeaderElection",
    "LeadershipLost",
    "Manager",
    "MaxOfRateLimiter",
    "Predicate",
    "Priority",
    "QueueHooks",
    "QueueStats",
    "RateLimiter",
    "ReconcileTimeout",
    "ResourceKey",
    "ResourceVersionChanged",
    "Result",
    "Ring",
    "ShardStatus",
    "StageScope",
    "TerminalError",
    "Wait",
    "WorkQueue",
    "all_of",
    "any_of",
    "default_predicates",
    "default_rate_limiter",
    "ensure_finalizer",
    "get_condition",
    "mutate",
    "register_shard_webhook",
    "remove_finalizer",
    "set_condition",
    "update_status",
]
