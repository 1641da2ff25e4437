"""A 410 relist of a large pod cache: RSS before, at the peak and after, and the longest pause of another thread.

Run (a fresh client process; the API server runs in a child process, so its memory and CPU are not counted)::

    .venv/bin/python benchmarks/relist.py [--pods 4000] [--relists 5]

The child is the fake API server seeded with ``--pods`` realistic pods (``seed_pods``). The client
enters ``Config(cache=Cache(resources=[Pod]))`` with the default ``Tuning`` (GC freeze on) and waits
for the sync; then, ``--relists`` times, the child compacts its history and ends every watch with an
ERROR event carrying a 410 Expired Status (after a write to one pod, so the watch made progress
first: 410s in a row without progress back off before relisting), so the informer relists (from
its last resourceVersion: unpaginated and decoded a batch at a time by default). Meanwhile a ticker thread wakes every
millisecond, records the longest gap between two wake-ups (a pause of every other thread: a long C
call holding the GIL, or a collection) and samples VmRSS.

Figures: ``synced`` (RSS after the sync and a ``gc.collect()``), the client process's CPU seconds per
relist (from the 410 until the informer is current again, with its ticker thread's small share),
``peak`` (the highest RSS sampled during the relists; VmHWM too), ``after`` (after the last relist
and a ``gc.collect()``), the ratios of peak and after to synced, and the longest pause of each relist.
Targets (issue 20): peak and after ≤ 1.2 × synced, pauses ≤ 50 ms. Timing stays here: the tests
assert behaviour, not speed.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


EXPIRED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "too old resource version",
    "reason": "Expired",
    "code": 410,
}


def serve(pods: int, kubeconfig: str) -> None:
    """The child: a fake API server; on ``gone`` compacts its history and drops the watches."""
    from cloudcoil_cache.testing import FakeAPIServer, seed_pods

    with FakeAPIServer(bookmark_interval=3600) as server:
        seed_pods(server, pods)
        gc.collect()
        gc.freeze()  # the seeded store is permanent
        server.write_kubeconfig(kubeconfig)
        one = server.list("pods")[0]["metadata"]
        print(server.url, flush=True)
        for n, line in enumerate(sys.stdin):
            if line.strip() == "gone":  # what an API server does when a watch fell out of its history
                server.wait_for_watches(1, timeout=60)  # the informer's watch opens just after its sync
                # a write first, so the watch makes progress before its 410: 410s in a row (no
                # progress between) back off before relisting (client-go's rule), which this would time
                server.patch("pods", one["name"], {"metadata": {"labels": {"relist": str(n)}}}, one["namespace"])
                server.compact()
                print(f"expired {server.send_error_event(EXPIRED)}", flush=True)
            elif line.strip() == "quit":
                return


def rss_mb(field: str = "VmRSS") -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


class Ticker:
    """A thread that wakes every millisecond: the longest gap between wake-ups, and the highest RSS."""

    def __init__(self) -> None:
        self.longest = 0.0
        self.peak_rss = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-ticker", daemon=True)

    def _run(self) -> None:
        last = time.perf_counter()
        n = 0
        while not self._stop.wait(0.001):
            now = time.perf_counter()
            self.longest = max(self.longest, now - last)
            last = now
            n += 1
            if n % 5 == 0:
                self.peak_rss = max(self.peak_rss, rss_mb())

    def __enter__(self) -> Ticker:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._stop.set()
        self._thread.join()


def client(pods: int, relists: int) -> None:
    folder = tempfile.mkdtemp(prefix="relist-bench-")
    kubeconfig = os.path.join(folder, "kubeconfig")
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--pods", str(pods), "--kubeconfig", kubeconfig],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        child.stdout.readline()  # the URL: the server is seeded and listening
        run(kubeconfig, pods, relists, child.stdin, child.stdout)
    finally:
        if child.stdin is not None and not child.stdin.closed:
            child.stdin.write("quit\n")
            child.stdin.close()
        child.wait(30)
        child.stdout.close()
        for name in os.listdir(folder):
            os.unlink(os.path.join(folder, name))
        os.rmdir(folder)


def run(kubeconfig: str, pods: int, relists: int, to_server: IO[str], from_server: IO[str]) -> None:
    from cloudcoil_cache.caching import Cache
    from cloudcoil_cache.client import Config
    from cloudcoil_cache.models.kubernetes.core.v1 import Pod

    base = rss_mb()
    config = Config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod], resync_period=None, sync_timeout=300))
    with config:
        informer = config.cache.informer_for(Pod)  # type: ignore[union-attr]
        assert informer is not None and len(informer.store) == pods
        gc.collect()
        synced = rss_mb()
        print(
            f"{pods} pods synced: RSS {synced:.0f} MB ({base:.0f} MB before the Config; "
            f"{(synced - base) * 1024 / pods:.1f} KB/pod)",
            flush=True,
        )
        pauses, cpus = [], []
        with Ticker() as ticker:
            for n in range(relists):
                before = informer.status().relist_count
                relisted = threading.Event()
                cpu0 = time.process_time()  # this process (the server is a child): the relist's decoding
                to_server.write("gone\n")
                to_server.flush()
                from_server.readline()
                deadline = time.monotonic() + 120
                tick = Ticker()
                with tick:
                    while informer.status().relist_count == before or informer.status().state != "current":
                        if time.monotonic() > deadline:
                            raise SystemExit(f"relist {n + 1}: no relist within 120 s ({informer.status()})")
                        relisted.wait(0.01)
                    relisted.wait(0.2)  # the relist's own tail (the old objects freed in steps)
                cpus.append(time.process_time() - cpu0)
                pauses.append(tick.longest)
                ticker.peak_rss = max(ticker.peak_rss, tick.peak_rss)
                print(
                    f"relist {n + 1}: longest pause {tick.longest * 1000:.0f} ms; client CPU {cpus[-1]:.2f} s; "
                    f"RSS now {rss_mb():.0f} MB",
                    flush=True,
                )
        assert len(informer.store) == pods
        gc.collect()
        after = rss_mb()
        peak = max(ticker.peak_rss, after)
        print(
            f"RSS synced {synced:.0f} MB, peak {peak:.0f} MB ({peak / synced:.2f}x; VmHWM "
            f"{rss_mb('VmHWM'):.0f} MB), after {after:.0f} MB ({after / synced:.2f}x); longest pause "
            f"{max(pauses) * 1000:.0f} ms (median {sorted(pauses)[len(pauses) // 2] * 1000:.0f} ms); client CPU "
            f"per relist: median {sorted(cpus)[len(cpus) // 2]:.2f} s",
            flush=True,
        )
    config.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=4000)
    parser.add_argument("--relists", type=int, default=5)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.pods, args.kubeconfig)
    else:
        client(args.pods, args.relists)


if __name__ == "__main__":
    main()
