"""Model hot-path benchmark: µs per pod for from_dict(_sealed), to_dict, copy; KB per pod.

Run: ``python benchmarks/bench_models.py [--pods 2000]``. Uses ``tests/models/corpus/pod.json``
(a ~7 KB pod: managedFields, 2 containers with env/ports/probes/resources/volumeMounts, volumes,
tolerations, status with conditions/containerStatuses).
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # runnable from a checkout without installing
    sys.path.insert(0, str(ROOT))

from cloudcoil_cache.models.kubernetes.core.v1 import Pod  # noqa: E402

CORPUS = ROOT / "tests" / "models" / "corpus" / "pod.json"


def _pods(n: int) -> list[dict[str, Any]]:
    text = CORPUS.read_text()
    out = []
    for i in range(n):
        d = json.loads(text)
        d["metadata"]["name"] = f"web-{i}"
        d["metadata"]["resourceVersion"] = str(1000 + i)
        out.append(d)
    return out


def _per_item_us(fn: Callable[[Any], Any], items: list[Any], rounds: int = 5) -> float:
    best = float("inf")
    gc.disable()
    try:
        for _ in range(rounds):
            start = time.perf_counter()
            for item in items:
                fn(item)
            best = min(best, time.perf_counter() - start)
    finally:
        gc.enable()
    return best / len(items) * 1e6


def _kb_per_item(build: Callable[[Any], Any], items: list[Any]) -> float:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = [build(item) for item in items]
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del kept
    return (after - before) / len(items) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=2000)
    args = parser.parse_args()
    dicts = _pods(args.pods)
    size = len(json.dumps(dicts[0], separators=(",", ":")))
    Pod.from_dict_sealed(dicts[0])  # generate the hooks before timing
    Pod.from_dict(dicts[0]).to_dict()
    editable = [Pod.from_dict(d) for d in dicts]
    sealed = [Pod.from_dict_sealed(d) for d in dicts]
    rows = [
        ("json.loads (for scale)", _per_item_us(json.loads, [json.dumps(d) for d in dicts])),
        ("copy.deepcopy(dict) (for scale)", _per_item_us(copy.deepcopy, dicts[:200])),
        ("from_dict", _per_item_us(Pod.from_dict, dicts)),
        ("from_dict_sealed", _per_item_us(Pod.from_dict_sealed, dicts)),
        ("to_dict (editable)", _per_item_us(Pod.to_dict, editable)),
        ("to_dict (sealed)", _per_item_us(Pod.to_dict, sealed)),
        ("copy() of sealed", _per_item_us(Pod.copy, sealed)),
    ]
    print(f"pod: {size} bytes of JSON, {args.pods} pods")
    for label, us in rows:
        print(f"{label:34s} {us:8.1f} µs/pod")
    print(f"{'memory, sealed objects':34s} {_kb_per_item(Pod.from_dict_sealed, dicts):8.1f} KB/pod")
    print(f"{'memory, editable objects':34s} {_kb_per_item(Pod.from_dict, dicts):8.1f} KB/pod")
    print(
        f"{'memory, plain dicts (json.loads)':34s} "
        f"{_kb_per_item(json.loads, [json.dumps(d) for d in dicts]):8.1f} KB/pod"
    )


if __name__ == "__main__":
    main()
