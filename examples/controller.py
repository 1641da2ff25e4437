"""A controller: for every ConfigMap labelled ``mirror=yes``, keep an owned copy ``<name>-copy`` with the
same data - with leader election (run several replicas) and a health server.

    python examples/controller.py --duration 10            # a fake cluster with two mirrored ConfigMaps
    KUBECONFIG=~/.kube/config python examples/controller.py  # a real cluster, until Ctrl-C / SIGTERM

Without ``KUBECONFIG`` it starts the embedded fake API server. The copies are owned by their source
(a controller ownerReference): a change to a copy brings the source back to reconcile it, and
Kubernetes' garbage collector deletes a copy with its source (the fake server has no garbage
collector, so there a copy outlives its source).
"""

from __future__ import annotations

import argparse
import logging
import threading

from _fake_cluster import cluster

from cloudcoil_cache.apimachinery import ObjectMeta, OwnerReference
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, LeaderElection, Manager
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap


def mirror_controller(namespace: str) -> Controller:
    """The api.md example, filled in."""
    mirror = Controller(ConfigMap, namespace=namespace, label_selector="mirror=yes", workers=2).owns(ConfigMap)

    @mirror.reconcile()
    def sync(cm: ConfigMap, ctx) -> None:  # cm: a deep copy of the cached object, editable
        name = f"{cm.name}-copy"
        copy = ctx.cached(ConfigMap).get(name)  # a deep copy from the cache, never the API
        if copy is None:
            owner = OwnerReference(
                api_version="v1",
                kind="ConfigMap",
                name=cm.name,
                uid=cm.metadata.uid,
                controller=True,
                block_owner_deletion=True,
            )
            ConfigMap(
                metadata=ObjectMeta(name=name, namespace=cm.namespace, owner_references=[owner]), data=cm.data
            ).create()
            print(f"created {cm.namespace}/{name}", flush=True)
        elif (copy.data or {}) != (cm.data or {}):
            copy.data = cm.data
            copy.update()  # a stale resourceVersion raises ResourceConflict: retried with backoff
            print(f"updated {cm.namespace}/{name}", flush=True)

    return mirror


def main(argv: list[str] | None = None) -> dict[str, dict[str, str]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--duration", type=float, default=None, help="seconds to run (default: until SIGTERM)")
    parser.add_argument("--health-port", type=int, default=8081, help="0: any free port")
    parser.add_argument("--identity", default=None, help="this replica's name in the Lease")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    with cluster(pods={}) as server:
        if server is not None:  # the fake cluster: two ConfigMaps to mirror, one to leave alone
            for name, data in (("settings", {"color": "blue"}), ("limits", {"cpu": "2"})):
                server.create(
                    "configmaps",
                    {"metadata": {"name": name, "labels": {"mirror": "yes"}}, "data": data},
                    args.namespace,
                )
            server.create("configmaps", {"metadata": {"name": "private"}, "data": {"k": "v"}}, args.namespace)
        config = Config(namespace=args.namespace)
        manager = Manager(
            mirror_controller(args.namespace),
            config=config,
            leader_election=LeaderElection("configmap-mirror", namespace=args.namespace, identity=args.identity),
            health_port=args.health_port,
        )
        stop = threading.Event()
        timer = threading.Timer(args.duration, stop.set) if args.duration is not None else None
        if timer is not None:
            timer.name = "example-duration"
            timer.start()
        try:
            manager.run(stop)  # SIGTERM / Ctrl-C stop it gracefully too
        finally:
            if timer is not None:
                timer.cancel()
                timer.join()
        with config:
            copies = {
                cm.name: dict(cm.data or {})
                for cm in ConfigMap.list(namespace=args.namespace)
                if cm.name.endswith("-copy")
            }
        config.close()
    for name, data in sorted(copies.items()):
        print(f"copy {args.namespace}/{name} {data}", flush=True)
    return copies


if __name__ == "__main__":
    main()
