"""A soak of minutes (never in CI): an informer cache against a churning fake API server with periodic faults.

Run (a fresh client process; the API server runs in a child process, so its memory and CPU are not counted)::

    .venv/bin/python benchmarks/soak.py --minutes 3 [--pods 4000] [--rate 100] [--fault-every 10] [--seed 1]

The child is the fake API server seeded with ``--pods`` realistic pods; a thread of its own churns them at
``--rate`` writes per second (label patches, and delete + re-create pairs, so the pod count stays flat).
The client enters ``Config(cache=Cache(resources=[Pod]))`` with the default ``Tuning`` and, every
``--fault-every`` seconds (jittered, seeded), has the child inject one fault: a dropped watch, a 410 ERROR
event, compaction + a dropped watch, 500s on the relist a 410 forces, 503s on re-watches, or a stall of
every watch for 5 s.

Printed: RSS (VmRSS after a ``gc.collect()``) and the cache's pod count, relists and state once a minute;
the RSS slope (least squares, MB per minute, over every sample and over the second half); the faults by
kind; and at the end convergence: the churn stops, and the time until the cache holds exactly the
server's pods at the server's resourceVersions (exit status 1 if it does not within ``--converge``
seconds).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
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
FAULTS = ("drop", "error_410", "compact_drop", "list_500", "watch_503", "stall")


# ----------------------------------------------------------------------------------- the server
def serve(pods: int, rate: float, seed: int, kubeconfig: str) -> None:
    """The child: a fake API server, its churn thread, and the commands read on stdin."""
    from cloudcoil_cache.testing import FakeAPIServer, make_pod, seed_pods

    quiet = threading.Event()
    with FakeAPIServer(bookmark_interval=30) as server:
        keys = seed_pods(server, pods)
        gc.collect()
        gc.freeze()
        server.write_kubeconfig(kubeconfig)

        def churn() -> None:
            rng = random.Random(seed)
            n = 0
            started = time.monotonic()
            while not quiet.wait(max(0.0, started + n / rate - time.monotonic())):
                n += 1
                slot = rng.randrange(len(keys))
                namespace, name = keys[slot].split("/")
                try:
                    if n % 10:
                        server.patch("pods", name, {"metadata": {"labels": {"soak": str(n)}}}, namespace)
                    else:  # a pod replaced by a new one: a delete, then an add
                        server.delete("pods", name, namespace)
                        fresh = f"soak-{n}"
                        server.create("pods", make_pod(fresh, namespace, index=n), namespace)
                        keys[slot] = f"{namespace}/{fresh}"
                except Exception as exc:  # a write refused under a fault: the churn goes on
                    print(f"churn: {exc}", file=sys.stderr, flush=True)

        churner = threading.Thread(target=churn, name="soak-churn", daemon=True)
        churner.start()
        print(server.url, flush=True)
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            if words[0] == "fault":
                inject(server, words[1])
                print(f"injected {words[1]}", flush=True)
            elif words[0] == "quiet":
                quiet.set()
                churner.join()
                server.clear_faults()
                server.resume_watches()
                state = {
                    f"{p['metadata']['namespace']}/{p['metadata']['name']}": p["metadata"]["resourceVersion"]
                    for p in server.list("pods")
                }
                print(json.dumps(state), flush=True)
            elif words[0] == "quit":
                break
        quiet.set()


def inject(server: Any, kind: str) -> None:
    if kind == "drop":
        server.drop_watches()
    elif kind == "error_410":
        server.send_error_event(EXPIRED)
    elif kind == "compact_drop":
        server.compact()
        server.drop_watches()
    elif kind == "list_500":
        server.fail_next(3, 500, verb="list")
        server.send_error_event(EXPIRED)
    elif kind == "watch_503":
        server.fail_next(2, 503, verb="watch")
        server.drop_watches()
    elif kind == "stall":
        server.stall_watches()
        threading.Timer(5.0, server.resume_watches).start()
    else:
        raise ValueError(kind)


# ----------------------------------------------------------------------------------- the client
def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (minute, MB) points, MB per minute."""
    if len(points) < 2:
        return 0.0
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    den = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / den if den else 0.0


def soak(args: argparse.Namespace, to_server: IO[str], from_server: IO[str], kubeconfig: str) -> int:
    from cloudcoil_cache.caching import Cache
    from cloudcoil_cache.client import Config
    from cloudcoil_cache.models.kubernetes.core.v1 import Pod

    rng = random.Random(args.seed)
    faults: Counter[str] = Counter()
    config = Config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod], sync_timeout=300))
    waiter = threading.Event()  # never set: the client's clock ticks with timed waits on it
    with config:
        informer = config.cache.informer_for(Pod)  # type: ignore[union-attr]
        assert informer is not None

        def sample(minute: float) -> tuple[float, float]:
            gc.collect()
            rss = rss_mb()
            status = informer.status()
            print(
                f"minute {minute:4.1f}: RSS {rss:6.1f} MB, {status.object_count} pods cached, "
                f"{status.relist_count} lists, state {status.state}, faults {sum(faults.values())}",
                flush=True,
            )
            return minute, rss

        start = time.monotonic()
        samples = [sample(0.0)]
        end = start + args.minutes * 60
        next_fault = start + rng.uniform(0.5, 1.5) * args.fault_every
        next_sample = start + 60
        while (now := time.monotonic()) < end:
            if now >= next_fault:
                kind = rng.choice(FAULTS)
                to_server.write(f"fault {kind}\n")
                to_server.flush()
                from_server.readline()
                faults[kind] += 1
                next_fault = now + rng.uniform(0.5, 1.5) * args.fault_every
            if now >= next_sample:
                samples.append(sample((now - start) / 60))
                next_sample += 60
            waiter.wait(max(0.0, min(next_fault, next_sample, end) - time.monotonic()))
        samples.append(sample((time.monotonic() - start) / 60))
        to_server.write("quiet\n")
        to_server.flush()
        state: dict[str, str] = json.loads(from_server.readline())
        quiet_at = time.monotonic()
        converged = None
        while time.monotonic() - quiet_at < args.converge:
            cached = {
                f"{o.metadata.namespace}/{o.metadata.name}": o.metadata.resource_version for o in informer.store.list()
            }
            if cached == state:
                converged = time.monotonic() - quiet_at
                break
            waiter.wait(0.1)
        status = informer.status()
    config.close()
    half = [p for p in samples if p[0] >= samples[-1][0] / 2]
    print(
        f"\n{args.minutes:g} min, {args.pods} pods, churn {args.rate:g} writes/s, a fault every "
        f"~{args.fault_every:g} s (seed {args.seed})"
    )
    print(f"faults: {sum(faults.values())} ({', '.join(f'{k} {v}' for k, v in sorted(faults.items()))})")
    print(
        f"RSS: {samples[0][1]:.1f} -> {samples[-1][1]:.1f} MB; slope {slope(samples):+.2f} MB/min "
        f"(second half {slope(half):+.2f} MB/min); lists {status.relist_count}"
    )
    if converged is None:
        print(
            f"convergence: NOT within {args.converge:g} s: the cache has {status.object_count} pods, the "
            f"server {len(state)}; state {status.state}, last error {status.last_error}"
        )
        return 1
    print(
        f"convergence: cache == server ({len(state)} pods, every resourceVersion) {converged:.1f} s after "
        "the churn stopped"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--pods", type=int, default=4000)
    parser.add_argument("--rate", type=float, default=100.0, help="server writes per second")
    parser.add_argument("--fault-every", type=float, default=10.0, help="seconds between faults (jittered)")
    parser.add_argument("--converge", type=float, default=120.0, help="seconds allowed to converge at the end")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--verbose", action="store_true", help="show the library's warnings")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.pods, args.rate, args.seed, args.kubeconfig)
        return 0
    if not args.verbose:
        logging.disable(logging.ERROR)  # every injected fault logs a warning or an error
    with tempfile.TemporaryDirectory(prefix="soak-") as folder:
        kubeconfig = os.path.join(folder, "kubeconfig")
        child = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--serve",
                "--pods",
                str(args.pods),
                "--rate",
                str(args.rate),
                "--seed",
                str(args.seed),
                "--kubeconfig",
                kubeconfig,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdin is not None and child.stdout is not None
        try:
            child.stdout.readline()  # the URL: seeded and listening
            return soak(args, child.stdin, child.stdout, kubeconfig)
        finally:
            with_stdin = child.stdin
            if not with_stdin.closed:
                try:
                    with_stdin.write("quit\n")
                    with_stdin.close()
                except BrokenPipeError:
                    pass
            child.wait(60)
            child.stdout.close()


if __name__ == "__main__":
    sys.exit(main())
