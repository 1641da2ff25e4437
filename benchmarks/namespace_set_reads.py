"""What a cached read of a kind watched over a set of namespaces costs (``Cache(namespaces=[...])``,
one informer per namespace behind the kind's ``SetReader``), against the same read of one informer
(``Cache(namespaces="default")``) and against the read policy's path (``caching._reads``: what
every read over a set took before the ``SetReader``).

Both caches hold the same pods (``--pods`` in ``default``, 100 in each other namespace of the set).
Reports the median CPU time per read of several interleaved rounds (load hits all alike).

Run: .venv/bin/python benchmarks/namespace_set_reads.py [--pods 1000] [--reads 20000] [--rounds 7]

Issue 35 follow-up (branch ns-dyn, load average 4-8 from other work, 7 rounds; ``Pod.get`` and
``Pod.list`` run in a copied context, ~0.1 µs each): ``Pod.get`` over a set of 3 namespaces 0.67 µs
(one informer's 0.56 µs; the read policy's path it took before 3.43 µs); a cached client's get 0.46 µs
(one informer's 0.37 µs); a list of one namespace of 1,000 pods 6.95 µs (one informer's 7.36 µs); an
all-namespaces list of the 1,200 pods of the set 15.1 µs (the policy's path 23.8 µs).
"""

from __future__ import annotations

import argparse
import collections
import contextvars
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

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
    measured: dict[str, list[float]] = {}
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
        with over:
            in_over = contextvars.copy_context()  # ``over`` current: Pod.get reads through it
            with one:
                in_one = contextvars.copy_context()
                one_client = one.client_for(Pod, cached=True)
                set_client = over.client_for(Pod, cached=True)
                every = ReadRequest("Pod", None, None, True)
                reads: dict[str, Callable[[], object]] = {
                    "one: Pod.get": lambda: in_one.run(Pod.get, name, "default"),
                    "set: Pod.get": lambda: in_over.run(Pod.get, name, "default"),
                    "one: client.get": lambda: one_client.get(name, "default"),
                    "set: client.get": lambda: set_client.get(name, "default"),
                    "set: policy get (before)": lambda: drive(
                        read(set_cache, Pod, ReadRequest("Pod", "default", name))
                    ),
                    "one: Pod.list ns": lambda: in_one.run(Pod.list, "default"),
                    "set: Pod.list ns": lambda: in_over.run(Pod.list, "default"),
                    "set: Pod.list all": lambda: in_over.run(Pod.list, None, True),
                    "set: policy list all (before)": lambda: drive(read(set_cache, Pod, every)),
                }
                measured = measure(reads, args, server, set_cache)
    for label, values in measured.items():
        print(f"{label:<32} median {statistics.median(values):9.2f} µs  ({' '.join(f'{t:.2f}' for t in values)})")


def measure(
    reads: dict[str, Callable[[], object]], args: argparse.Namespace, server: FakeAPIServer, set_cache: Cache
) -> dict[str, list[float]]:
    """Each read, ``args.rounds`` interleaved rounds; checks they all came from the caches."""
    covering: Any = reads["set: Pod.list all"]()
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
    return times


if __name__ == "__main__":
    main()
