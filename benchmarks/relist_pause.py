"""The longest pause a 10,000-pod relist (resync) causes in another thread, without HTTP: decode the
pods, then time ``Informer.replace`` while a probe thread wakes every millisecond.

Run: .venv/bin/python benchmarks/relist_pause.py [--pods 10000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import gc
import threading
import time
from typing import Any

from cloudcoil_cache import _json
from cloudcoil_cache.caching import Informer, InformerKey, Tuning
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeListWatch, make_pod


def decode(raw: list[bytes]) -> list[Any]:
    pods = []
    for i, line in enumerate(raw):
        pod = Pod.from_dict_sealed(_json.loads(line))
        object.__setattr__(pod.metadata, "resource_version", str(i + 1))  # a fresh version for each copy
        pods.append(pod)
    return pods


def longest_gap_during(action: Any) -> tuple[float, float]:
    """Run ``action`` while a thread wakes every millisecond: (action seconds, longest gap seconds)."""
    gaps: list[float] = []
    stop = threading.Event()

    def probe() -> None:
        last = time.perf_counter()
        while not stop.wait(0.001):
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    thread = threading.Thread(target=probe, name="bench-probe")
    thread.start()
    stop.wait(0.05)
    start = time.perf_counter()
    action()
    took = time.perf_counter() - start
    threading.Event().wait(0.05)
    stop.set()
    thread.join()
    return took, max(gaps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    raw = [_json.dumps(make_pod(f"p{i}", f"ns{i % 4}", index=i)) for i in range(args.pods)]
    source = FakeListWatch()
    informer: Informer[Any] = Informer(InformerKey(Pod, None), lambda key: source, tuning=Tuning(freeze_gc=False))
    informer.start()
    try:
        informer.wait_for_sync(5)
        informer.replace(decode(raw), "1", resync=False, generation=informer._generation)
        gc.freeze()
        for _ in range(args.rounds):
            batch = [decode(raw)]

            def relist() -> None:
                informer.replace(batch.pop(), "2", resync=True, generation=informer._generation)

            took, gap = longest_gap_during(relist)
            print(
                f"replace of {args.pods} pods {took * 1000:.0f} ms; longest pause in another thread {gap * 1000:.1f} ms"
            )
    finally:
        informer.stop()


if __name__ == "__main__":
    main()
