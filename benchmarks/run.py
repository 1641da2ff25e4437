"""Informer benchmarks: time to sync, memory per cached pod, events applied per second, read latency.

Run: ``.venv/bin/python benchmarks/run.py [--pods 10000] [--events 20000]``

The fake API server runs in a subprocess (``python -m cloudcoil_cache.testing serve``) so that
its CPU and memory are not counted against the client. Measured figures:

- floor: one paginated LIST (limit 500) read with requests + json.loads, nothing kept — the least
  any Python informer must do;
- sync: ``with config:`` on ``Cache(resources=[Pod])`` until the informer has synced;
- memory: traced bytes (tracemalloc) held by the synced cache, per pod, and the RSS growth;
- apply: watch events applied per second by the client pipeline (decode → structure/seal →
  store → one handler), fed from pre-serialised watch lines (no server in the loop);
- reads: ``Pod.list(namespace=...)`` and ``Pod.get(...)`` latency from the cache.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import requests

from cloudcoil_cache import _gc, _json
from cloudcoil_cache._listwatch import decode_event
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.caching._informer import Informer, InformerKey
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import make_pod


def _rss_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _start_server(pods: int, kubeconfig: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "cloudcoil_cache.testing", "serve", "--kubeconfig", str(kubeconfig),
         "--pods", str(pods)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        match = re.search(r"(http://127\.0\.0\.1:\d+)", line)
        if match:
            return proc, match.group(1)
    raise RuntimeError("the fake API server did not start")


def bench_floor(url: str) -> float:
    started = time.perf_counter()
    token = None
    count = 0
    while True:
        params = {"limit": "500"}
        if token:
            params["continue"] = token
        body = json.loads(requests.get(f"{url}/api/v1/pods", params=params, timeout=60).content)
        count += len(body["items"])
        token = body["metadata"].get("continue")
        if not token:
            return time.perf_counter() - started


def bench_sync(kubeconfig: Path, pods: int, trace: bool) -> dict[str, Any]:
    gc.collect()
    config = Config(kubeconfig=str(kubeconfig), cache=Cache(resources=[Pod], sync_timeout=600))
    config.initialize()
    if trace:
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
    rss0 = _rss_kb()
    started = time.perf_counter()
    config.activate()
    elapsed = time.perf_counter() - started
    result: dict[str, Any] = {"sync_s": elapsed}
    gc.collect()
    if trace:
        result["traced_kb_per_pod"] = (tracemalloc.get_traced_memory()[0] - base) / 1024 / pods
        tracemalloc.stop()
    result["rss_kb_per_pod"] = (_rss_kb() - rss0) / pods
    ns_times, get_times = [], []
    sample = Pod.list(namespace="default").items[:50]
    for _ in range(20):
        t0 = time.perf_counter()
        Pod.list(namespace="default")
        ns_times.append(time.perf_counter() - t0)
    for pod in sample:
        t0 = time.perf_counter()
        Pod.get(pod.name, namespace=pod.namespace)
        get_times.append(time.perf_counter() - t0)
    result["list_ns_ms"] = sorted(ns_times)[len(ns_times) // 2] * 1000
    result["list_ns_items"] = len(Pod.list(namespace="default").items)
    result["get_us"] = sorted(get_times)[len(get_times) // 2] * 1e6
    config.deactivate()
    config.close()
    return result


class _NoSource:
    def interrupt(self) -> None:
        pass


def bench_apply(events: int, pods: int) -> float:
    """Client pipeline throughput: decode + structure/seal + store + one handler queue, per event."""
    informer: Informer[Any] = Informer(InformerKey(Pod, None), lambda key: _NoSource())  # type: ignore
    base = [make_pod(f"p-{i}", "default", index=i) for i in range(pods)]
    lines = []
    for n in range(events):
        pod = base[n % pods]
        pod["metadata"]["resourceVersion"] = str(1000 + n)
        lines.append(_json.dumps({"type": "MODIFIED", "object": {"kind": "Pod", "apiVersion": "v1", **pod}}))
    done = threading.Event()
    seen = [0]

    def handler(old: Any, new: Any) -> None:
        seen[0] += 1
        if seen[0] == events:
            done.set()

    from cloudcoil_cache.caching._views import SyncInformer
    view = SyncInformer(informer)
    view.on_update(handler)
    informer.replace([Pod.from_dict_sealed(p) for p in base], "1", resync=False)
    _gc.freeze()  # as the reflector does after a list
    for listener in informer._listeners:
        listener.start()
    structure = Pod.from_dict_sealed
    started = time.perf_counter()
    for line in lines:
        informer.apply(decode_event(line, structure))
        _gc.note_events()  # as the reflector does per applied event
    done.wait(120)
    applied = time.perf_counter() - started  # until the handler has seen every event
    for listener in informer._listeners:
        listener.stop()
        listener.join()
    return events / applied


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=20_000)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, orjson={_json.HAVE_ORJSON}, pods={args.pods}")
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        proc, url = _start_server(args.pods, kubeconfig)
        try:
            floor = min(bench_floor(url) for _ in range(2))
            print(f"floor  (paginated GET + json.loads): {floor:.2f} s")
            timed = bench_sync(kubeconfig, args.pods, trace=False)
            print(f"sync   {timed['sync_s']:.2f} s ({timed['sync_s'] / floor:.1f}x the floor), "
                  f"RSS +{timed['rss_kb_per_pod']:.1f} KB/pod")
            print(f"reads  Pod.list(namespace='default') {timed['list_ns_ms']:.2f} ms for "
                  f"{timed['list_ns_items']} pods; Pod.get {timed['get_us']:.1f} µs")
            traced = bench_sync(kubeconfig, args.pods, trace=True)
            print(f"memory {traced['traced_kb_per_pod']:.1f} KB/pod held by the cache (tracemalloc)")
        finally:
            proc.terminate()
            proc.wait(10)
    rate = bench_apply(args.events, min(args.pods, 2000))
    print(f"apply  {rate:,.0f} watch events/s (decode + seal + store + handler queue)")
    os.environ.pop("KUBECONFIG", None)


if __name__ == "__main__":
    main()
