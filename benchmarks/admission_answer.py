"""What ``AdmissionWebhook.answer`` costs, without HTTP: a realistic Pod review through a sync validator,
an async validator, and a mutator that adds a label (JSON Patch), from 1 and from 8 threads. Run::

    .venv/bin/python benchmarks/admission_answer.py              # 2,000 answers per case
    .venv/bin/python benchmarks/admission_answer.py --n 5000

Prints p50/p99 latency per answer (µs) and answers per second for each case. Timings are never
asserted anywhere: on the shared 2-core machine they move with the load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cloudcoil_cache.admission import AdmissionRequest, AdmissionWebhook, Exchange
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import make_pod


def _body(pod: dict[str, Any]) -> bytes:
    request = {
        "uid": "u",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "operation": "CREATE",
        "namespace": "default",
        "name": pod["metadata"]["name"],
        "object": pod,
    }
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}).encode()


def _webhook() -> AdmissionWebhook:
    hook = AdmissionWebhook()

    @hook.validating(Pod, path="/sync")
    def sync_check(request: AdmissionRequest[Pod]) -> None:
        return None

    @hook.validating(Pod, path="/async")
    async def async_check(request: AdmissionRequest[Pod]) -> None:
        return None

    @hook.mutating(Pod, path="/mutate")
    def add_label(request: AdmissionRequest[Pod]) -> Pod:
        pod = request.resource
        assert pod is not None
        pod.metadata.labels = {**(pod.metadata.labels or {}), "example.com/mutated": "true"}
        return pod

    return hook


def _measure(hook: AdmissionWebhook, path: str, body: bytes, n: int, threads: int) -> tuple[float, float, float]:
    exchange = Exchange("POST", path, {"timeout": "10s"}, {"content-type": "application/json"}, body)
    never = threading.Event()

    def one(_: int) -> float:
        start = time.perf_counter()
        answer = hook.answer(exchange, never)
        assert answer.status == 200, answer.body
        return time.perf_counter() - start

    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        latencies = sorted(pool.map(one, range(n)))
    wall = time.perf_counter() - started
    return statistics.median(latencies) * 1e6, latencies[int(len(latencies) * 0.99)] * 1e6, n / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    pod = make_pod("web-0", "default")
    body = _body(pod)
    print(f"review body: {len(body):,} bytes (make_pod)")
    hook = _webhook()
    with hook:
        for path in ("/sync", "/async", "/mutate"):
            for threads in (1, 8):
                p50, p99, rate = _measure(hook, path, body, args.n, threads)
                print(f"{path:8} threads={threads}: p50 {p50:8.0f} µs  p99 {p99:8.0f} µs  {rate:8.0f}/s")


if __name__ == "__main__":
    main()
