"""Helpers for the sharding tests: replicas of one sharded controller in one process, and a log of every pass."""

from __future__ import annotations

import threading
import time
import urllib.request
from typing import Any, Callable

from cluster_support import FAST

from cloudcoil_cache.admission import AdmissionWebhook, WebhookServer
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, Manager, Ring, register_shard_webhook
from cloudcoil_cache.controller._ring import HashRing, hash_key
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.testing import FakeAPIServer

RING = "widgets"
SHARD = f"shard.cloudcoil.dev/{RING}"
DRAIN = f"drain.cloudcoil.dev/{RING}"
#: Short Leases: a killed replica's objects move within ~4 s (renew_deadline < lease_duration, as required).
TIMINGS = {"lease_duration": 4.0, "renew_deadline": 3.0, "retry_period": 0.3}


class PassLog:
    """Every pass's (replica, start, end) per key, on one monotonic clock; a Condition notified at each end."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.passes: dict[str, list[tuple[str, float, float]]] = {}
        self._open: dict[tuple[str, str], float] = {}

    def reconcile(self, replica: str) -> Callable[[Any], None]:
        def reconcile(cm: Any) -> None:
            key = f"{cm.namespace}/{cm.name}"
            start = time.monotonic()
            with self._cond:
                self._open[(replica, key)] = start
            # a pass that takes a moment (a live read): an overlap between replicas would show
            ConfigMap.get(cm.name, cm.namespace)
            with self._cond:
                del self._open[(replica, key)]
                self.passes.setdefault(key, []).append((replica, start, time.monotonic()))
                self._cond.notify_all()

        return reconcile

    def overlaps(self) -> list[tuple[str, tuple[str, float, float], tuple[str, float, float]]]:
        """Passes of one key by two replicas whose times intersect."""
        found = []
        with self._cond:
            items = {k: sorted(v, key=lambda p: p[1]) for k, v in self.passes.items()}
        for key, passes in items.items():
            for i, a in enumerate(passes):
                for b in passes[i + 1 :]:
                    if a[0] != b[0] and b[1] < a[2] and a[1] < b[2]:
                        found.append((key, a, b))
        return found

    def last_by(self, key: str) -> str | None:
        with self._cond:
            passes = self.passes.get(key)
            return max(passes, key=lambda p: p[2])[0] if passes else None

    def by(self, key: str) -> list[str]:
        with self._cond:
            return [p[0] for p in self.passes.get(key, [])]

    def wait(self, predicate: Callable[[], bool], timeout: float, what: str) -> None:
        """Wait (on the Condition, re-checking at each pass and at least every 0.2 s) until ``predicate()``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"not within {timeout}s: {what}")
                self._cond.wait(min(left, 0.2))


class Replica:
    """One replica: its own Config (and caches), a Controller of ConfigMaps in ``default``, a Manager
    sharded by a ring ``widgets`` with identity ``name``."""

    def __init__(
        self,
        kubeconfig: str,
        name: str,
        log: PassLog,
        *,
        labels: bool = True,
        webhook: bool = False,
        health: bool = False,
        finalizer: list[str] | None = None,
        **ring: Any,
    ) -> None:
        self.name = name
        self.config = Config(kubeconfig=kubeconfig, namespace="default", cache=Cache(resources=[], tuning=FAST))
        self.ring = Ring(RING, identity=name, labels=labels, resync_period=1.0, **{**TIMINGS, **ring})
        self.controller = Controller(ConfigMap, config=self.config, namespace="default", name="widgets")
        self.controller.reconcile(log.reconcile(name))
        if finalizer is not None:  # a finalizer whose function records the objects it ran for

            @self.controller.finalize("example.com/cleanup")
            def cleanup(cm: Any) -> None:
                finalizer.append(f"{name}:{cm.name}")

        self.webhook: AdmissionWebhook | None = None
        self.server: WebhookServer | None = None
        if webhook:  # the ring's mutating webhook, served by this replica (port 0, a self-signed certificate)
            self.webhook = register_shard_webhook(AdmissionWebhook(), self.ring, [self.controller])
            self.server = WebhookServer(self.webhook, host="127.0.0.1", port=0, max_concurrency=4)
        self.manager = Manager(
            self.controller,
            config=self.config,
            sharding=self.ring,
            webhooks=self.server,
            health_port=0 if health else None,
        )
        self.stopped = False

    def metrics(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.manager.health_port}/metrics", timeout=10) as response:
            return str(response.read().decode())

    def start(self) -> Replica:
        self.manager.start()
        return self

    def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            self.manager.stop()
            self.config.close()

    def kill(self) -> None:
        """As a SIGKILL looks from outside: the Leases stop being renewed and are not released (the
        replica's own workers stop as a replica that cannot renew does)."""
        self.ring.sharder_election._stop(release=False)
        self.ring.lease._stop(release=False)


def configmaps(server: FakeAPIServer) -> list[dict[str, Any]]:
    return server.list("configmaps", "default")


def desired(members: list[str], name: str) -> str | None:
    return HashRing(members).owner(hash_key("", "ConfigMap", "default", name))


def settled(server: FakeAPIServer, log: PassLog, members: list[str]) -> bool:
    """Every object labelled with the shard the ring of ``members`` gives it, no drain, and its last
    pass made by that replica."""
    for cm in configmaps(server):
        labels = cm["metadata"].get("labels") or {}
        name = cm["metadata"]["name"]
        want = desired(members, name)
        if labels.get(SHARD) != want or DRAIN in labels or log.last_by(f"default/{name}") != want:
            return False
    return True
