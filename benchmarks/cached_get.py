"""What a cached ``Pod.get`` and ``Pod.list(namespace=...)`` cost against ``informer.get`` and
``informer.list`` on the same store, in one process, one run.

Each pair reads the same pods from the same informer's store; the ratio is the price of the read
path (models seam, client, the kind's ``CacheReader``) over the bare store read. Also measured:
the cached client itself (``config.client_for(Pod, cached=True).get/list``: the typed ``Api[Pod]``
``Pod.get`` will call). Targets (issue 34): get <= 1.5x, a list of 1,000 pods <= 1.2x. Reports the
median of several rounds of each, interleaved (load on the machine hits all alike), CPU time of
the thread.

Run: .venv/bin/python benchmarks/cached_get.py [--pods 1000] [--reads 20000] [--rounds 7] [--calls] [--default]
(``--calls``: also count the Python and C calls of one read of each, with ``sys.setprofile``;
``--default``: read through ``config.set_default()``, as a web app does, instead of ``with config:``.)

History (get only, issue 21): 10.6-11.6x at 5fa5209; 2.1x at i21-reads (the informer keeps its
serving verdict built; ``served_get``, a second copy of the policy for gets); 2.3-2.6x at e62f6f1.
Issue 34: one ``CacheReader`` per kind and the typed ``Api``. A hit is ``Pod.get`` (the scope's
cached ``Api``, looked up without a call) -> ``Api.get`` -> ``CacheReader.hit`` ->
``WriteTracker.pending`` -> ``Store.get`` (5 Python calls; ``informer.get`` is 6): ``Pod.get``
1.41-1.47x, the client's get 0.96-0.98x, ``Pod.list`` 1.13-1.16x (quiet machine, three runs; see
benchmarks/README.md).
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
from typing import Any, Callable

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


def readers(kubeconfig: Path, args: argparse.Namespace) -> dict[str, Callable[[], object]]:
    """The reads compared, by label, over a started cache (the caller's scope)."""
    config = Config(kubeconfig=str(kubeconfig), cache=Cache(resources=[Pod], mode="strict"))
    cache = config.cache
    assert cache is not None
    informer = cache.get_informer(Pod, sync=True)
    assert informer is not None
    client = config.client_for(Pod, cached=True)  # today's ResourceClient: the Api[Pod] Pod.get will call
    return {
        "config": lambda: config,
        "Pod.get (cached)": lambda: Pod.get(args.name, namespace="default"),
        "client.get (cached)": lambda: client.get(args.name, "default"),
        "informer.get": lambda: informer.get(args.name, namespace="default"),
        "Pod.list (cached)": lambda: Pod.list(namespace="default"),
        "client.list (cached)": lambda: client.list("default"),
        "informer.list": lambda: informer.list("default"),
    }


def measure(reads: dict[str, Callable[[], object]], args: argparse.Namespace) -> dict[str, list[float]]:
    times: dict[str, list[float]] = collections.defaultdict(list)
    lists = max(1, args.reads // 50)
    for _ in range(args.rounds):
        for label, fn in reads.items():
            if label != "config":
                times[label].append(per_read_us(fn, lists if ".list" in label else args.reads))
    return times


def check(reads: dict[str, Callable[[], object]], pods: int) -> None:
    """Every read answers the same stored objects."""
    got = reads["informer.get"]()
    assert reads["Pod.get (cached)"]() is got and reads["client.get (cached)"]() is got
    listed: list[Any] = reads["informer.list"]()  # type: ignore[assignment]
    assert len(listed) == pods
    for label in ("Pod.list (cached)", "client.list (cached)"):
        assert reads[label]().items == listed  # type: ignore[attr-defined]


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
        args.name = server.list("pods", "default")[0]["metadata"]["name"]
        reads = readers(server.write_kubeconfig(Path(tmp) / "kubeconfig"), args)
        config: Config = reads["config"]()  # type: ignore[assignment]
        with contextlib.closing(config.set_default()) if args.default else config:
            check(reads, args.pods)
            if args.calls:
                for label, fn in reads.items():
                    if label != "config":
                        print(f"{label}: {calls_per_read(fn)}")
            before = sum(1 for r in server.requests if r.verb in ("get", "list"))
            times = measure(reads, args)
            assert sum(1 for r in server.requests if r.verb in ("get", "list")) == before  # no read reached the API
    for label, values in times.items():
        report(label, values)
    ratio("Pod.get / informer.get", times["Pod.get (cached)"], times["informer.get"], 1.5)
    ratio("client.get / informer.get", times["client.get (cached)"], times["informer.get"], 1.5)
    ratio("Pod.list / informer.list", times["Pod.list (cached)"], times["informer.list"], 1.2)
    ratio("client.list / informer.list", times["client.list (cached)"], times["informer.list"], 1.2)


if __name__ == "__main__":
    main()
