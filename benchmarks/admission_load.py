"""200 concurrent ConfigMap creates through a validating (cached Secret read) + mutating webhook of ours,
against the same creates without webhooks; the load generator in another process.

Run::

    .venv/bin/python benchmarks/admission_load.py                     # the fake API server (its own process)
    KUBEBUILDER_ASSETS=/root/.cache/cloudcoil_cache/real-apiserver/v1.33.13-v3.5.21 \\
        .venv/bin/python benchmarks/admission_load.py --server real   # kube-apiserver + etcd

Three processes: the API server (``python -m cloudcoil_cache.testing serve --tls`` or ``RealAPIServer``),
this one (the ``AdmissionWebhook`` on a ``WebhookServer`` with self-signed certificates, its
``Cache(resources=[Secret])``), and the load generator (``--threads`` urllib threads, a new TLS
connection per request, as the probe of issue 22 did). Each run creates ``--creates`` ConfigMaps
without webhooks, then installs both webhooks (``install(server=...)``, ``wait_effective``), creates as
many through them, and uninstalls them (the order alternates between runs). The validating handler
reads the referenced Secret with ``request.cached(Secret)``; the mutating one adds a label.

Prints per run: creates admitted (201) and labelled by the mutating webhook, the requests the webhook
answered 200 (``controller_runtime_webhook_requests_total``), handler time p50/p99 (measured in the
handlers, per kind), the webhook's mean answer time (``controller_runtime_webhook_latency_seconds``:
decode, handler, patch; not TLS or the socket), end-to-end p50/p99 of the creates with and without
webhooks and their ratios.
Timings are never asserted anywhere: on a shared machine they move with the load (its load average
is printed).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import multiprocessing
import os
import secrets
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cloudcoil_cache.admission import AdmissionDenied, AdmissionRequest, AdmissionWebhook, WebhookServer  # noqa: E402
from cloudcoil_cache.apimachinery import ObjectMeta  # noqa: E402
from cloudcoil_cache.caching import Cache  # noqa: E402
from cloudcoil_cache.client import Config  # noqa: E402
from cloudcoil_cache.errors import ResourceConflict  # noqa: E402
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Namespace, Secret  # noqa: E402

NAMESPACE = "admission-load"
NAME = "load.example.com"
SECRET = "load-credentials"
ANNOTATION = "example.com/secret"
LABEL = "example.com/checked"
WEBHOOK_PATHS = ("/validate/core/v1/configmaps/secret-exists", "/mutate/core/v1/configmaps/add-label")


# ------------------------------------------------------------------ the API server, in its own process
@contextlib.contextmanager
def fake_server(workdir: str) -> Iterator[tuple[str, str, str, bytes]]:
    """(kubeconfig, url, token, CA PEM) of ``python -m cloudcoil_cache.testing serve --tls`` in a child."""
    import yaml

    kubeconfig, token = os.path.join(workdir, "kubeconfig"), secrets.token_hex(16)
    command = [sys.executable, "-m", "cloudcoil_cache.testing", "serve", "--tls", "--token", token]
    child = subprocess.Popen([*command, "--kubeconfig", kubeconfig], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        if not url.startswith("https://"):
            raise RuntimeError(f"the fake API server did not start (said {url!r})")
        with open(kubeconfig) as f:
            cluster = yaml.safe_load(f)["clusters"][0]["cluster"]
        yield kubeconfig, url, token, base64.b64decode(cluster["certificate-authority-data"])
    finally:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


@contextlib.contextmanager
def real_server(workdir: str) -> Iterator[tuple[str, str, str, bytes]]:
    """(kubeconfig, url, token, CA PEM) of ``RealAPIServer`` (kube-apiserver and etcd, child processes)."""
    from cloudcoil_cache.testing import RealAPIServer

    with RealAPIServer() as server:
        kubeconfig = server.write_kubeconfig(os.path.join(workdir, "kubeconfig"))
        yield kubeconfig, server.url, server.tokens["admin"], server.ca_cert


# ------------------------------------------------------------------ the load generator (another process)
def _configmap(name: str) -> dict[str, Any]:
    metadata = {"name": name, "annotations": {ANNOTATION: SECRET}, "labels": {"app": "load"}}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {"k": "v" * 64}}


def _load(url: str, token: str, ca: bytes, prefix: str, creates: int, threads: int, out: Any) -> None:
    """``creates`` POSTs from ``threads`` threads, each on a new connection; puts (latencies, statuses, labelled)."""
    context = ssl.create_default_context(cadata=ca.decode())
    path = f"{url}/api/v1/namespaces/{NAMESPACE}/configmaps"
    latencies: list[float] = []
    statuses: list[int] = []
    labelled = [0]
    lock = threading.Lock()
    start = threading.Barrier(threads)
    names = iter(range(creates))

    def create(index: int) -> None:
        body = json.dumps(_configmap(f"{prefix}{index}")).encode()
        request = urllib.request.Request(path, data=body, method="POST")
        request.add_header("Content-Type", "application/json")
        request.add_header("Authorization", f"Bearer {token}")
        began = time.perf_counter()
        try:
            with urllib.request.urlopen(request, context=context, timeout=60) as answer:
                status, raw = answer.status, answer.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        took = time.perf_counter() - began
        mutated = status == 201 and (json.loads(raw)["metadata"].get("labels") or {}).get(LABEL) == "true"
        with lock:
            latencies.append(took)
            statuses.append(status)
            labelled[0] += mutated

    def worker() -> None:
        start.wait()
        while True:
            with lock:
                index = next(names, None)
            if index is None:
                return
            create(index)

    pool = [threading.Thread(target=worker, name=f"load-{i}") for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    out.put((latencies, statuses, labelled[0]))


def run_load(
    conn: tuple[str, str, bytes], prefix: str, creates: int, threads: int
) -> tuple[list[float], list[int], int]:
    mp = multiprocessing.get_context("spawn")
    out = mp.Queue()
    child = mp.Process(target=_load, args=(*conn, prefix, creates, threads, out), name="admission-load")
    child.start()
    result = out.get(timeout=600)
    child.join(60)
    return result


# ------------------------------------------------------------------ our webhooks
class HandlerTimes:
    """Seconds each handler call took, measured inside the handlers, by handler kind."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.seconds: dict[str, list[float]] = {"validate": [], "mutate": []}

    def add(self, kind: str, seconds: float) -> None:
        with self._lock:
            self.seconds[kind].append(seconds)

    def take(self) -> dict[str, list[float]]:
        with self._lock:
            taken, self.seconds = self.seconds, {"validate": [], "mutate": []}
        return taken


def make_webhook(config: Config, times: HandlerTimes) -> AdmissionWebhook:
    webhook = AdmissionWebhook(config=config)
    only_here = {"matchLabels": {"kubernetes.io/metadata.name": NAMESPACE}}

    @webhook.validating(ConfigMap, namespace_selector=only_here, operations=("CREATE",))
    def secret_exists(request: AdmissionRequest[ConfigMap]) -> None:
        began = time.perf_counter()
        try:
            cm = request.resource
            secret = (cm.metadata.annotations or {}).get(ANNOTATION) if cm is not None else None
            if secret is not None and request.cached(Secret).get(secret) is None:
                raise AdmissionDenied(f'Secret "{secret}" does not exist')
        finally:
            times.add("validate", time.perf_counter() - began)

    @webhook.mutating(ConfigMap, namespace_selector=only_here, operations=("CREATE",))
    def add_label(request: AdmissionRequest[ConfigMap]) -> ConfigMap | None:
        began = time.perf_counter()
        try:
            cm = request.resource
            if cm is None or (cm.metadata.labels or {}).get(LABEL) == "true":
                return None
            cm.metadata.labels = {**(cm.metadata.labels or {}), LABEL: "true"}
            return cm
        finally:
            times.add("mutate", time.perf_counter() - began)

    assert tuple(sorted(r.path for r in webhook.routes)) == tuple(sorted(WEBHOOK_PATHS)), webhook.routes
    return webhook


def mutated_dry_run(config: Config) -> bool:
    """Whether a dry-run create comes back labelled (the webhooks are in effect)."""
    probe = ConfigMap.from_dict(_configmap("probe"))
    created = config.client_for(ConfigMap, cached=False).create(probe, dry_run=True)
    return (created.metadata.labels or {}).get(LABEL) == "true"


def answered(webhook: AdmissionWebhook) -> float:
    return sum(webhook.metrics.value("controller_runtime_webhook_requests_total", p, "200") for p in WEBHOOK_PATHS)


def answer_seconds(webhook: AdmissionWebhook) -> tuple[float, float]:
    """(sum, count) of ``controller_runtime_webhook_latency_seconds`` over both paths: the time from a
    request read to its answer built (decode, handler, patch), from the Prometheus exposition."""
    text = webhook.metrics.render()[0].decode()
    totals = [0.0, 0.0]
    for line in text.splitlines():
        for index, suffix in enumerate(("_sum{", "_count{")):
            if line.startswith("controller_runtime_webhook_latency_seconds" + suffix):
                totals[index] += float(line.rsplit(" ", 1)[1])
    return totals[0], totals[1]


# ------------------------------------------------------------------ figures
def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def _ms(seconds: list[float]) -> str:
    return f"{pct(seconds, 0.5) * 1000:.2f} / {pct(seconds, 0.99) * 1000:.2f}"


def one_run(
    run: int,
    config: Config,
    webhook: AdmissionWebhook,
    server: WebhookServer,
    times: HandlerTimes,
    args: Any,
    conn: Any,
) -> dict[str, Any]:
    row: dict[str, Any] = {"run": run + 1}
    order = ("plain", "hooked") if run % 2 == 0 else ("hooked", "plain")
    for mode in order:
        if mode == "plain":
            latencies, statuses, _ = run_load(conn, f"plain-{run}-", args.creates, args.threads)
            row["plain"] = latencies
            row["plain admitted"] = statuses.count(201)
            continue
        webhook.install(config, name=NAME, server=server)
        AdmissionWebhook.wait_effective(lambda: mutated_dry_run(config), timeout=30)
        times.take()
        before, (seconds_before, count_before) = answered(webhook), answer_seconds(webhook)
        latencies, statuses, labelled = run_load(conn, f"hooked-{run}-", args.creates, args.threads)
        row["hooked"] = latencies
        row["admitted"], row["labelled"] = statuses.count(201), labelled
        row["answered"] = int(answered(webhook) - before)
        seconds_after, count_after = answer_seconds(webhook)
        row["answer mean"] = (seconds_after - seconds_before) / max(count_after - count_before, 1)
        row["handler"] = times.take()
        AdmissionWebhook.uninstall(config, NAME)
        AdmissionWebhook.wait_effective(lambda: not mutated_dry_run(config), timeout=30)
    return row


def print_table(rows: list[dict[str, Any]], args: Any) -> None:
    ms = 1000.0
    print(
        f"\n{args.creates} ConfigMap creates from {args.threads} threads in another process, "
        f"--server {args.server}; load average {os.getloadavg()[0]:.1f}"
    )
    head = (
        "| run | admitted | labelled | webhook 200s | validate p50/p99 ms | mutate p50/p99 ms | answer mean ms "
        "| no webhook p50/p99 ms | webhooks p50/p99 ms | p50 ratio | p99 ratio |"
    )
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for r in rows:
        plain, hooked, handler = r["plain"], r["hooked"], r["handler"]
        print(
            f"| {r['run']} | {r['admitted']}/{args.creates} (no webhook {r['plain admitted']}) | {r['labelled']} "
            f"| {r['answered']} | {_ms(handler['validate'])} | {_ms(handler['mutate'])} "
            f"| {r['answer mean'] * ms:.2f} "
            f"| {pct(plain, 0.5) * ms:.0f} / {pct(plain, 0.99) * ms:.0f} "
            f"| {pct(hooked, 0.5) * ms:.0f} / {pct(hooked, 0.99) * ms:.0f} "
            f"| {pct(hooked, 0.5) / pct(plain, 0.5):.2f}x | {pct(hooked, 0.99) / pct(plain, 0.99):.2f}x |"
        )
    ratios = [pct(r["hooked"], 0.99) / pct(r["plain"], 0.99) for r in rows]
    print(f"\nmedian p99 ratio {statistics.median(ratios):.2f}x (webhooks / no webhooks)")


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", choices=("fake", "real"), default="fake")
    parser.add_argument("--creates", type=int, default=200)
    parser.add_argument("--threads", type=int, default=64)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=64, help="creates before the runs (not counted)")
    args = parser.parse_args(argv)
    if args.server == "real" and not os.environ.get("KUBEBUILDER_ASSETS"):
        parser.error("--server real needs KUBEBUILDER_ASSETS (kube-apiserver, etcd)")
    times = HandlerTimes()
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        start = fake_server if args.server == "fake" else real_server
        with start(workdir) as (kubeconfig, url, token, ca):
            cache = Cache(resources=[Secret], namespaces=NAMESPACE, mode="strict")
            config = Config(kubeconfig=kubeconfig, namespace=NAMESPACE, cache=cache)
            with config:
                with contextlib.suppress(ResourceConflict):
                    config.client_for(Namespace, cached=False).create(Namespace(metadata=ObjectMeta(name=NAMESPACE)))
                secret = Secret(metadata=ObjectMeta(name=SECRET, namespace=NAMESPACE), string_data={"k": "v"})
                config.client_for(Secret, cached=False).create(secret)
                webhook = make_webhook(config, times)
                with WebhookServer(webhook, port=0) as server:
                    run_load((url, token, ca), "warmup-", args.warmup, min(args.threads, args.warmup))
                    for run in range(args.runs):
                        rows.append(one_run(run, config, webhook, server, times, args, (url, token, ca)))
                        print(f"run {run + 1}/{args.runs} done", flush=True)
            config.close()
    print_table(rows, args)
    return rows


if __name__ == "__main__":
    main()
