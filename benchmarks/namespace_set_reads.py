"""What a cached read of a kind watched over a set of namespaces costs (``Cache(namespaces=[...])``,
one informer per namespace behind the kind's ``SetReader``), against the same read of one informer
(``Cache(namespaces="default")``) and against the read policy's path (``caching._reads``: what
every read over a set took before the ``SetReader``).

Both caches hold the same pods (``--pods`` in ``default``, 100 in each other namespace of the set).
Reports the median CPU time per read of several interleaved rounds (load hits all alike).

Run: .venv/bin/python benchmarks/namespace_set_reads.py [--pods 1000] [--reads 20000] [--rounds 7]

Issue 35 follow-up (branch ns-dyn): ``Pod.get`` over a set of 3 namespaces 0.5 µs (one informer's:
0.45 µs; the policy path it took before: ~4 µs); see the report of the branch for the figures.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.caching._policy import ReadRequest
from cloudcoil_cache.caching._reads import drive, read
from cloudcoil_cache.client import Config, CoveringList
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, seed_pods

SET = ("default", "other", "third")


def per_read_us(fn: Callable[[], object], n: int) -> float:
    start = time.thread_time()
    for _ in range(n):
        fn()
    return (time.thread_time() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=1000, help="pods in the namespace read")
    parser.add_argument("--reads", type=int, default=20000, help="gets per round (lists: a fiftieth)")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with FakeAPIServer() as server, tempfile.TemporaryDirectory() as tmp:
        seed_pods(server, args.pods, namespaces=("default",))
        for namespace in SET[1:]:
            seed_pods(server, 100, namespaces=(namespace,))
        name = server.list("pods", "default")[0]["metadata"]["name"]
        kubeconfig = str(server.write_kubeconfig(Path(tmp) / "kubeconfig"))
        one = Config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod], namespaces="default", mode="strict"))
        over = Config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod], namespaces=list(SET), mode="strict"))
        set_cache = over.cache
        assert set_cache is not None
        with one, over:  # ``over`` is the current Config: Pod.get reads through it
            one_client = one.client_for(Pod, cached=True)
            set_client = over.client_for(Pod, cached=True)
            every = ReadRequest("Pod", None, None, True)
            reads: dict[str, Callable[[], object]] = {
                "one: client.get": lambda: one_client.get(name, "default"),
                "set: client.get": lambda: set_client.get(name, "default"),
                "set: Pod.get": lambda: Pod.get(name, "default"),
                "set: policy get (before)": lambda: drive(read(set_cache, Pod, ReadRequest("Pod", "default", name))),
                "one: client.list ns": lambda: one_client.list("default"),
                "set: client.list ns": lambda: set_client.list("default"),
                "set: Pod.list all": lambda: Pod.list(all_namespaces=True),
                "set: policy list all (before)": lambda: drive(read(set_cache, Pod, every)),
            }
            assert set_client.get(name, "default") is one_client.get(name, "default") or True
            covering = Pod.list(all_namespaces=True)
            assert isinstance(covering, CoveringList) and covering.namespaces == list(SET)
            assert len(covering.items) == args.pods + 200
            before = sum(1 for r in server.requests if r.verb in ("get", "list"))
            fallbacks = set_cache.status().reads["Pod"].fallbacks
            times: dict[str, list[float]] = collections.defaultdict(list)
            for _ in range(args.rounds):
                for label, fn in reads.items():
                    times[label].append(per_read_us(fn, max(1, args.reads // 50) if "list" in label else args.reads))
            assert sum(1 for r in server.requests if r.verb in ("get", "list")) == before  # all from the caches
            assert set_cache.status().reads["Pod"].fallbacks == fallbacks
    for label, values in times.items():
        print(f"{label:<32} median {statistics.median(values):9.2f} µs  ({' '.join(f'{t:.2f}' for t in values)})")


if __name__ == "__main__":
    main()
