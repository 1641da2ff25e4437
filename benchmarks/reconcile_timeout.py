"""What ``reconcile_timeout`` costs a sync reconcile: a helper thread per call.

Runs a controller over N ConfigMaps on the fake API server, a trivial reconcile, with and without
``reconcile_timeout``; each round enqueues every key again and times until all are reconciled.
Prints the median and min per round, and µs per reconcile. Run::

    .venv/bin/python benchmarks/reconcile_timeout.py                 # 2,000 keys, 2 workers, 5 rounds
    .venv/bin/python benchmarks/reconcile_timeout.py --keys 500 --workers 4
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.testing import FakeAPIServer


def rounds(kubeconfig: str, keys: int, workers: int, n: int, timeout: float | None) -> list[float]:
    config = Config(kubeconfig=kubeconfig, namespace="default")
    ctl = Controller(ConfigMap, config=config, workers=workers, reconcile_timeout=timeout, resync_period=None)
    cond = threading.Condition()
    seen = [0]

    @ctl.reconcile()
    def reconcile(cm: Any) -> None:
        with cond:
            seen[0] += 1
            cond.notify_all()

    times = []
    with ctl:
        with cond:
            cond.wait_for(lambda: seen[0] >= keys, 120)
        names = [f"cm-{i}" for i in range(keys)]
        for _ in range(n):
            with cond:
                seen[0] = 0
            start = time.perf_counter()
            for name in names:
                ctl.enqueue(name)
            with cond:
                cond.wait_for(lambda: seen[0] >= keys, 120)
            times.append(time.perf_counter() - start)
    config.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with FakeAPIServer() as server, tempfile.TemporaryDirectory() as tmp:
        for i in range(args.keys):
            server.create("configmaps", {"metadata": {"name": f"cm-{i}", "namespace": "default"}}, "default")
        kubeconfig = str(server.write_kubeconfig(Path(tmp) / "kubeconfig"))
        for label, timeout in (("no reconcile_timeout", None), ("reconcile_timeout=30", 30.0), ("none again", None)):
            times = rounds(kubeconfig, args.keys, args.workers, args.rounds, timeout)
            med = statistics.median(times)
            print(
                f"{label:22} {args.keys} keys, {args.workers} workers: median {med * 1000:7.1f} ms "
                f"(min {min(times) * 1000:7.1f}), {med / args.keys * 1e6:6.1f} µs per reconcile"
            )


if __name__ == "__main__":
    main()
