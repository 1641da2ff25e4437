"""What ``Pod.list(index=(name, value))`` costs over 10,000 cached pods against copying the same
matches out of a dict, in one process, one run (issue 35: O(matches), ≤ 2× the dict copy).

Three indexes file the pods in buckets of three sizes (the node: 16 nodes, ~625 pods each; a hash
of the name into 100 buckets, ~100 each; into 1,000 buckets, ~10 each). For each, ``Pod.list`` by
the index is timed against ``[pods[k] for k in keys]``: the matches' keys, known in advance, looked
up in a dict of every pod (what an index does, with nothing around it). Also timed: a field
selector ``spec.nodeName=...`` served by an index named after the field, and the same selector
answered by a scan of every pod (no such index), to show what the index saves. Median of several
interleaved rounds, CPU time of the thread; the ratios are computed round by round in the same run.

Run: .venv/bin/python benchmarks/index_list.py [--pods 10000] [--rounds 7] [--reads 2000]
"""

from __future__ import annotations

import argparse
import collections
import statistics
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any, Callable

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, seed_pods

#: index name -> (function, the value read); the value is a bucket of the named size
BUCKETS = {"node": 16, "hash100": 100, "hash1000": 1000}


def node_of(pod: Any) -> str | None:
    return None if pod.spec is None else pod.spec.node_name


def hashed(buckets: int) -> Callable[[Any], str]:
    def bucket(pod: Any) -> str:
        return str(zlib.crc32(pod.metadata.name.encode()) % buckets)

    return bucket


def per_read_us(fn: Callable[[], object], n: int) -> float:
    start = time.thread_time()  # CPU time of this thread: on a loaded machine, wall time counts others
    for _ in range(n):
        fn()
    return (time.thread_time() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--reads", type=int, default=2000, help="reads of the smallest bucket per round")
    args = parser.parse_args()
    functions: dict[str, Callable[[Any], Any]] = {
        "node": node_of,
        "hash100": hashed(100),
        "hash1000": hashed(1000),
        "spec.nodeName": node_of,
    }
    with FakeAPIServer() as server, tempfile.TemporaryDirectory() as tmp:
        seed_pods(server, args.pods, namespaces=("default",))
        seed_pods(server, 10, namespaces=("small",))  # a plain Pod.list of 10 pods: the fixed cost of any list
        kubeconfig = server.write_kubeconfig(Path(tmp) / "kubeconfig")
        scan_cache = Cache(resources=[Pod], mode="strict")  # no index: a field selector scans
        config = Config(
            kubeconfig=str(kubeconfig), cache=Cache(resources=[Pod], mode="strict", indexes={Pod: functions})
        )
        scan_config = Config(kubeconfig=str(kubeconfig), cache=scan_cache)
        with scan_config, config:  # config innermost: Pod.list reads through it
            informer = config.cache.get_informer(Pod, sync=True)  # type: ignore[union-attr]
            assert informer is not None
            every = informer.list("default")
            assert len(Pod.list("small").items) == 10
            assert len(every) == args.pods
            pods = {(p.metadata.namespace, p.metadata.name): p for p in every}
            reads: dict[str, Callable[[], object]] = {}
            sizes: dict[str, int] = {}
            for name in BUCKETS:
                value = functions[name](every[0])
                keys = [k for k, p in pods.items() if functions[name](p) == value]
                sizes[name] = len(keys)
                found = Pod.list(index=(name, value))
                assert sorted(p.name for p in found) == sorted(k[1] for k in keys)  # the same matches
                reads[f"Pod.list index {name}"] = lambda name=name, value=value: Pod.list(index=(name, value))
                reads[f"dict copy {name}"] = lambda keys=keys: [pods[k] for k in keys]
            node = node_of(every[0])
            selector = f"spec.nodeName={node}"
            reads["Pod.list 10 pods, no index"] = lambda: Pod.list("small")
            reads["field selector, index"] = lambda: Pod.list(field_selector=selector)
            scan_client = scan_config.client_for(Pod, cached=True)
            assert len(scan_client.list(field_selector=selector).items) == sizes["node"]
            reads["field selector, scan"] = lambda: scan_client.list(field_selector=selector)
            times: dict[str, list[float]] = collections.defaultdict(list)
            before = sum(1 for r in server.requests if r.verb in ("get", "list"))
            for _ in range(args.rounds):
                for label, fn in reads.items():
                    size = next((sizes[n] for n in sizes if label.endswith(f" {n}")), sizes["node"])
                    n = max(3, args.reads * 10 // max(size, 10))
                    if label == "field selector, scan":
                        n = max(3, args.reads // 200)
                    times[label].append(per_read_us(fn, n))
            assert sum(1 for r in server.requests if r.verb in ("get", "list")) == before  # all from memory
    print(f"{args.pods} pods; median of {args.rounds} interleaved rounds, CPU time of the thread")
    for label, values in times.items():
        print(f"{label:<26} median {statistics.median(values):10.2f} µs")
    for name in BUCKETS:
        ratios = sorted(o / b for o, b in zip(times[f"Pod.list index {name}"], times[f"dict copy {name}"]))
        median = statistics.median(ratios)
        print(
            f"Pod.list(index) / dict copy, {sizes[name]:>4} matches ({name}): median {median:.2f}x "
            f"(min {ratios[0]:.2f}x, max {ratios[-1]:.2f}x; target <= 2x)" + ("" if median <= 2 else "  MISSED")
        )
    print(
        "a list by an index is O(matches) plus the fixed cost of any Pod.list (a plain list of a namespace of 10 "
        f"pods: {statistics.median(times['Pod.list 10 pods, no index']):.2f} µs)"
    )
    scan = statistics.median(times["field selector, scan"])
    indexed = statistics.median(times["field selector, index"])
    print(f"field selector served by the index: {scan / indexed:.0f}x faster than the scan ({sizes['node']} matches)")


if __name__ == "__main__":
    main()
