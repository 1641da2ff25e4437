"""What read-your-writes costs a cached read: Pod.get/Pod.list timed with no write ever made, after
writes whose events were delivered (nothing pending), and right after each write (waiting for it).

Run: .venv/bin/python benchmarks/read_your_writes.py [--pods 1000] [--reads 20000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod, seed_pods


def per_read_us(fn, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--reads", type=int, default=20000)
    args = parser.parse_args()
    with FakeAPIServer() as server, tempfile.TemporaryDirectory() as tmp:
        seed_pods(server, args.pods)
        kubeconfig = server.write_kubeconfig(Path(tmp) / "kubeconfig")
        config = Config(kubeconfig=str(kubeconfig), cache=Cache(resources=[Pod], mode="strict"))
        with config:
            name = Pod.list(all_namespaces=True).items[0]
            ns, pod = name.namespace, name.name
            get = lambda: Pod.get(pod, namespace=ns)  # noqa: E731
            lst = lambda: Pod.list(namespace=ns)  # noqa: E731
            rows = [("no write made", per_read_us(get, args.reads), per_read_us(lst, args.reads // 20))]
            for i in range(20):
                Pod.from_dict(make_pod(f"rw-{i}", ns)).create()
            Pod.get("rw-19", namespace=ns)  # waits until the last write is delivered
            rows.append(("writes made, none pending", per_read_us(get, args.reads), per_read_us(lst, args.reads // 20)))
            waits = []
            for i in range(50):
                created = Pod.from_dict(make_pod(f"rw2-{i}", ns)).create()
                start = time.perf_counter()
                Pod.get(created.name, namespace=ns)
                waits.append(time.perf_counter() - start)
            waits.sort()
        print(f"{'case':<28}{'Pod.get µs':>12}{'Pod.list(ns) µs':>18}")
        for case, g, li in rows:
            print(f"{case:<28}{g:>12.1f}{li:>18.1f}")
        print(
            f"get right after its own create: p50 {waits[len(waits) // 2] * 1e3:.2f} ms, "
            f"max {waits[-1] * 1e3:.2f} ms (waiting for the watch to deliver it)"
        )


if __name__ == "__main__":
    main()
