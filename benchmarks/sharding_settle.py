"""Sharded controllers settling on kube-apiserver: 3 replicas (one process) over N ConfigMaps, then a 4th joining.

Run (needs the real tier's binaries: ``KUBEBUILDER_ASSETS``, see tests/real/conftest.py)::

    .venv/bin/python benchmarks/sharding_settle.py [--objects 3000]

Prints the seconds until every object is labelled with the shard the ring of the live members gives
it, carries no drain label, and was reconciled (3 replicas started one after the other), then, once a
4th replica starts, the seconds until the same holds for 4, how many objects moved and how many drains
the old replicas acknowledged. The replicas share one process (and its CPU): a measure of the
protocol's round trips, not of throughput (the multi-process benchmarks are elsewhere).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

RING = "bench"
SHARD = f"shard.cloudcoil.dev/{RING}"
DRAIN = f"drain.cloudcoil.dev/{RING}"


def main() -> None:
    from cluster_support import FAST

    from cloudcoil_cache.caching import Cache
    from cloudcoil_cache.client import Config
    from cloudcoil_cache.controller import Controller, Manager, Ring
    from cloudcoil_cache.controller._ring import HashRing, hash_key
    from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
    from cloudcoil_cache.testing import RealAPIServer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=3000)
    args = parser.parse_args()
    reconciled: dict[str, str] = {}
    cond = threading.Condition()
    with RealAPIServer() as real, tempfile.TemporaryDirectory() as tmp:
        kubeconfig = str(real.write_kubeconfig(Path(tmp) / "kubeconfig"))
        plain = Config(kubeconfig=kubeconfig, cache=False)
        client = ConfigMap.client(plain)
        for i in range(args.objects):
            client.create(ConfigMap.from_dict({"metadata": {"name": f"w-{i}", "namespace": "default"}}))
        replicas: list[tuple[Manager, Config, Controller]] = []

        def start(name: str) -> None:
            config = Config(kubeconfig=kubeconfig, namespace="default", cache=Cache(resources=[], tuning=FAST))
            ctl = Controller(ConfigMap, config=config, namespace="default", name=RING)

            def reconcile(cm: Any) -> None:
                with cond:
                    reconciled[cm.name] = name
                    cond.notify_all()

            ctl.reconcile(reconcile)
            ring = Ring(RING, identity=name, lease_duration=6, renew_deadline=4, retry_period=0.5)
            manager = Manager(ctl, config=config, sharding=ring)
            manager.start()
            replicas.append((manager, config, ctl))

        def settled(members: list[str]) -> dict[str, str] | None:
            ring = HashRing(members)
            labels = {cm.metadata.name: cm.metadata.labels or {} for cm in client.live_list("default").items}
            for name, lbl in labels.items():
                want = ring.owner(hash_key("", "ConfigMap", "default", name))
                if lbl.get(SHARD) != want or DRAIN in lbl or reconciled.get(name) != want:
                    return None
            return {name: lbl[SHARD] for name, lbl in labels.items()}

        def wait(members: list[str]) -> dict[str, str]:
            while True:
                with cond:
                    cond.wait(0.5)  # a pass, or half a second: look at the server again
                done = settled(members)
                if done is not None:
                    return done

        try:
            began = time.monotonic()
            for name in ("bench-a", "bench-b", "bench-c"):
                start(name)
            before = wait(["bench-a", "bench-b", "bench-c"])
            print(f"3 replicas: {args.objects} objects settled in {time.monotonic() - began:.1f}s", flush=True)
            drains = sum(c.status().sharding.drains for _, _, c in replicas)
            began = time.monotonic()
            start("bench-d")
            after = wait(["bench-a", "bench-b", "bench-c", "bench-d"])
            moved = sum(1 for name in before if before[name] != after[name])
            drained = sum(c.status().sharding.drains for _, _, c in replicas) - drains
            print(
                f"a 4th replica: settled in {time.monotonic() - began:.1f}s, {moved} moved "
                f"({moved / args.objects:.1%}), {drained} drains acknowledged",
                flush=True,
            )
        finally:
            for manager, config, _ in replicas:
                manager.stop()
                config.close()
            plain.close()


if __name__ == "__main__":
    main()
