"""Run the Django example (``python examples/django_app/run.py [--serve] [--port N]``).

A fake cluster is started when ``KUBECONFIG`` is not set. Importing ``podsite.wsgi`` (as any server
does) sets Django up and starts the cache. Without ``--serve`` the script answers a few requests with
Django's test client, then serves the WSGI application under waitress (8 threads) to concurrent
clients, prints one JSON line of results (statuses, reads that reached the API server, latencies) and
stops. With ``--serve`` it serves under waitress until Ctrl-C or SIGTERM (how Kubernetes stops a
pod): then waitress stops, the cache is closed and the exit code is 0.

To serve it with gunicorn instead: ``gunicorn --chdir examples/django_app podsite.wsgi``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # the project, and examples/ (for _fake_cluster, _wsgi)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "podsite.settings")

from _fake_cluster import api_reads, cluster  # noqa: E402


def _load(url: str, clients: int, per_client: int) -> dict[str, Any]:
    import requests

    latencies: list[float] = []
    failures: list[str] = []

    def client(index: int) -> None:
        with requests.Session() as session:
            for i in range(per_client):
                path = "/api/pods/" if i % 2 else "/api/pods/default/web-0/"
                t0 = time.perf_counter()
                response = session.get(url + path, timeout=30)
                latencies.append(time.perf_counter() - t0)
                if response.status_code != 200:
                    failures.append(f"{path}: {response.status_code}")

    threads = [threading.Thread(target=client, args=(i,), name=f"example-client-{i}") for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    cuts = statistics.quantiles(latencies, n=100)
    return {
        "requests": len(latencies),
        "failures": failures[:5],
        "p50_ms": round(cuts[49] * 1000, 2),
        "p99_ms": round(cuts[98] * 1000, 2),
    }


def main(clients: int = 8, per_client: int = 100) -> dict[str, Any]:
    with cluster() as server:
        from _wsgi import WaitressThread
        from django.test import Client
        from pods.cluster import stop
        from podsite.wsgi import application  # django.setup(), then the cache starts and syncs

        try:
            if server is not None:
                server.clear_requests()
            test_client = Client()
            page = test_client.get("/")
            result: dict[str, Any] = {
                "page status": page.status_code,
                "page has default table": '<table id="pods-default">' in page.content.decode(),
                "api": test_client.get("/api/pods/").json()["namespaces"],
                "missing": test_client.get("/api/pods/default/nope/").status_code,
            }
            with WaitressThread(application, threads=8) as web:
                result["waitress"] = _load(web.url, clients, per_client)
            result["api reads"] = api_reads(server)
        finally:
            stop()
    print(json.dumps(result))
    return result


def _exit_on(signum: int, frame: object) -> None:
    raise SystemExit(0)  # out of waitress's loop, which stops its threads; serve() closes the cache


def serve(port: int) -> None:
    """Serve under waitress (8 threads) until Ctrl-C or SIGTERM, then close the cache."""
    from waitress.server import create_server

    signal.signal(signal.SIGTERM, _exit_on)  # Kubernetes stops a pod with SIGTERM: stop as on Ctrl-C
    with cluster():
        try:
            from podsite.wsgi import application  # the cache starts and syncs

            server = create_server(application, host="127.0.0.1", port=port, threads=8)
            print(f"serving on http://127.0.0.1:{port}/ (Ctrl-C to stop)", flush=True)
            server.run()  # until Ctrl-C or SIGTERM
        finally:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # stopping already: a second SIGTERM cannot cut it short
            from pods.cluster import stop

            stop()
            print("stopped: cache closed", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Django example reading pods from the informer cache")
    parser.add_argument("--serve", action="store_true", help="serve under waitress until Ctrl-C or SIGTERM")
    parser.add_argument("--port", type=int, default=8000, help="port for --serve (8000)")
    options = parser.parse_args()
    if options.serve:
        serve(options.port)
    else:
        main()
