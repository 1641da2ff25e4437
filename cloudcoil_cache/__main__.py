"""Command line: ``python -m cloudcoil_cache demo`` runs the informer cache against the embedded fake cluster."""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Sequence

__all__ = ["main"]


def _demo(pods: int, events: int) -> int:
    from cloudcoil_cache.caching import Cache
    from cloudcoil_cache.client import Config
    from cloudcoil_cache.models.kubernetes.core.v1 import Pod
    from cloudcoil_cache.testing import FakeAPIServer, make_pod, seed_pods

    with FakeAPIServer() as server, tempfile.TemporaryDirectory() as tmp:
        seed_pods(server, pods)
        kubeconfig = server.write_kubeconfig(Path(tmp) / "kubeconfig")
        print(f"fake API server at {server.url} serving {pods} pods; kubeconfig {kubeconfig}")

        config = Config(kubeconfig=str(kubeconfig), cache=Cache(resources=[Pod]))
        informer = config.cache.get_informer(Pod, sync=True)  # type: ignore[union-attr]
        seen: dict[str, int] = {"add": 0, "update": 0, "delete": 0}
        lock = threading.Lock()
        all_done = threading.Event()
        target = pods + 3 * events

        def count(kind: str) -> None:
            with lock:
                seen[kind] += 1
                if sum(seen.values()) >= target:
                    all_done.set()

        informer.on_add(lambda pod: count("add"))
        informer.on_update(lambda old, new: count("update"))
        informer.on_delete(lambda pod: count("delete"))

        started = time.perf_counter()
        with config:
            synced = time.perf_counter() - started
            status = config.cache.status()  # type: ignore[union-attr]
            print(f"cache synced in {synced * 1000:.0f} ms: {status.resource_count} objects, "
                  f"{status.informer_count} informer(s), ready={status.ready}")
            for namespace in ("default", "kube-system", "team-a", "team-b"):
                t0 = time.perf_counter()
                found = Pod.list(namespace=namespace)
                print(f"  Pod.list(namespace={namespace!r}) -> {len(found.items)} pods from the cache "
                      f"in {(time.perf_counter() - t0) * 1e6:.0f} µs")
            first = found.items[0] if found.items else None
            if first is not None:
                t0 = time.perf_counter()
                same = Pod.get(first.name, namespace=first.namespace)
                print(f"  Pod.get({first.name!r}) -> phase {same.status.phase} in "
                      f"{(time.perf_counter() - t0) * 1e6:.0f} µs (shared, read-only: use .copy() to edit)")

            print(f"applying {events} creates, {events} updates and {events} deletes on the server...")
            t0 = time.perf_counter()
            for i in range(events):
                server.create("pods", make_pod(f"demo-{i}", "default", index=10_000 + i))
            for i in range(events):
                pod = server.get("pods", f"demo-{i}", "default")
                pod["metadata"].setdefault("labels", {})["demo"] = "updated"
                server.update("pods", pod, "default")
            for i in range(events):
                server.delete("pods", f"demo-{i}", "default")
            if not all_done.wait(30):
                print(f"handlers saw only {seen} of {target} events", file=sys.stderr)
                return 1
            elapsed = time.perf_counter() - t0
            print(f"handlers received {seen['add']} adds, {seen['update']} updates, {seen['delete']} "
                  f"deletes ({3 * events / elapsed:.0f} events/s end to end)")
        print("scope exited: every reflector and handler thread stopped and joined")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cloudcoil_cache",
                                     description="cloudcoil_cache command line")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="sync an informer cache from the embedded fake cluster")
    demo.add_argument("--pods", type=int, default=2000, help="pods to seed (default 2000)")
    demo.add_argument("--events", type=int, default=300, help="creates/updates/deletes to apply")
    sub.add_parser("serve", help="run the fake API server (same as python -m cloudcoil_cache.testing serve)",
                   add_help=False)
    args, rest = parser.parse_known_args(argv)
    if args.command == "serve":
        from cloudcoil_cache.testing.__main__ import main as serve_main
        return int(serve_main(["serve", *rest]) or 0)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    return _demo(args.pods, args.events)


if __name__ == "__main__":
    sys.exit(main())

