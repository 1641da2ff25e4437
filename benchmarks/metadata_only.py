"""Metadata-only informers (issue 35): RSS per object and sync time of ``Cache(metadata_only=[Secret])``
against ``Cache(resources=[Secret])``, over 10,000 Secrets of 10 KB.

Run (one command; ~1-2 min on 2 busy cores)::

    .venv/bin/python benchmarks/metadata_only.py [--secrets 10000] [--size 10240] [--rounds 3]

The API server is the fake API server (``cloudcoil_cache.testing``) in a child process (its memory
and CPU are not the client's), seeded with ``--secrets`` Secrets of ``--size`` bytes of JSON each
(one data key, labels, an annotation, an owner, one managedFields entry), spread over 4 namespaces.
It answers a metadata-only LIST as kube-apiserver does (a PartialObjectMetadataList).

Each client run is a fresh process (so the RSS of one mode is never the leftover of the other), the
two modes interleaved for ``--rounds`` rounds: it builds its Config, collects, reads VmRSS, enters
the Config's scope (the informer LISTs, streamed, and starts its WATCH) until synced, collects,
reads VmRSS again. Figures: sync seconds (entering the scope until synced; min and median over the
rounds: wall clock, which includes the server's time), the client's CPU seconds meanwhile (min; all
its threads, from ``getrusage``: what moves least with the machine's load), RSS per object (the
growth over the objects, median), and the ratios metadata / full.
Targets (issue 35): RSS per object ≤ 1/10 of the full informer's, sync ≤ 1/3 of its time.
Written to ``benchmarks/results/metadata_only.json`` and printed as a table.
"""

from __future__ import annotations

import argparse
import base64
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

NAMESPACES = ("default", "team-a", "team-b", "team-c")


def make_secret(i: int, size: int) -> dict[str, Any]:
    """A Secret of about ``size`` bytes of JSON: metadata of a real one, the rest its data."""
    namespace = NAMESPACES[i % len(NAMESPACES)]
    name = f"app-{i % 97:02d}-tls-{i:06d}"
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": f"{i:08x}-0000-4000-8000-{i:012x}",
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "labels": {"app.kubernetes.io/name": f"app-{i % 97:02d}", "app.kubernetes.io/managed-by": "operator"},
        "annotations": {"example.com/rotated-at": "2026-01-01T00:00:00Z"},
        "ownerReferences": [
            {
                "apiVersion": "example.com/v1",
                "kind": "Certificate",
                "name": f"app-{i % 97:02d}",
                "uid": f"{i % 97:08x}-1111-4000-8000-000000000000",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "managedFields": [
            {
                "manager": "operator",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2026-01-01T00:00:00Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {".": {}, "f:tls.crt": {}}, "f:type": {}},
            }
        ],
    }
    secret: dict[str, Any] = {"apiVersion": "v1", "kind": "Secret", "metadata": metadata, "type": "Opaque"}
    head = len(json.dumps(secret, separators=(",", ":")))
    raw = max(0, (size - head - 20) * 3 // 4)
    secret["data"] = {"tls.crt": base64.b64encode(os.urandom(raw)).decode()}
    return secret


def serve(secrets: int, size: int, kubeconfig: str) -> None:
    from cloudcoil_cache.testing import FakeAPIServer

    with FakeAPIServer() as server:
        store = server.context.store
        rtype = server.context.registry.resolve("secrets")
        gc.disable()
        for i in range(secrets):
            store.create(rtype, make_secret(i, size), NAMESPACES[i % len(NAMESPACES)], admit=False)
        gc.enable()
        gc.freeze()
        server.write_kubeconfig(kubeconfig)
        print(server.url, flush=True)
        sys.stdin.readline()  # the parent closes stdin (or says anything): stop


def rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def client(mode: str, kubeconfig: str) -> None:
    """One fresh client process: sync one informer of Secrets (whole or metadata only); print JSON."""
    from cloudcoil_cache.caching import Cache
    from cloudcoil_cache.client import Config
    from cloudcoil_cache.models.kubernetes.core.v1 import Secret

    options: dict[str, Any] = {"resources": [Secret]} if mode == "full" else {"metadata_only": [Secret]}
    config = Config(kubeconfig=kubeconfig, cache=Cache(resync_period=None, sync_timeout=600, **options))
    gc.collect()
    before = rss_bytes()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    with config:
        synced = time.perf_counter() - started
        done = resource.getrusage(resource.RUSAGE_SELF)
        cpu = done.ru_utime + done.ru_stime - usage.ru_utime - usage.ru_stime
        [informer] = config.cache.informers()
        count = len(informer.store)
        gc.collect()
        after = rss_bytes()
    run = {"mode": mode, "sync_s": synced, "cpu_s": cpu, "rss_bytes": after - before, "objects": count}
    print(json.dumps(run), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--secrets", type=int, default=10_000)
    parser.add_argument("--size", type=int, default=10_240, help="bytes of JSON per Secret")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--client", choices=("full", "metadata"), help=argparse.SUPPRESS)
    parser.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.secrets, args.size, args.kubeconfig)
        return
    if args.client:
        client(args.client, args.kubeconfig)
        return
    folder = tempfile.mkdtemp(prefix="metadata-only-")
    kubeconfig = os.path.join(folder, "kubeconfig")
    me = [sys.executable, __file__]
    server = subprocess.Popen(
        [*me, "--serve", "--secrets", str(args.secrets), "--size", str(args.size), "--kubeconfig", kubeconfig],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    runs: dict[str, list[dict[str, Any]]] = {"full": [], "metadata": []}
    try:
        server.stdout.readline()  # the URL: seeded and listening
        for _ in range(args.rounds):
            for mode in ("full", "metadata"):
                out = subprocess.run(
                    [*me, "--client", mode, "--kubeconfig", kubeconfig], capture_output=True, text=True
                )
                if out.returncode != 0:
                    raise SystemExit(f"the {mode} client failed:\n{out.stderr}")
                run = json.loads(out.stdout.strip().splitlines()[-1])
                if run["objects"] != args.secrets:
                    raise SystemExit(f"the {mode} client cached {run['objects']} of {args.secrets} Secrets")
                runs[mode].append(run)
    finally:
        server.stdin.close()
        server.wait(30)
    figures: dict[str, Any] = {
        "secrets": args.secrets,
        "size": args.size,
        "rounds": args.rounds,
        "load": os.getloadavg(),
    }
    for mode, done in runs.items():
        figures[mode] = {
            "sync_s_min": min(r["sync_s"] for r in done),
            "sync_s_median": statistics.median(r["sync_s"] for r in done),
            "cpu_s_min": min(r["cpu_s"] for r in done),
            "rss_per_object": statistics.median(r["rss_bytes"] for r in done) / args.secrets,
        }
    full, meta = figures["full"], figures["metadata"]
    figures["rss_ratio"] = meta["rss_per_object"] / full["rss_per_object"]
    figures["sync_ratio_min"] = meta["sync_s_min"] / full["sync_s_min"]
    figures["sync_ratio_median"] = meta["sync_s_median"] / full["sync_s_median"]
    figures["cpu_ratio"] = meta["cpu_s_min"] / full["cpu_s_min"]
    out_path = REPO / "benchmarks" / "results" / "metadata_only.json"
    out_path.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"{args.secrets:,} Secrets of {args.size:,} B, {args.rounds} rounds, load {figures['load'][0]:.2f}")
    print(f"{'informer':<10}{'sync s (min)':>14}{'sync s (median)':>17}{'client CPU s':>14}{'RSS B/object':>15}")
    for mode in ("full", "metadata"):
        f = figures[mode]
        print(
            f"{mode:<10}{f['sync_s_min']:>14.3f}{f['sync_s_median']:>17.3f}{f['cpu_s_min']:>14.3f}"
            f"{f['rss_per_object']:>15,.0f}"
        )
    print(
        f"metadata / full: RSS per object {figures['rss_ratio']:.3f} (target <= 0.1), "
        f"sync {figures['sync_ratio_min']:.3f} min, {figures['sync_ratio_median']:.3f} median (target <= 0.333), "
        f"client CPU {figures['cpu_ratio']:.3f}"
    )


if __name__ == "__main__":
    main()
