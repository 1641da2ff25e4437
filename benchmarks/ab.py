"""A/B of two trees: fresh-process syncs of the same server, interleaved, min and median of each.

On a shared 2-core machine single runs move ±30%; interleaving fresh processes of both trees
against one server, several rounds, is what shows a 5-10% change. Run::

    .venv/bin/python benchmarks/ab.py 01ab9bd HEAD                # 10,000 pods, 4 rounds
    .venv/bin/python benchmarks/ab.py HEAD~1 . --pods 3000 --rounds 6

A revision is checked out into ``benchmarks/.build/ab-<rev>`` (a git worktree, removed after);
``.`` is the working tree as it is. Each sync is ``Cache(resources=[Pod])`` entered until synced,
in its own process (``--client``): wall and CPU seconds, and VmRSS after a collection.
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def client(tree: str, kubeconfig: str) -> None:
    """One sync with the package of ``tree``; prints ``wall cpu rss_kb``."""
    sys.path.insert(0, tree)
    import cloudcoil_cache
    from cloudcoil_cache.caching import Cache
    from cloudcoil_cache.client import Config
    from cloudcoil_cache.models.kubernetes.core.v1 import Pod

    if not cloudcoil_cache.__file__ or not cloudcoil_cache.__file__.startswith(tree):
        raise SystemExit(f"imported {cloudcoil_cache.__file__}, not the tree {tree}")
    config = Config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod], sync_timeout=1200))
    config.initialize()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = usage.ru_utime + usage.ru_stime
    started = time.perf_counter()
    config.activate()
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    gc.collect()
    with open("/proc/self/status") as status:
        rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    print(f"{wall:.3f} {usage.ru_utime + usage.ru_stime - cpu0:.3f} {rss}")
    config.deactivate()
    config.close()


def checkout(rev: str) -> Path:
    if rev == ".":
        return REPO
    path = HERE / ".build" / f"ab-{rev.replace('/', '_').replace('~', '-')}"
    subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=REPO, capture_output=True)
    subprocess.run(
        ["git", "worktree", "add", "--detach", "-f", str(path), rev], cwd=REPO, check=True, capture_output=True
    )
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revisions", nargs="*", help="two or more git revisions ('.' = the working tree)")
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--client", nargs=2, metavar=("TREE", "KUBECONFIG"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        client(*args.client)
        return
    if len(args.revisions) < 2:
        parser.error("give at least two revisions")
    sys.path.insert(0, str(HERE))
    import peers

    trees = {rev: checkout(rev) for rev in args.revisions}
    results: dict[str, list[tuple[float, float, int]]] = {rev: [] for rev in trees}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            kubeconfig = Path(tmp) / "kubeconfig"
            proc, _url = peers._start_server(sys.executable, args.pods, kubeconfig)
            try:
                for _ in range(args.rounds):
                    for rev, tree in trees.items():
                        done = subprocess.run(
                            [sys.executable, __file__, "--client", str(tree), str(kubeconfig)],
                            capture_output=True,
                            text=True,
                            check=True,
                            timeout=1200,
                        )
                        wall, cpu, rss = done.stdout.split()[-3:]
                        results[rev].append((float(wall), float(cpu), int(rss)))
            finally:
                peers.stop_server(proc)
    finally:
        for tree in trees.values():
            if tree != REPO:
                subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, capture_output=True)
    print(f"{args.pods:,} pods, {args.rounds} rounds (fresh process per sync, interleaved)")
    for rev, rows in results.items():
        walls, cpus = [r[0] for r in rows], [r[1] for r in rows]
        print(
            f"{rev:>12}  wall min {min(walls):.2f} s, median {statistics.median(walls):.2f} s | "
            f"CPU min {min(cpus):.2f} s, median {statistics.median(cpus):.2f} s | "
            f"RSS {statistics.median(r[2] for r in rows) / 1024:.0f} MB"
        )


if __name__ == "__main__":
    main()
