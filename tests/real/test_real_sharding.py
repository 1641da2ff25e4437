"""Sharding on kube-apiserver + etcd, replicas in one process: Leases, shard selectors, guarded label patches."""

from __future__ import annotations

import collections
import threading
import time
from typing import Any

import pytest
from cluster_support import FAST

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, Manager, Ring
from cloudcoil_cache.controller._ring import HashRing, hash_key
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap

pytestmark = pytest.mark.xdist_group("real-sharding")

SHARD = "shard.cloudcoil.dev/real"
DRAIN = "drain.cloudcoil.dev/real"


class _Passes:
    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.passes: dict[str, list[tuple[str, float, float]]] = collections.defaultdict(list)

    def reconcile(self, replica: str) -> Any:
        def reconcile(cm: Any) -> None:
            start = time.monotonic()
            ConfigMap.get(cm.name, cm.namespace)  # a live read: a pass that takes a moment
            with self.cond:
                self.passes[cm.name].append((replica, start, time.monotonic()))
                self.cond.notify_all()

        return reconcile

    def last_by(self, name: str) -> str | None:
        passes = self.passes.get(name)
        return max(passes, key=lambda p: p[2])[0] if passes else None

    def overlaps(self) -> int:
        count = 0
        for passes in self.passes.values():
            for i, a in enumerate(passes):
                count += sum(1 for b in passes[i + 1 :] if a[0] != b[0] and b[1] < a[2] and a[1] < b[2])
        return count


def _settled(config: Config, namespace: str, passes: _Passes, members: list[str]) -> bool:
    ring = HashRing(members)
    for cm in ConfigMap.client(config).live_list(namespace).items:
        labels = cm.metadata.labels or {}
        want = ring.owner(hash_key("", "ConfigMap", namespace, cm.metadata.name))
        if labels.get(SHARD) != want or DRAIN in labels or passes.last_by(cm.metadata.name) != want:
            return False
    return True


def test_three_replicas_then_a_fourth_on_the_real_server(kubeconfig: str, namespace: str) -> None:
    plain = Config(kubeconfig=kubeconfig, cache=False)
    client = ConfigMap.client(plain)
    for i in range(90):
        client.create(ConfigMap.from_dict({"metadata": {"name": f"w-{i}", "namespace": namespace}}))
    passes = _Passes()
    managers: list[tuple[Manager, Config, Controller]] = []

    def start(name: str) -> None:
        config = Config(kubeconfig=kubeconfig, cache=Cache(resources=[], tuning=FAST))
        ctl = Controller(ConfigMap, config=config, namespace=namespace, name="real")
        ctl.reconcile(passes.reconcile(name))
        ring = Ring(
            "real",
            identity=name,
            namespace=namespace,
            lease_duration=6,
            renew_deadline=4,
            retry_period=0.5,
            resync_period=2,
        )
        manager = Manager(ctl, config=config, sharding=ring)
        manager.start()
        managers.append((manager, config, ctl))

    def wait(members: list[str], what: str) -> None:
        deadline = time.monotonic() + 90
        with passes.cond:
            while not _settled(plain, namespace, passes, members):
                assert time.monotonic() < deadline, what
                passes.cond.wait(0.5)

    try:
        for name in ("real-a", "real-b", "real-c"):
            start(name)
        wait(["real-a", "real-b", "real-c"], "settled on three")
        drains = sum(c.status().sharding.drains for _, _, c in managers)
        start("real-d")
        wait(["real-a", "real-b", "real-c", "real-d"], "settled on four")
        assert sum(c.status().sharding.drains for _, _, c in managers) > drains
        assert passes.overlaps() == 0
        for _, _, ctl in managers:
            held = ctl.sources[ctl.kind].view.list()
            assert {cm.metadata.labels[SHARD] for cm in held} <= {ctl.sharding.identity}  # type: ignore[union-attr]
    finally:
        for manager, config, _ in managers:
            manager.stop()
            config.close()
        plain.close()
