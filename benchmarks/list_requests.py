"""What each kind of first LIST costs against a running API server: server time, bytes, client parse.

Run against a server started by ``real_server.py`` (or any kubeconfig)::

    .venv/bin/python benchmarks/list_requests.py --kubeconfig /tmp/kc [--apiserver-pid PID] [--rounds 3]

For each request kind it reads the whole answer with nothing else to do (``requests``, streamed in
1 MiB chunks, not decoded), then decodes it once, and prints the median of ``--rounds`` rounds:

- ``paged ""``: ``limit=500``, ``resourceVersion`` unset, continued to the end (the floor's and our
  reflector's first list: a consistent read, from etcd, page by page);
- ``""``: unpaginated, ``resourceVersion`` unset (a consistent read; from 1.31 served from the watch
  cache after a progress-notify round trip, ConsistentListFromCache);
- ``"0"`` and ``"0", limit=500``: ``resourceVersion=0`` (any: the watch cache as it is; it ignores
  ``limit``, so both come back in one response);
- ``NotOlderThan N``: ``resourceVersion=N&resourceVersionMatch=NotOlderThan``, N the latest RV (what
  our reflector sends on a relist, paginated, and what the watch cache serves);
- ``watch-list``: ``watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`` with
  bookmarks, read until the ``k8s.io/initial-events-end`` bookmark (needs the WatchList gate,
  off by default in 1.33: ``real_server.py --apiserver-flag=--feature-gates=WatchList=true``);
- with ``--protobuf``, the unpaginated kinds again with ``Accept: application/vnd.kubernetes.protobuf``.

With ``--sync`` it times syncs instead, each in a fresh process: this library's Pod cache at
``Tuning(page_size=200)`` (the default: paginated) and ``page_size=0`` (one unpaginated LIST), and
client-go's informer with JSON (``benchmarks/.build/clientgo``, built by ``run.py``): wall seconds,
the client's CPU seconds and its peak RSS.

Columns: wall seconds to the last byte (``first byte`` too), bytes, pages, the API server process's
CPU seconds over the request (``--apiserver-pid``: /proc), and the client's ``json.loads`` (orjson)
CPU seconds for the body (per watch event for the watch-list), with the collector off as in the floor.
On a 2-core machine the server's encode and the client's read share the cores: wall time is what a
client waits.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

from real_server import Session  # benchmarks/real_server.py: kubeconfig-authenticated sessions

PROTOBUF = "application/vnd.kubernetes.protobuf"


def _cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of process ``pid`` (0.0 without one)."""
    if not pid:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _loads() -> Callable[[bytes], Any]:
    try:
        import orjson

        return orjson.loads  # type: ignore[no-any-return]
    except ImportError:  # pragma: no cover - orjson is a dependency of the library
        return json.loads


class Probe:
    """Times one kind of request against the server in a kubeconfig."""

    def __init__(self, session: Session, pid: int | None) -> None:
        self.session = session
        self.pid = pid
        self.loads = _loads()

    def _get(self, params: dict[str, str], accept: str, stream_lines: bool = False) -> tuple[list[bytes], float, float]:
        """GET /api/v1/pods: (chunks or lines, seconds to the first byte, seconds to the last)."""
        http = self.session.get()
        started = time.perf_counter()
        response = http.get(
            f"{self.session.url}/api/v1/pods", params=params, headers={"Accept": accept}, stream=True, timeout=600
        )
        response.raise_for_status()
        parts: list[bytes] = []
        first = 0.0
        if stream_lines:
            for line in response.iter_lines(chunk_size=1 << 20):
                if not first:
                    first = time.perf_counter() - started
                parts.append(line)
                if b'"BOOKMARK"' in line[:64] and b"k8s.io/initial-events-end" in line:
                    break
            response.close()
        else:
            for chunk in response.iter_content(chunk_size=1 << 20):
                if not first:
                    first = time.perf_counter() - started
                parts.append(chunk)
        return parts, first, time.perf_counter() - started

    def list_kind(self, params: dict[str, str], accept: str = "application/json") -> dict[str, Any]:
        """One LIST (continued to the end when it is paginated)."""
        cpu0 = _cpu_seconds(self.pid)
        total = first = decode = 0.0
        size = pages = items = 0
        token = ""
        rv = ""
        while True:
            page_params = dict(params, **({"continue": token} if token else {}))
            if token:
                page_params.pop("resourceVersion", None)
                page_params.pop("resourceVersionMatch", None)
            parts, first_byte, seconds = self._get(page_params, accept)
            body = b"".join(parts)
            total += seconds
            first = first or first_byte
            size += len(body)
            pages += 1
            token = ""
            if accept == "application/json":
                gc.disable()  # as the floor: a collection pass per few thousand objects would dominate
                try:
                    t0 = time.thread_time()
                    parsed = self.loads(body)
                    decode += time.thread_time() - t0
                finally:
                    gc.enable()
                items += len(parsed["items"])
                rv = parsed["metadata"]["resourceVersion"]
                token = parsed["metadata"].get("continue") or ""
                del parsed
            del body, parts
            if not token:
                break
        return {
            "seconds": total,
            "first_byte": first,
            "bytes": size,
            "pages": pages,
            "items": items,
            "server_cpu": _cpu_seconds(self.pid) - cpu0,
            "decode": decode,
            "rv": rv,
        }

    def watch_list(self) -> dict[str, Any]:
        """A streaming watch-list, read until the initial-events-end bookmark."""
        cpu0 = _cpu_seconds(self.pid)
        params = {
            "watch": "1",
            "sendInitialEvents": "true",
            "resourceVersionMatch": "NotOlderThan",
            "allowWatchBookmarks": "true",
            "timeoutSeconds": "600",
        }
        lines, first, seconds = self._get(params, "application/json", stream_lines=True)
        gc.disable()
        try:
            t0 = time.thread_time()
            events = [self.loads(line) for line in lines if line]
            decode = time.thread_time() - t0
        finally:
            gc.enable()
        last = events[-1] if events else {}
        ended = last.get("type") == "BOOKMARK"
        return {
            "seconds": seconds,
            "first_byte": first,
            "bytes": sum(len(line) + 1 for line in lines),
            "pages": 1,
            "items": sum(1 for e in events if e.get("type") == "ADDED"),
            "server_cpu": _cpu_seconds(self.pid) - cpu0,
            "decode": decode,
            "rv": last.get("object", {}).get("metadata", {}).get("resourceVersion", "")
            if ended
            else "(no end bookmark)",
        }


def sync_one(kubeconfig: Path, page_size: int) -> None:
    """In this (fresh) process: sync this library's Pod cache at ``page_size``; print one JSON line."""
    import resource

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from cloudcoil_cache.caching import Cache, Tuning
    from cloudcoil_cache.client import Config
    from cloudcoil_cache.models.kubernetes.core.v1 import Pod

    config = Config(kubeconfig=str(kubeconfig), cache=Cache(resources=[Pod], tuning=Tuning(page_size=page_size)))
    config.initialize()
    informer = config.cache.get_informer(Pod, sync=True)  # type: ignore[union-attr]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    config.activate()
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime
    held = len(informer.list())  # type: ignore[union-attr]
    config.deactivate()
    config.close()
    print(json.dumps({"sync_s": seconds, "cpu_s": cpu, "held": held, "peak_rss_mb": after.ru_maxrss / 1024}))


def sync_rows(kubeconfig: Path, rounds: int) -> None:
    """This library's sync at page_size 200 (the default) and 0 (unpaginated), and client-go's with
    JSON if ``benchmarks/.build/clientgo`` was built (``run.py`` builds it); fresh processes, interleaved."""
    import subprocess

    binary = Path(__file__).resolve().parent / ".build" / "clientgo"
    runs: dict[str, list[dict[str, Any]]] = {}
    for _ in range(rounds):
        for page_size in (200, 0):
            out = subprocess.run(
                [sys.executable, __file__, "--kubeconfig", str(kubeconfig), "--sync-one", str(page_size)],
                capture_output=True,
                text=True,
                timeout=900,
                check=True,
            ).stdout
            runs.setdefault(f"cloudcoil_cache, page_size={page_size}", []).append(json.loads(out.splitlines()[-1]))
        if binary.exists():
            proc = subprocess.Popen(
                [str(binary), "-kubeconfig", str(kubeconfig), "-pods", "0", "-content-type", "json"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert proc.stdout is not None and proc.stdin is not None
            synced = json.loads(proc.stdout.readline())
            proc.stdin.close()
            proc.wait(timeout=60)
            runs.setdefault("client-go, JSON (RSS after the sync)", []).append(
                {
                    "sync_s": synced["sync_s"],
                    "cpu_s": synced["sync_cpu_s"],
                    "held": synced["held"],
                    "peak_rss_mb": synced["rss_kb"] / 1024,
                }
            )
    print(f"sync, {rounds} rounds (median), load {os.getloadavg()[0]:.1f}")
    print("| client | sync | client CPU | peak RSS |")
    print("|---|---|---|---|")
    for name, results in runs.items():
        rss = statistics.median(r["peak_rss_mb"] for r in results)
        print(
            f"| {name} | {statistics.median(r['sync_s'] for r in results):.2f} s | "
            f"{statistics.median(r['cpu_s'] for r in results):.2f} s | {rss:.0f} MB |"
        )


def _median_row(name: str, runs: list[dict[str, Any]]) -> str:
    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    last = runs[-1]
    return (
        f"| {name} | {med('seconds'):.2f} s | {med('first_byte'):.2f} s | {last['bytes'] / 1e6:.1f} MB | "
        f"{last['pages']} | {last['items']} | {med('server_cpu'):.2f} s | {med('decode'):.2f} s |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--apiserver-pid", type=int, help="kube-apiserver's pid, for its CPU seconds")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--protobuf", action="store_true", help="also the unpaginated kinds as protobuf")
    parser.add_argument("--no-watch-list", action="store_true", help="skip the watch-list (WatchList gate off)")
    parser.add_argument(
        "--sync", action="store_true", help="time syncs (this library at page_size 200 and 0, client-go)"
    )
    parser.add_argument("--sync-one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sync_one is not None:
        sync_one(args.kubeconfig, args.sync_one)
        return
    if args.sync:
        sync_rows(args.kubeconfig, args.rounds)
        return
    probe = Probe(Session(args.kubeconfig), args.apiserver_pid)
    latest = probe.list_kind({"resourceVersion": "0", "limit": "1"})["rv"]
    kinds: list[tuple[str, Callable[[], dict[str, Any]]]] = [
        ('paged "" (limit 500)', lambda: probe.list_kind({"limit": "500"})),
        ('"" (no limit)', lambda: probe.list_kind({})),
        ('"0"', lambda: probe.list_kind({"resourceVersion": "0"})),
        ('"0", limit 500', lambda: probe.list_kind({"resourceVersion": "0", "limit": "500"})),
        (
            f"NotOlderThan {latest}, limit 500",
            lambda: probe.list_kind(
                {"resourceVersion": latest, "resourceVersionMatch": "NotOlderThan", "limit": "500"}
            ),
        ),
    ]
    if not args.no_watch_list:
        kinds.append(("watch-list (sendInitialEvents)", probe.watch_list))
    if args.protobuf:
        kinds += [
            ('"" (no limit), protobuf', lambda: probe.list_kind({}, PROTOBUF)),
            ('"0", protobuf', lambda: probe.list_kind({"resourceVersion": "0"}, PROTOBUF)),
        ]
    results: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in kinds}
    for _ in range(args.rounds):  # interleaved: load drifts hit every kind alike
        for name, run in kinds:
            results[name].append(run())
    print(f"{probe.session.url}, {args.rounds} rounds (median), load {os.getloadavg()[0]:.1f}")
    print(
        "| request (resourceVersion) | to last byte | to first byte | bytes | pages | items "
        "| server CPU | json decode |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, runs in results.items():
        print(_median_row(name, runs))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
