"""What bounded staleness costs the API server: WATCH requests per informer per minute (issue 32).

Every watch asks for a ``timeoutSeconds`` that, with a grace, ends inside ``max_staleness``
(``caching._reflector.watch_window``): a quiet server proves itself alive by ending the watch on
time, and a silent watch is caught before the informer turns stale. This measures the price on
the real kube-apiserver: for each ``max_staleness`` given, one informer of ConfigMaps in a quiet
namespace runs for ``--seconds``; the WATCH requests are read from kube-apiserver's own
``apiserver_request_total`` before and after, and the informer's state is sampled every second
(on a quiet, healthy server it must never leave ``current``).

Run (needs the real tier's binaries: ``$KUBEBUILDER_ASSETS`` or ``tools/real-apiserver/build``)::

    .venv/bin/python benchmarks/watch_cost.py                      # max_staleness 60 and 30, 180 s each
    .venv/bin/python benchmarks/watch_cost.py --bounds 60 none --seconds 600
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cloudcoil_cache.caching import Cache, Tuning  # noqa: E402
from cloudcoil_cache.caching._reflector import watch_window  # noqa: E402
from cloudcoil_cache.client import Config  # noqa: E402
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap  # noqa: E402
from cloudcoil_cache.testing import RealAPIServer  # noqa: E402

_WATCHES = re.compile(r"^apiserver_request_total\{([^}]*)\} ([0-9.e+]+)$", re.M)


def configmap_watches(server: RealAPIServer) -> float:
    """kube-apiserver's count of WATCH requests on configmaps so far (every code, every scope)."""
    status, text = server.request("GET", "/metrics")
    assert status == 200, text
    total = 0.0
    for labels, value in _WATCHES.findall(text):
        if 'verb="WATCH"' in labels and 'resource="configmaps"' in labels:
            total += float(value)
    return total


def measure(
    server: RealAPIServer, kubeconfig: str, namespace: str, bound: float | None, seconds: float
) -> dict[str, object]:
    before = configmap_watches(server)
    config = Config(
        kubeconfig=kubeconfig,
        namespace=namespace,
        cache=Cache(resources=[ConfigMap], namespaces=[namespace], max_staleness=bound),
    )
    states: dict[str, int] = {}
    stop = threading.Event()
    with config:
        started = time.monotonic()
        while not stop.wait(1.0) and time.monotonic() - started < seconds:
            assert config.cache is not None
            for informer in config.cache.status().informers:
                states[informer.state] = states.get(informer.state, 0) + 1
        elapsed = time.monotonic() - started
    watches = configmap_watches(server) - before
    window = watch_window(Tuning(), bound)
    return {
        "max_staleness": bound,
        "window": f"{window.low:g}-{window.high:g} s + {window.grace:g} s",
        "seconds": round(elapsed),
        "watches": int(watches),
        "per_minute": round(watches * 60.0 / elapsed, 2),
        "states": states,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bounds", nargs="+", default=["60", "30"], help="max_staleness values ('none': unbounded)")
    parser.add_argument("--seconds", type=float, default=180.0, help="how long each informer runs")
    args = parser.parse_args(argv)
    bounds = [None if b.lower() == "none" else float(b) for b in args.bounds]
    with tempfile.TemporaryDirectory() as folder, RealAPIServer() as server:
        kubeconfig = server.write_kubeconfig(Path(folder) / "kubeconfig")
        namespace = "quiet"
        server.request("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
        for i in range(10):
            body = {"metadata": {"name": f"cm-{i}", "namespace": namespace}, "data": {"k": "v"}}
            server.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", body)
        print(f"kube-apiserver {server.url}; one ConfigMap informer over a quiet namespace per bound")
        print("| max_staleness | timeoutSeconds + grace | ran | WATCH requests ", end="")
        print("| per informer per minute | states sampled |")
        print("|---|---|---|---|---|---|")
        for bound in bounds:
            row = measure(server, kubeconfig, namespace, bound, args.seconds)
            print(
                f"| {row['max_staleness']} | {row['window']} | {row['seconds']} s | {row['watches']} "
                f"| {row['per_minute']} | {row['states']} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
