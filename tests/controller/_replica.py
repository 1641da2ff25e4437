"""One manager replica for the leader-election tests: run as a process, reports events as JSON lines.

Usage: python _replica.py KUBECONFIG IDENTITY LEASE_DURATION RENEW_DEADLINE RETRY_PERIOD
Each stdout line is {"id": IDENTITY, "event": ..., "t": time.monotonic(), "wall": time.time(), ...}: "ready" (informers
synced), "started_leading", "stopped_leading", "new_leader" (with "leader"), "reconcile" (with "key"),
"exit". Manager.run() handles SIGTERM (graceful: the Lease is released).
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time

from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, LeaderElection, Manager
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap

_lock = threading.Lock()


def emit(identity: str, event: str, **fields: object) -> None:
    line = json.dumps({"id": identity, "event": event, "t": time.monotonic(), "wall": time.time(), **fields})
    with _lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def main() -> None:
    kubeconfig, identity, lease, renew, retry = sys.argv[1:6]
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format=f"%(asctime)s {identity} %(name)s %(message)s")
    config = Config(kubeconfig=kubeconfig, namespace="default")
    controller = Controller(ConfigMap, config=config, namespace="default")

    @controller.reconcile()
    def reconcile(cm: ConfigMap) -> None:
        emit(identity, "reconcile", key=f"{cm.namespace}/{cm.name}")

    election = LeaderElection(
        "replica-test",
        namespace="default",
        identity=identity,
        lease_duration=float(lease),
        renew_deadline=float(renew),
        retry_period=float(retry),
        on_started_leading=lambda: emit(identity, "started_leading"),
        on_stopped_leading=lambda: emit(identity, "stopped_leading"),
        on_new_leader=lambda leader: emit(identity, "new_leader", leader=leader),
    )
    manager = Manager(controller, config=config, leader_election=election)
    original_start = manager.start

    def start() -> Manager:
        started = original_start()
        emit(identity, "ready")
        return started

    manager.start = start  # type: ignore[method-assign]
    manager.run()
    config.close()
    emit(identity, "exit")


if __name__ == "__main__":
    main()
