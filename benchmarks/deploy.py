"""gunicorn workers with and without ``--preload`` over one cache of 10,000 pods (issue 33).

For each mode, 8 sync workers of ``tests/deploy/apps/bench_app.py`` (``config.set_default()`` at
import, a cache of every pod in "default") in front of the fake API server (in this process,
seeded with realistic pods):

- LISTs and WATCHes the workers made to start, and the seconds until every worker answered;
- summed PSS (``/proc/PID/smaps_rollup``) of the master and the workers after the start, and after
  ``--seconds`` of reads (``/count``: ``len(Pod.list(namespace="default").items)`` from the cache)
  from ``--clients`` threads, with the p50/p99 latency of those reads;
- the LISTs when every worker is replaced (each killed in turn, gunicorn forks a new one: a recycle);
- how long SIGTERM takes to end the server.

Modes: ``plain`` (each worker imports the app: a LIST each), ``preload`` (the master imports it and
lists once; the workers resume its copy), ``preload+freeze`` (the same, with ``gc.freeze()`` in
gunicorn's ``pre_fork``: the collector never touches the copy, so fewer of its pages are copied).

Run::

    .venv/bin/python benchmarks/deploy.py                        # 10,000 pods, 8 workers, 60 s of reads
    .venv/bin/python benchmarks/deploy.py --pods 2000 --seconds 10 --modes plain preload
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests"), str(REPO / "tests" / "deploy")]

from _deploy_support import APPS, Served, api_requests, app_env, every_worker_sees, free_port, get  # noqa: E402

from cloudcoil_cache.testing import FakeAPIServer, seed_pods  # noqa: E402

FREEZE_CONF = "import gc\n\ndef pre_fork(server, worker):\n    gc.freeze()\n"


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.extend(int(p) for p in text)
    return found


def pss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                total += int(line.split()[1])
    return total / 1024


def reads(port: int, clients: int, seconds: float) -> list[float]:
    latencies: list[float] = []
    stop = time.monotonic() + seconds

    def client() -> None:
        while time.monotonic() < stop:
            t0 = time.perf_counter()
            status = get(port, "/count", timeout=30)[0]
            if status == 200:
                latencies.append(time.perf_counter() - t0)

    threads = [threading.Thread(target=client, name=f"bench-client-{i}") for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies


def run_mode(
    mode: str, server: FakeAPIServer, kubeconfig: str, args: argparse.Namespace, folder: Path
) -> dict[str, object]:
    port = free_port()
    options = ["--preload"] if mode.startswith("preload") else []
    if mode == "preload+freeze":
        conf = folder / "freeze.conf.py"
        conf.write_text(FREEZE_CONF)
        options += ["-c", str(conf)]
    argv = [
        sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", str(args.workers),
        "--timeout", "300", "--no-control-socket", *options, "bench_app:app",
    ]  # fmt: skip
    lists0, watches0 = api_requests(server, "list"), api_requests(server, "watch")
    t0 = time.monotonic()
    served = Served(argv, app_env(kubeconfig), APPS, port, folder / f"{mode}.log")
    try:
        served.wait_ready(timeout=600)
        every_worker_sees(port, lambda st: True, args.workers, timeout=600, path="/status")
        started = time.monotonic() - t0
        pids = [served.proc.pid, *children(served.proc.pid)]
        row: dict[str, object] = {
            "mode": mode,
            "start_s": round(started, 1),
            "lists_start": api_requests(server, "list") - lists0,
            "watches_start": api_requests(server, "watch") - watches0,
            "pss_start_mb": round(pss_mb(pids), 1),
        }
        latencies = reads(port, args.clients, args.seconds)
        pids = [served.proc.pid, *children(served.proc.pid)]
        cuts = statistics.quantiles(latencies, n=100)
        row.update(
            pss_reads_mb=round(pss_mb(pids), 1),
            reads=len(latencies),
            p50_ms=round(cuts[49] * 1000, 2),
            p99_ms=round(cuts[98] * 1000, 2),
        )
        lists1 = api_requests(server, "list")
        for pid in children(served.proc.pid):  # recycle every worker, one at a time
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 300
            while pid in children(served.proc.pid) and time.monotonic() < deadline:
                threading.Event().wait(0.05)
        every_worker_sees(port, lambda st: True, args.workers, timeout=600, path="/status")
        row["lists_recycle"] = api_requests(server, "list") - lists1
        code, seconds = served.stop(signal.SIGTERM, timeout=60)
        row["sigterm_s"] = round(seconds, 2)
        row["exit"] = code
        return row
    finally:
        served.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0, help="seconds of reads per mode")
    parser.add_argument("--clients", type=int, default=8, help="reading threads")
    parser.add_argument("--modes", nargs="+", default=["plain", "preload", "preload+freeze"])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, FakeAPIServer() as server:
        folder = Path(tmp)
        seed_pods(server, args.pods, namespaces=("default",))
        kubeconfig = server.write_kubeconfig(folder / "kubeconfig")
        load = os.getloadavg()
        print(f"{args.pods} pods, {args.workers} gunicorn sync workers, ", end="")
        print(f"{args.seconds:g} s of reads from {args.clients} clients")
        print(f"load average before: {load[0]:.1f}")
        header = ["mode", "start_s", "lists_start", "watches_start", "pss_start_mb", "pss_reads_mb", "reads",
                  "p50_ms", "p99_ms", "lists_recycle", "sigterm_s", "exit"]  # fmt: skip
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for mode in args.modes:
            row = run_mode(mode, server, kubeconfig, args, folder)
            print("| " + " | ".join(str(row[h]) for h in header) + " |", flush=True)
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
