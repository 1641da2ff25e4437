"""GC policies compared: decode + structure + store N pods, then apply E MODIFIED events, per policy.

Run: ``.venv/bin/python benchmarks/gc_policy.py [--pods 10000] [--events 10000]`` — each policy in
a fresh process (process CPU time, so the machine's load matters less; collection pauses are wall
clock, from ``gc.callbacks``):

- ``none``: the collector as the interpreter has it;
- ``paused``: collection off while a 250-pod page is decoded (what ``_gc.paused()`` does), no freeze;
- ``listonly``: + ``gc.freeze()`` after each page;
- ``freeze``: + ``gc.freeze()`` every 500 events (the library's default: ``_gc.note_events()``).
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cloudcoil_cache import _json  # noqa: E402
from cloudcoil_cache.models.kubernetes.core.v1 import Pod  # noqa: E402
from cloudcoil_cache.testing import make_pod  # noqa: E402

POLICIES = ("none", "paused", "listonly", "freeze")


def _pod(i: int, n: int, rv: int, extra: dict[str, str] | None = None) -> dict[str, Any]:
    pod = make_pod(f"p-{i % n}", f"ns-{i % n % 4}", index=i % n)
    pod["metadata"].update(resourceVersion=str(rv), uid=f"u-{i % n}", creationTimestamp="2024-01-01T00:00:00Z")
    if extra:
        pod["metadata"]["labels"] = {**pod["metadata"]["labels"], **extra}
    return pod


def one(policy: str, pods: int, events: int) -> None:
    raws = [_json.dumps(_pod(i, pods, i)) for i in range(pods)]
    lines = [_json.dumps({"type": "MODIFIED", "object": _pod(n, pods, pods + n, {"g": str(n)})}) for n in range(events)]
    gc.collect()
    gc.freeze()  # the benchmark's own inputs are not the cache
    pauses: list[tuple[int, float]] = []
    started = [0.0]

    def timing(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses.append((info["generation"], time.perf_counter() - started[0]))

    gc.callbacks.append(timing)
    tracked0 = len(gc.get_objects())
    store: dict[str, Any] = {}
    t0 = time.process_time()
    for page in range(0, pods, 250):
        if policy != "none":
            gc.disable()
        items = [Pod.from_dict_sealed(_json.loads(r)) for r in raws[page : page + 250]]
        gc.enable()
        for obj in items:
            store[obj.metadata.name] = obj
        if policy in ("listonly", "freeze"):
            gc.freeze()
    sync = time.process_time() - t0
    tracked = (len(gc.get_objects()) - tracked0) / pods
    t0 = time.process_time()
    for k, line in enumerate(lines):
        obj = Pod.from_dict_sealed(_json.loads(line)["object"])
        store[obj.metadata.name] = obj
        if policy == "freeze" and k % 500 == 499:
            gc.freeze()
    apply = time.process_time() - t0
    gc.callbacks.remove(timing)
    print(
        f"{policy:9s} tracked objects/pod {tracked:5.1f}, sync {sync / pods * 1e6:4.0f} µs/pod, apply "
        f"{events / apply:7,.0f} events/s, collections {len(pauses)} (full: "
        f"{sum(1 for g, _ in pauses if g == 2)}), longest {max(p for _, p in pauses) * 1000:6.1f} ms, "
        f"total {sum(p for _, p in pauses):.2f} s",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--policy", choices=POLICIES)
    args = parser.parse_args()
    if args.policy:
        one(args.policy, args.pods, args.events)
        return
    for policy in POLICIES:
        subprocess.run(
            [sys.executable, __file__, "--policy", policy, "--pods", str(args.pods), "--events", str(args.events)],
            check=True,
        )


if __name__ == "__main__":
    main()
