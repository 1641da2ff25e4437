"""A/B of two trees: client CPU per watch event of a burst, fresh processes, interleaved.

``peers.py``'s burst figure (getrusage of the client process / events) moves by ±40% from one run
to the next on the shared 2-core machine; this runs the same burst against one server for each
tree in turn, several rounds, so that a change shows against the noise. Run::

    .venv/bin/python benchmarks/ab_burst.py HEAD~1 .                    # 10,000 pods, 5,000 events, 4 rounds
    .venv/bin/python benchmarks/ab_burst.py HEAD~1 . --pods 3000 --events 3000 --rounds 6

A revision is checked out into ``benchmarks/.build/ab-<rev>`` (a git worktree, removed after);
``.`` is the working tree as it is. Each client is ``Cache(resources=[Pod])`` synced in its own
process, with an ``on_update`` handler counting; then ``burst_server.py`` queues ``--events``
MODIFIED events (the first update of each pod since the list, as ``peers.py``) and the client
reports its CPU (all threads, ``getrusage``) from the moment before the burst until its handler
has seen them all, per event, and the wall time.

``--no-handler`` measures the same without any handler (what the hand-off to a handler thread
costs): the client registers none and checks every 5 ms whether the burst's last pod carries the
burst's last label; ``--both`` runs each tree both ways, interleaved.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ab import checkout  # noqa: E402
from peers import _start_server, server_command, stop_server  # noqa: E402

REPO = HERE.parent


def client(tree: str, kubeconfig: str, handler: bool) -> None:
    """One sync with the package of ``tree``, then bursts on command (``go N`` on stdin)."""
    sys.path.insert(0, tree)
    import cloudcoil_cache
    from cloudcoil_cache.caching import Cache
    from cloudcoil_cache.client import Config
    from cloudcoil_cache.models.kubernetes.core.v1 import Pod

    if not cloudcoil_cache.__file__ or not cloudcoil_cache.__file__.startswith(tree):
        raise SystemExit(f"imported {cloudcoil_cache.__file__}, not the tree {tree}")
    config = Config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod], sync_timeout=1200))
    cond = threading.Condition()
    seen = [0]

    def updated(_old: Any, _new: Any) -> None:
        with cond:
            seen[0] += 1
            cond.notify_all()

    with config:
        view = config.cache.get_informer(Pod, sync=True)  # type: ignore[union-attr]
        if handler:
            view.on_update(updated)
        # the burst goes round robin over the pods in (namespace, name) order (burst_server.py)
        pods = sorted(view.list(), key=lambda p: (p.metadata.namespace, p.metadata.name))
        print("ready", flush=True)
        for line in sys.stdin:
            events = int(line.split()[1])
            with cond:
                target = seen[0] + events
            last = pods[(events - 1) % len(pods)].metadata
            usage = resource.getrusage(resource.RUSAGE_SELF)
            cpu0 = usage.ru_utime + usage.ru_stime
            started = time.perf_counter()
            print("armed", flush=True)
            if handler:
                with cond:
                    complete = cond.wait_for(lambda: seen[0] >= target, 300)
            else:
                complete = _poll(view, last.name, last.namespace, f"-{events - 1}", started + 300)
            wall = time.perf_counter() - started
            usage = resource.getrusage(resource.RUSAGE_SELF)
            cpu = usage.ru_utime + usage.ru_stime - cpu0
            print(f"{'done' if complete else 'incomplete'} {cpu * 1e6 / events:.1f} {wall:.3f}", flush=True)


def _poll(view: Any, name: str, namespace: str, suffix: str, deadline: float) -> bool:
    """Wait until pod ``name`` carries a ``bench-burst`` label ending in ``suffix`` (checked every 5 ms)."""
    tick = threading.Event()
    while time.perf_counter() < deadline:
        pod = view.get(name, namespace=namespace)
        labels = (pod.metadata.labels or {}) if pod is not None else {}
        if labels.get("bench-burst", "").endswith(suffix):
            return True
        tick.wait(0.005)
    return False


def _burst(
    server: subprocess.Popen[str], tree: Path, kubeconfig: Path, events: int, handler: bool
) -> tuple[float, float]:
    proc = subprocess.Popen(
        [sys.executable, __file__, "--client", str(tree), str(kubeconfig), "handler" if handler else "poll"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the client did not sync")
        prepared = server_command(server, f"prepare {events}")
        if prepared != f"prepared {events}":
            raise RuntimeError(f"the burst server answered {prepared!r}")
        if server_command(proc, f"go {events}") != "armed":
            raise RuntimeError("the client did not arm")
        server_command(server, "fire")
        answer = proc.stdout.readline().split()
        if not answer or answer[0] != "done":
            raise RuntimeError(f"the client answered {answer!r}")
        return float(answer[1]), float(answer[2])
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revisions", nargs="*", help="two or more git revisions ('.' = the working tree)")
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--no-handler", action="store_true", help="no on_update handler (the client polls)")
    parser.add_argument("--both", action="store_true", help="each tree with and without a handler")
    parser.add_argument("--client", nargs=3, metavar=("TREE", "KUBECONFIG", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        client(args.client[0], args.client[1], args.client[2] == "handler")
        return
    if len(args.revisions) < (1 if args.both else 2):
        parser.error("give at least two revisions (one with --both)")
    trees = {rev: checkout(rev) for rev in args.revisions}
    modes = [True, False] if args.both else [not args.no_handler]
    runs = [(rev, handler) for rev in trees for handler in modes]
    results: dict[tuple[str, bool], list[tuple[float, float]]] = {run: [] for run in runs}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            kubeconfig = Path(tmp) / "kubeconfig"
            server, _url = _start_server(sys.executable, args.pods, kubeconfig)
            try:
                for _ in range(args.rounds):
                    for rev, handler in runs:
                        results[rev, handler].append(_burst(server, trees[rev], kubeconfig, args.events, handler))
            finally:
                stop_server(server)
    finally:
        for tree in trees.values():
            if tree != REPO:
                subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, capture_output=True)
    print(f"{args.pods:,} pods, {args.events:,} events, {args.rounds} rounds (fresh process per burst, interleaved)")
    for (rev, handler), rows in results.items():
        cpus, walls = [r[0] for r in rows], [r[1] for r in rows]
        print(
            f"{rev:>12} {'handler' if handler else 'no handler':>10}  CPU/event min {min(cpus):.0f} µs, "
            f"median {statistics.median(cpus):.0f} µs "
            f"({', '.join(f'{c:.0f}' for c in cpus)}) | wall median {statistics.median(walls):.2f} s"
        )


if __name__ == "__main__":
    main()
