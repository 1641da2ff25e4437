"""The sync of a pod cache: a streaming list (``Tuning(streaming_lists=True)``) against LIST+WATCH.

Run (the fake API server in a child process, so its CPU is not the client's)::

    .venv/bin/python benchmarks/streaming_lists.py [--pods 10000] [--runs 3]

Each run is a fresh client process that enters ``Config(cache=Cache(resources=[Pod]))`` and waits
for the sync; it prints the wall seconds and the client process's CPU seconds of the sync. Timing
stays here: the tests assert behaviour, not speed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def serve(pods: int, kubeconfig: str) -> None:
    from cloudcoil_cache.testing import FakeAPIServer
    from cloudcoil_cache.testing.apiserver.seed import seed_pods

    with FakeAPIServer() as server:
        seed_pods(server, pods)
        server.write_kubeconfig(kubeconfig)
        print(server.url, flush=True)
        sys.stdin.readline()


def client(streaming: bool, kubeconfig: str) -> None:
    from cloudcoil_cache.caching import Cache, Tuning
    from cloudcoil_cache.client import Config
    from cloudcoil_cache.models.kubernetes.core.v1 import Pod

    config = Config(kubeconfig=kubeconfig, cache=Cache(tuning=Tuning(streaming_lists=streaming), resources=[Pod]))
    wall, cpu = time.perf_counter(), time.process_time()
    with config:
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        (status,) = config.cache.status().informers  # type: ignore[union-attr]
        print(json.dumps({"wall": wall, "cpu": cpu, "objects": status.object_count, "error": status.last_error}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--client", choices=["stream", "list"])
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--kubeconfig")
    args = parser.parse_args()
    if args.serve:
        return serve(args.pods, args.kubeconfig)
    if args.client:
        return client(args.client == "stream", args.kubeconfig)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = str(Path(tmp) / "kubeconfig")
        argv = [sys.executable, __file__, "--serve", "--pods", str(args.pods), "--kubeconfig", kubeconfig]
        server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        try:
            assert server.stdout is not None
            server.stdout.readline()
            results: dict[str, list[dict[str, float]]] = {"stream": [], "list": []}
            for _ in range(args.runs):
                for mode in ("list", "stream"):
                    out = subprocess.run(
                        [sys.executable, __file__, "--client", mode, "--kubeconfig", kubeconfig],
                        capture_output=True,
                        text=True,
                        env=env,
                        check=True,
                    )
                    results[mode].append(json.loads(out.stdout.strip().splitlines()[-1]))
            for mode, runs in results.items():
                walls = sorted(r["wall"] for r in runs)
                cpus = sorted(r["cpu"] for r in runs)
                print(
                    f"{mode:6} {args.pods} pods: sync wall median {walls[len(walls) // 2]:.2f}s, client CPU median "
                    f"{cpus[len(cpus) // 2]:.2f}s, objects {runs[0]['objects']}, error {runs[0]['error']}"
                )
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
