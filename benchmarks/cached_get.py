"""What a cached ``Pod.get`` costs against ``informer.get`` on the same store, in one process.

Both read the same pod from the same informer's store; the ratio is the price of the read path
(client, read policy, serving) over the bare store read. Target: at most 3x. Reports the median
of several rounds of each (interleaved, so load on the machine hits both alike).

Run: .venv/bin/python benchmarks/cached_get.py [--pods 1000] [--reads 20000] [--rounds 7] [--calls] [--default]
(``--calls``: also count the Python and C calls of one read of each, with ``sys.setprofile``;
``--default``: read through ``config.set_default()``, as a web app does, instead of ``with config:``.)

Measured on 2 shared cores (load 2-9), three interleaved runs each: 10.6-11.6x at 5fa5209 (before
issue 21's one read path), 10.1-11.1x after it; 10.0-11.0x at 98b22bf, 9.2-9.7x once the client
checks its class, name and namespace without building messages (i21-client); at 5b6ae5b
9.7-10.4x (best of 3 runs: 9.7x), then 2.1x in each of 3 runs (i21-reads; load 6-14): met.

Where a get's calls go (``--calls``; the counts below leave out the benchmark's own lambda). At
5b6ae5b: 32 Python calls and 19 C calls. The models -> client seam built a ResourceClient per get
(``current_config``, its ``__init__`` and class checks: ~1/5); the request's checks took
``check_get``, ``_namespace``, the ``cls`` property twice and ``plain_segment`` twice; the read
itself (``read_facts``, ``_facts`` and its six informer reads, ``informer_facts``, ``decide`` and
``_decide``, the generator and ``drive``) ~1/2. Now 10 Python calls and 6 C calls: ``Pod.get``,
``Pod.client`` and ``_clients`` (the models' seam, ``models/_methods.py``), ``client_in_scope``
(the scope keeps its cached client: one dict lookup), ``ResourceClient.get``, ``shortcut_get``
(the argument checks, written out), ``served_get`` (the informer keeps its read-policy verdict
built, ``_policy.serving_verdict``, so ``decide`` need not run to serve a stored object),
``Cache.serving_informer``, ``WriteTracker.pending`` and ``Store.get``; ``informer.get`` is 6
Python calls and 1 C call. What is left is call overhead (~0.1 us a call): the three models-side
calls and one call per layer crossed (client -> cache -> informer -> write tracker, store).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import statistics
import sys
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


def calls_per_read(fn: Callable[[], object], n: int = 10) -> str:
    """How many Python and C calls one read makes, the most frequent first."""
    counts: collections.Counter[str] = collections.Counter()

    def count(frame: object, event: str, arg: object) -> None:
        if event == "call":
            code = frame.f_code  # type: ignore[attr-defined]
            counts[f"{code.co_filename.rpartition('cloudcoil_cache/')[2]}:{code.co_firstlineno} {code.co_name}"] += 1
        elif event == "c_call":
            counts[f"C {getattr(arg, '__qualname__', arg)}"] += 1

    sys.setprofile(count)
    for _ in range(n):
        fn()
    sys.setprofile(None)
    del counts["C setprofile"]
    python = sum(v for k, v in counts.items() if not k.startswith("C ")) // n
    lines = [f"  {v // n}  {k}" for k, v in counts.most_common()]
    return "\n".join([f"{python} Python calls, {sum(counts.values()) // n - python} C calls", *lines])


def report(name: str, times: list[float]) -> None:
    print(f"{name:<28} median {statistics.median(times):8.2f} µs  (rounds: {' '.join(f'{t:.2f}' for t in times)})")


def ratio(name: str, over: list[float], base: list[float], target: float) -> float:
    ratios = sorted(o / b for o, b in zip(over, base))
    median = statistics.median(ratios)
    print(
        f"{name:<28} median {median:.2f}x  (min {ratios[0]:.2f}x, max {ratios[-1]:.2f}x; target <= {target:g}x)"
        + ("" if median <= target else "  MISSED")
    )
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=1000, help="pods in the namespace read (the list's size)")
    parser.add_argument("--reads", type=int, default=20000, help="gets per round (lists: a fiftieth)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", action="store_true", help="also count the calls of one read of each")
    parser.add_argument(
        "--default", action="store_true", help="read through config.set_default() (a web app) instead of `with config:`"
    )
    args = parser.parse_args()
    with FakeAPIServer() as server, tempfile.TemporaryDirectory() as tmp:
        seed_pods(server, args.pods, namespaces=("default",))
        seed_pods(server, 100, namespaces=("other",))
        kubeconfig = server.write_kubeconfig(Path(tmp) / "kubeconfig")
        cache = Cache(resources=[Pod], mode="strict")
        config = Config(kubeconfig=str(kubeconfig), cache=cache)
        with contextlib.closing(config.set_default()) if args.default else config:
            informer = cache.get_informer(Pod, sync=True)
            assert informer is not None
            client = config.client_for(Pod, cached=True)  # today's ResourceClient (the lead's Api[Pod])
            some = Pod.list(namespace="default").items[0]
            ns, name = some.namespace, some.name

            def pod_get() -> object:
                return Pod.get(name, namespace=ns)

            def client_get() -> object:
                return client.get(name, ns)

            def informer_get() -> object:
                return informer.get(name, namespace=ns)

            def pod_list() -> object:
                return Pod.list(namespace=ns)

            def client_list() -> object:
                return client.list(ns)

            def informer_list() -> object:
                return informer.list(ns)

            assert pod_get() is informer_get() and client_get() is informer_get()  # the same stored object
            listed = [o.name for o in informer_list()]  # type: ignore[attr-defined]
            assert len(listed) == args.pods
            assert [o.name for o in pod_list().items] == listed == [o.name for o in client_list().items]  # type: ignore[attr-defined]

            def reads() -> int:
                return sum(1 for r in server.requests if r.verb in ("get", "list"))

            if args.calls:
                for label, fn in (("Pod.get (cached)", pod_get), ("client.get (cached)", client_get)):
                    print(f"{label}: {calls_per_read(fn)}")
                print(f"informer.get: {calls_per_read(informer_get)}")
                print(f"Pod.list (cached): {calls_per_read(pod_list)}")
                print(f"informer.list: {calls_per_read(informer_list)}")
            reads_before = reads()
            times: dict[str, list[float]] = collections.defaultdict(list)
            lists = max(1, args.reads // 50)
            for _ in range(args.rounds):
                for label, fn, n in (
                    ("Pod.get (cached)", pod_get, args.reads),
                    ("client.get (cached)", client_get, args.reads),
                    ("informer.get", informer_get, args.reads),
                    ("Pod.list (cached)", pod_list, lists),
                    ("client.list (cached)", client_list, lists),
                    ("informer.list", informer_list, lists),
                ):
                    times[label].append(per_read_us(fn, n))
            assert reads() == reads_before  # not one read reached the API server
        for label, values in times.items():
            report(label, values)
        ratio("Pod.get / informer.get", times["Pod.get (cached)"], times["informer.get"], 1.5)
        ratio("client.get / informer.get", times["client.get (cached)"], times["informer.get"], 1.5)
        ratio("Pod.list / informer.list", times["Pod.list (cached)"], times["informer.list"], 1.2)
        ratio("client.list / informer.list", times["client.list (cached)"], times["informer.list"], 1.2)


if __name__ == "__main__":
    main()
