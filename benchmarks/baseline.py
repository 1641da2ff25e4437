"""v0.1.0 and this tree on this machine, by issue 14's own methods: the before/after its targets need.

Issue 14's "now" column (sync 1.5 s, 9,700-11,200 MODIFIED events/s, sync 1.8x the floor) was
measured on the machine the issue was filed on. Absolute figures do not travel between machines:
this one is shared, has 2 cores, and runs the same code several times slower. This script measures
v0.1.0 (commit 983436d, the code the issue measured) beside the working tree, here, now:

- apply: 0.1.0's own ``benchmarks/run.py:bench_apply`` (2,000 ``make_pod`` pods; 5,000 MODIFIED
  lines that change only the resourceVersion; decode + structure/seal + store + one handler queue,
  in the main thread, until the handler has seen every event), run from 0.1.0's tree; and the same
  function ported to today's API (``apply_rate`` below: the structure function the reflector uses
  now, ``Informer.apply``, one ``on_update`` handler lane);
- sync: ``Cache(resources=[Pod])`` entered until synced, each tree in a fresh process
  (``ab.py --client``), against one ``burst_server.py`` of 10,000 pods, with the floor (``run.py
  --floor``: paginated GET + ``json.loads``, GC off) in a fresh process too: interleaved rounds,
  best of each.

Run (2-core machine: ~3 min)::

    .venv/bin/python benchmarks/baseline.py                      # 983436d (v0.1.0) vs the working tree
    .venv/bin/python benchmarks/baseline.py --rev 983436d --rounds 3 --pods 10000

The old revision is checked out into ``benchmarks/.build/ab-<rev>`` (a git worktree, removed after).
Results: ``benchmarks/results/baseline.json`` (the last runs) and ``baseline.md`` (a table per run).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
V010 = "983436d"  # the last commit of 0.1.0: what issue 14's "now" column measured
KEEP_RUNS = 8

#: Issue 14's "now" column and targets, as filed (10,000 pods; apply: a burst of 5,000).
ISSUE = {"sync_s": 1.5, "apply_per_s": (9_700, 11_200), "ratio": 1.8, "apply_target": 15_000, "ratio_target": 1.5}

_OLD_APPLY = (
    "import sys; sys.path[:0] = [{tree!r}, {tree!r} + '/benchmarks']; import run, cloudcoil_cache; "
    "assert cloudcoil_cache.__file__.startswith({tree!r}), cloudcoil_cache.__file__; "
    "print('RATE', run.bench_apply({events}, {pods}))"
)


class _IdleWatch:
    """A watch that never delivers: the events are applied by ``apply_rate``'s loop, as 0.1.0's did."""

    def __init__(self) -> None:
        self.closed = threading.Event()

    def __iter__(self) -> Any:
        self.closed.wait()
        return iter(())

    def close(self) -> None:
        self.closed.set()


class _ListOnlySource:
    """A source whose LIST serves ``listed`` (through ``structure``) and whose watches stay idle."""

    def __init__(self, listed: list[dict[str, Any]]) -> None:
        self.listed = listed
        self.structure: Any = None  # the informer's structure function, set once it exists
        self.watches: list[_IdleWatch] = []

    def interrupt(self) -> None:
        for watch in self.watches:
            watch.close()

    def list_page(self, **_: Any) -> Any:
        from cloudcoil_cache import _json as cjson
        from cloudcoil_cache._listwatch import ListPage

        return ListPage([self.structure(cjson.loads(cjson.dumps(item))) for item in self.listed], "1", None)

    def watch(self, **_: Any) -> Any:
        from cloudcoil_cache._listwatch._listwatch import WatchStream

        self.watches.append(_IdleWatch())
        return WatchStream(self.watches[-1], self.structure)


def _burst(events: int, pods: int) -> tuple[list[dict[str, Any]], list[str]]:
    """``pods`` pods to list at RV 1, and ``events`` MODIFIED lines that change only their RV."""
    from cloudcoil_cache import _json as cjson
    from cloudcoil_cache.testing import make_pod

    base = [make_pod(f"p-{i}", "default", index=i) for i in range(pods)]
    for pod in base:
        pod["metadata"]["resourceVersion"] = "1"
    listed = [{"kind": "Pod", "apiVersion": "v1", **pod} for pod in base]
    lines = []
    for n in range(events):
        pod = base[n % pods]
        pod["metadata"]["resourceVersion"] = str(1000 + n)
        lines.append(cjson.dumps({"type": "MODIFIED", "object": {"kind": "Pod", "apiVersion": "v1", **pod}}))
    return listed, lines


def apply_rate(events: int, pods: int) -> float:
    """0.1.0's ``bench_apply`` on today's API: decode + structure + store + one handler lane."""
    sys.path.insert(0, str(REPO))
    from cloudcoil_cache import _gc
    from cloudcoil_cache._listwatch import decode_event
    from cloudcoil_cache.caching._informer import Informer, InformerKey
    from cloudcoil_cache.caching._views import SyncInformer
    from cloudcoil_cache.models.kubernetes.core.v1 import Pod

    listed, lines = _burst(events, pods)
    source = _ListOnlySource(listed)
    informer: Informer[Any] = Informer(InformerKey(Pod, None), lambda key: source)
    structure = source.structure = informer.structure_function()
    done = threading.Event()
    seen = [0]

    def handler(old: Any, new: Any) -> None:
        seen[0] += 1
        if seen[0] == events:
            done.set()

    SyncInformer(informer).on_update(handler)
    informer.start()
    try:
        if not informer.wait_for_sync(120):
            raise RuntimeError("the in-memory informer did not sync")
        started = time.perf_counter()
        for line in lines:
            informer.apply(decode_event(line, structure))
            _gc.note_events()
        if not done.wait(120):
            raise RuntimeError(f"the handler saw {seen[0]} of {events} events")
        return events / (time.perf_counter() - started)
    finally:
        informer.stop(10)


def _run(command: list[str], timeout: float = 1200) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True, timeout=timeout, cwd=REPO).stdout


def _apply_in(tree: Path, events: int, pods: int) -> float:
    if tree == REPO:
        out = _run([sys.executable, __file__, "--apply", str(events), str(pods)])
    else:
        out = _run([sys.executable, "-c", _OLD_APPLY.format(tree=str(tree), events=events, pods=pods)])
    return float(out.split("RATE")[-1].split()[0])


def _sync_in(tree: Path, kubeconfig: Path) -> tuple[float, float, int]:
    wall, cpu, rss = _run([sys.executable, str(HERE / "ab.py"), "--client", str(tree), str(kubeconfig)]).split()[-3:]
    return float(wall), float(cpu), int(rss)


def _order(trees: dict[str, Path], n: int) -> list[tuple[str, Path]]:
    """Old first in even rounds, new first in odd ones: neither always runs on a warmer machine."""
    items = list(trees.items())
    return items if n % 2 == 0 else items[::-1]


def measure(rev: str, pods: int, events: int, rounds: int) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    import ab
    import peers

    old = ab.checkout(rev)
    trees = {"old": old, "new": REPO}
    rows: dict[str, dict[str, list[Any]]] = {k: {"apply": [], "sync": []} for k in trees}
    floors: list[float] = []
    try:
        for n in range(rounds):
            for key, tree in _order(trees, n):
                rows[key]["apply"].append(_apply_in(tree, events, 2_000))
                print(f"apply  {key}: {rows[key]['apply'][-1]:,.0f} events/s", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            kubeconfig = Path(tmp) / "kubeconfig"
            proc, url = peers._start_server(sys.executable, pods, kubeconfig)
            try:
                for n in range(rounds):
                    floor = json.loads(
                        _run([sys.executable, str(HERE / "run.py"), "--floor", url]).split("RESULT ")[-1]
                    )
                    floors.append(floor["floor_s"])
                    print(f"floor  {floors[-1]:.2f} s", flush=True)
                    for key, tree in _order(trees, n):
                        rows[key]["sync"].append(_sync_in(tree, kubeconfig))
                        print(f"sync   {key}: {rows[key]['sync'][-1][0]:.2f} s", flush=True)
            finally:
                peers.stop_server(proc)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=REPO, capture_output=True)
    floor = min(floors)
    out: dict[str, Any] = {
        "rev": rev,
        "pods": pods,
        "events": events,
        "rounds": rounds,
        "floor_s": floor,
        "when": time.strftime("%Y-%m-%d %H:%M"),
        "issue": ISSUE,
    }
    for key, row in rows.items():
        syncs = row["sync"]
        out[key] = {
            "apply_best": max(row["apply"]),
            "apply_median": statistics.median(row["apply"]),
            "sync_s": min(s[0] for s in syncs),
            "sync_cpu_s": min(s[1] for s in syncs),
            "rss_mb": statistics.median(s[2] for s in syncs) / 1024,
            "ratio": min(s[0] for s in syncs) / floor,
        }
    return out


def write_markdown(runs: list[dict[str, Any]], path: Path) -> None:
    lines = [
        "# v0.1.0 and this tree on this machine, by issue 14's methods",
        "",
        f"Each run of `python benchmarks/baseline.py`, newest first (`baseline.json` keeps the last {KEEP_RUNS}).",
        "",
    ]
    for data in reversed(runs):
        lines += _run_table(data)
    path.write_text("\n".join(lines))


def _run_table(data: dict[str, Any]) -> list[str]:
    old, new, issue = data["old"], data["new"], data["issue"]
    low, high = issue["apply_per_s"]
    asked = issue["apply_target"] / high, issue["apply_target"] / low
    return [
        f"## {data['when']}: v0.1.0 ({data['rev']}) against {data.get('tree', 'the working tree')}",
        "",
        f"{data['rounds']} interleaved rounds, best of each (apply: 5,000 events over 2,000 pods; sync: "
        f"{data['pods']:,} pods, fresh processes, one server).",
        "",
        '| figure | issue 14 "now" (its machine) | v0.1.0 here | this tree here | change here | asked |',
        "|---|---|---|---|---|---|",
        f"| apply, events/s (0.1.0's `bench_apply`) | {low:,}–{high:,} | {old['apply_best']:,.0f} "
        f"(median {old['apply_median']:,.0f}) | {new['apply_best']:,.0f} (median {new['apply_median']:,.0f}) | "
        f"{new['apply_best'] / old['apply_best']:.2f}× (medians {new['apply_median'] / old['apply_median']:.2f}×) | "
        f"≥ {issue['apply_target']:,}/s: {asked[0]:.2f}–{asked[1]:.2f}× |",
        f"| sync of {data['pods']:,} pods | {issue['sync_s']} s | {old['sync_s']:.2f} s | {new['sync_s']:.2f} s | "
        f"{old['sync_s'] / new['sync_s']:.2f}× faster | |",
        f"| sync / floor (floor {data['floor_s']:.2f} s) | {issue['ratio']}× | {old['ratio']:.2f}× | "
        f"{new['ratio']:.2f}× | | ≤ {issue['ratio_target']}× |",
        f"| RSS after the sync | | {old['rss_mb']:.0f} MB | {new['rss_mb']:.0f} MB | "
        f"{old['rss_mb'] / new['rss_mb']:.1f}× less | |",
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default=V010, help="the old revision (default: v0.1.0's last commit)")
    parser.add_argument("--pods", type=int, default=10_000, help="pods of the sync")
    parser.add_argument("--events", type=int, default=5_000, help="MODIFIED events of the apply")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--apply", nargs=2, type=int, metavar=("EVENTS", "PODS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.apply:
        print("RATE", apply_rate(*args.apply))
        return
    data = measure(args.rev, args.pods, args.events, args.rounds)
    data["tree"] = _describe_tree()
    args.out.mkdir(parents=True, exist_ok=True)
    store = args.out / "baseline.json"
    runs: list[dict[str, Any]] = []
    if store.exists():
        old = json.loads(store.read_text())
        runs = old.get("runs", []) if isinstance(old, dict) and "runs" in old else [old]
    runs = (runs + [data])[-KEEP_RUNS:]
    store.write_text(json.dumps({"runs": runs}, indent=2) + "\n")
    write_markdown(runs, args.out / "baseline.md")
    print("\n".join(_run_table(data)))


def _describe_tree() -> str:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)benchmarks/results"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    return f"{head.stdout.strip() or 'the working tree'}{' + changes' if dirty.stdout.strip() else ''}"


if __name__ == "__main__":
    main()
