"""Model hot-path benchmark: µs per pod for from_dict(_sealed), to_dict, copy; KB per pod.

Run: ``python benchmarks/bench_models.py [--pods 2000]``. Uses ``tests/models/corpus/pod.json``
(a ~7 KB pod: managedFields, 2 containers with env/ports/probes/resources/volumeMounts, volumes,
tolerations, status with conditions/containerStatuses).

``--realistic [--decoder json|orjson]``: instead, the seeded pods of the benchmarks' fake server
(``seed_pods``: distinct names, uids, IPs, times; specs shared by ReplicaSet as in a cluster), parsed
with the library's decoder and structured as an informer's first list does (``models._reuse``, the
sharing tables included): µs per pod of the parse and of the structuring, the first pass (tables
sampling, code generated) and the best of four later ones. ``--decoder json`` hides orjson first.
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
if "--decoder" in sys.argv and sys.argv[sys.argv.index("--decoder") + 1 :][:1] == ["json"]:
    sys.modules["orjson"] = None  # type: ignore[assignment]  # the library's pure-Python path

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


def realistic(pods: int) -> None:
    """Parse and structure ``pods`` seeded pods as an informer's first list does (see the docstring)."""
    from cloudcoil_cache import _json
    from cloudcoil_cache.models._reuse import reusing
    from cloudcoil_cache.testing.data.objects import seeded_pod

    namespaces = ("default", "kube-system", "team-a", "team-b")
    items = []
    for i in range(pods):
        pod = seeded_pod(i, namespaces)[2]
        pod["metadata"].update(uid=f"00000000-0000-4000-8000-{i:012d}", resourceVersion=str(1000 + i))
        pod["metadata"]["creationTimestamp"] = f"2024-06-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z"
        items.append(pod)
    pages = [_json.dumps({"items": items[i : i + 500]}) for i in range(0, len(items), 500)]
    del items
    reuse = reusing(Pod)

    def parse() -> list[Any]:
        return [item for page in pages for item in _json.loads(page)["items"]]

    def structure(raws: list[Any]) -> None:
        for raw in raws:
            reuse(raw, None, True, False, True)

    gc.disable()
    try:
        parse_s = min(_timed(parse) for _ in range(3))
        first = _timed(lambda: structure(parse()))
        later = min(_timed(lambda raws=parse(): structure(raws)) for _ in range(4))  # noqa: B023
    finally:
        gc.enable()
    decoder = "orjson" if _json.HAVE_ORJSON else "json"
    print(f"{pods} seeded pods, decoder {decoder}, {len(pages[0]) // 500} bytes of JSON each")
    print(f"{'parse (' + decoder + ')':34s} {parse_s / pods * 1e6:8.1f} µs/pod")
    print(f"{'structure, first pass':34s} {(first - parse_s) / pods * 1e6:8.1f} µs/pod (parse excluded)")
    print(f"{'structure, best of 4 later passes':34s} {later / pods * 1e6:8.1f} µs/pod")


def _timed(fn: Callable[[], Any]) -> float:
    started = time.process_time()
    fn()
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--realistic", action="store_true", help="seeded pods, the informer's first-list path")
    parser.add_argument("--decoder", choices=("json", "orjson"), help="with --realistic: json hides orjson")
    args = parser.parse_args()
    if args.realistic:
        realistic(args.pods)
        return
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
