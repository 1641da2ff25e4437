"""WebhookServer throughput and latency over TLS on loopback, the load generator in another process.

Two modes: ``keepalive`` (each client thread reuses one connection, as kube-apiserver does) and
``fresh`` (a new TLS connection per request: every request pays a handshake on a worker). The endpoint
answers at once, so what is measured is the server: parsing, TLS, threads. Reports requests/s and the
client-side p50/p99 latency in ms (median of ``--rounds``).

Run: .venv/bin/python benchmarks/webhook_server.py [--threads 8] [--requests 2000] [--rounds 3]

Measured on 2 shared cores (load average 11.8-12.2), ``--requests 1600 --rounds 3`` at i22-server:
keepalive 1,298 req/s, p50 3.7 ms, p99 30 ms; fresh 242 req/s, p50 24.8 ms, p99 123 ms.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import ssl
import statistics
import threading
import time

from cloudcoil_cache.admission import Answer, Exchange, WebhookServer

_BODY = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "x" * 36}})


class _Metrics:
    def certificate_read(self, ok: bool) -> None:
        pass

    def certificate_expiry(self, timestamp: float) -> None:
        pass


class _Endpoint:
    max_body_bytes = 4 * 1024 * 1024
    metrics = _Metrics()

    def start(self, sync_timeout: float) -> None:
        pass

    def stop(self, timeout: float) -> None:
        pass

    def readiness(self) -> str | None:
        return None

    def answer(self, exchange: Exchange, disconnected: threading.Event) -> Answer:
        return Answer(200, b'{"response": {"allowed": true}}')


def _client(port: int, bundle: bytes, mode: str, threads: int, per_thread: int, out: multiprocessing.Queue) -> None:
    context = ssl.create_default_context(cadata=bundle.decode())
    latencies: list[float] = []
    lock = threading.Lock()

    def run() -> None:
        mine = []
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)
        for _ in range(per_thread):
            if mode == "fresh":
                conn.close()
                conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)
            start = time.perf_counter()
            conn.request("POST", "/validate?timeout=10s", body=_BODY, headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            response.read()
            assert response.status == 200
            mine.append(time.perf_counter() - start)
        conn.close()
        with lock:
            latencies.extend(mine)

    workers = [threading.Thread(target=run) for _ in range(threads)]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    out.put((time.perf_counter() - start, latencies))


def _round(server: WebhookServer, mode: str, threads: int, requests: int) -> tuple[float, float, float]:
    ctx = multiprocessing.get_context("spawn")
    out: multiprocessing.Queue = ctx.Queue()
    proc = ctx.Process(target=_client, args=(server.port, server.ca_bundle, mode, threads, requests // threads, out))
    proc.start()
    wall, latencies = out.get(timeout=600)
    proc.join()
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1000
    p99 = latencies[int(len(latencies) * 0.99)] * 1000
    return len(latencies) / wall, p50, p99


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with WebhookServer(_Endpoint(), port=0) as server:
        for mode in ("keepalive", "fresh"):
            rounds = [_round(server, mode, args.threads, args.requests) for _ in range(args.rounds)]
            rate, p50, p99 = (statistics.median(r[i] for r in rounds) for i in range(3))
            print(f"{mode:9} {args.threads} threads: {rate:7.0f} req/s  p50 {p50:6.2f} ms  p99 {p99:7.2f} ms")


if __name__ == "__main__":
    main()
