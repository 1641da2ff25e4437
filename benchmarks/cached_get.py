"""What a cached ``Pod.get`` costs against ``informer.get`` on the same store, in one process.

Both read the same pod from the same informer's store; the ratio is the price of the read path
(client, read policy, serving) over the bare store read. Target: at most 3x. Reports the median
of several rounds of each (interleaved, so load on the machine hits both alike).

Run: .venv/bin/python benchmarks/cached_get.py [--pods 1000] [--reads 20000] [--rounds 7]

Measured on 2 shared cores (load 2-9), three interleaved runs each: 10.6-11.6x at 5fa5209 (before
issue 21's one read path), 10.1-11.1x after it; 10.0-11.0x at 98b22bf, 9.2-9.7x once the client
checks its class, name and namespace without building messages (i21-client): the target is not met.
A cached get is 50 Python calls (58 before). Of a ~10 µs cached get, the models -> client seam
(``Pod.client()``, the factory, a ResourceClient per call: a per-Config memo of it would be a
Config <-> client reference cycle, which the GC freeze would keep) is ~2 µs; the request and its
checks ~1 µs; the read itself (facts, policy, flow) ~4-5 µs; informer.get ~1 µs.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, seed_pods


def per_read_us(fn: Callable[[], object], n: int) -> float:
    # CPU time of this thread: on a loaded machine, wall time counts the time other processes ran
    start = time.thread_time()
    for _ in range(n):
        fn()
    return (time.thread_time() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--reads", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with FakeAPIServer() as server, tempfile.TemporaryDirectory() as tmp:
        seed_pods(server, args.pods)
        kubeconfig = server.write_kubeconfig(Path(tmp) / "kubeconfig")
        cache = Cache(resources=[Pod], mode="strict")
        config = Config(kubeconfig=str(kubeconfig), cache=cache)
        with config:
            informer = cache.get_informer(Pod, sync=True)
            assert informer is not None
            some = Pod.list(all_namespaces=True).items[0]
            ns, name = some.namespace, some.name

            def cached_get() -> object:
                return Pod.get(name, namespace=ns)

            def informer_get() -> object:
                return informer.get(name, namespace=ns)

            assert cached_get() is informer_get()  # the same stored object

            def reads() -> int:
                return sum(1 for r in server.requests if r.verb in ("get", "list"))

            reads_before = reads()
            gets, bare = [], []
            for _ in range(args.rounds):
                gets.append(per_read_us(cached_get, args.reads))
                bare.append(per_read_us(informer_get, args.reads))
            assert reads() == reads_before  # not one read reached the API server
        ratios = sorted(g / b for g, b in zip(gets, bare))
        print(
            f"Pod.get (cached)  median {statistics.median(gets):.2f} µs  (rounds: {' '.join(f'{g:.2f}' for g in gets)})"
        )
        print(
            f"informer.get      median {statistics.median(bare):.2f} µs  (rounds: {' '.join(f'{b:.2f}' for b in bare)})"
        )
        print(
            f"ratio             median {statistics.median(ratios):.1f}x  "
            f"(min {ratios[0]:.1f}x, max {ratios[-1]:.1f}x; target <= 3x)"
        )


if __name__ == "__main__":
    main()
