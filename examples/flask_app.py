"""A Flask app whose request handlers read pods from the cache (``python examples/flask_app.py [--serve]``).

Flask (like any WSGI server) answers requests on threads that do not inherit context
variables, so the app makes its Config the process-wide default with ``config.set_default()``
once at start-up: ``Pod.list(...)`` in a request handler is then served from memory, on any
thread. ``config.close()`` stops the cache (it also runs at interpreter exit).

Pages: ``/`` (HTML: the pods of every namespace, a table per namespace), ``/api/pods`` (JSON: pods by
namespace; ``?namespace=NS`` for one), ``/pods`` (names in ``?namespace=``, default "default") and
``/pods/<namespace>/<name>``.

``--serve [--port N]`` runs the app under waitress with 8 threads (``pip install 'cloudcoil_cache[examples]'``)
until Ctrl-C; without it, ``main()`` drives the app with Flask's test client, once on the main thread and
once from a worker thread, and prints the answers.
"""

from __future__ import annotations

import argparse
import threading
from collections import defaultdict
from typing import Any

from _fake_cluster import api_reads, cluster
from flask import Flask, jsonify, render_template_string, request

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import Pod

app = Flask(__name__)

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Pods by namespace</title>
<style>
 body { font-family: system-ui, sans-serif; margin: 2em; color: #1d2733; }
 h1 { font-size: 1.5em; } h2 { font-size: 1.1em; margin-top: 1.5em; }
 table { border-collapse: collapse; min-width: 40em; }
 th, td { text-align: left; padding: .3em .8em; border-bottom: 1px solid #dde3ea; }
 th { background: #eef2f6; } .Running { color: #1a7f37; } .Pending { color: #9a6700; }
 .Failed { color: #cf222e; } .Succeeded { color: #57606a; } p.note { color: #57606a; }
</style></head>
<body>
<h1>{{ total }} pods in {{ groups|length }} namespaces</h1>
<p class="note">Served from the informer cache (resource version {{ rv }}): no request to the API server.</p>
{% for namespace, pods in groups %}
<h2>{{ namespace }} <small>({{ pods|length }})</small></h2>
<table id="pods-{{ namespace }}">
<thead><tr><th>Name</th><th>Phase</th><th>Node</th><th>Ready</th></tr></thead>
<tbody>
{% for pod in pods %}<tr><td>{{ pod.name }}</td><td class="{{ pod.phase }}">{{ pod.phase }}</td>
<td>{{ pod.node }}</td><td>{{ pod.ready }}</td></tr>
{% endfor %}</tbody></table>
{% endfor %}
</body></html>
"""


def _summary(pod: Pod) -> dict[str, str]:
    statuses = (pod.status.container_statuses or []) if pod.status else []
    containers = pod.spec.containers if pod.spec else []
    return {
        "name": pod.name,
        "namespace": pod.namespace,
        "phase": pod.status.phase if pod.status else "",
        "node": (pod.spec.node_name or "") if pod.spec else "",
        "ready": f"{sum(1 for s in statuses if s.ready)}/{len(containers)}",
    }


def _by_namespace(namespace: str | None) -> tuple[dict[str, list[dict[str, str]]], str]:
    pods = Pod.list(namespace=namespace) if namespace else Pod.list(all_namespaces=True)
    groups: dict[str, list[dict[str, str]]] = defaultdict(list)
    for pod in pods:
        groups[pod.namespace].append(_summary(pod))
    for items in groups.values():
        items.sort(key=lambda p: p["name"])
    return dict(sorted(groups.items())), pods.metadata.resource_version or ""


@app.get("/")
def index() -> Any:
    groups, rv = _by_namespace(None)
    return render_template_string(PAGE, groups=list(groups.items()), rv=rv, total=sum(len(v) for v in groups.values()))


@app.get("/api/pods")
def api_pods() -> Any:
    groups, rv = _by_namespace(request.args.get("namespace"))
    return jsonify(resourceVersion=rv, namespaces=groups)


@app.get("/pods")
def list_pods() -> Any:
    namespace = request.args.get("namespace", "default")
    return jsonify(sorted(pod.name for pod in Pod.list(namespace=namespace)))


@app.get("/pods/<namespace>/<name>")
def get_pod(namespace: str, name: str) -> Any:
    pod = Pod.get(name, namespace=namespace)
    return jsonify(name=pod.name, namespace=pod.namespace, phase=pod.status.phase)


@app.errorhandler(ResourceNotFound)
def not_found(exc: ResourceNotFound) -> Any:
    return jsonify(error=str(exc)), 404


def main() -> dict[str, Any]:
    """Start the cache with ``set_default()``, make three requests, print and return the answers."""
    with cluster() as server:
        config = Config(cache=Cache(resources=[Pod]))
        config.set_default()  # starts the cache and waits for its sync
        try:
            if server is not None:
                server.clear_requests()
            client = app.test_client()
            answers: dict[str, Any] = {}
            answers["/pods"] = client.get("/pods").get_json()
            answers["/pods/other/web-0"] = client.get("/pods/other/web-0").get_json()
            missing = client.get("/pods/default/nope")
            answers["/pods/default/nope"] = (missing.status_code, missing.get_json())

            def from_a_worker_thread() -> None:  # a thread with no context: the default applies
                answers["worker /pods?namespace=other"] = client.get("/pods?namespace=other").get_json()

            worker = threading.Thread(target=from_a_worker_thread, name="example-worker")
            worker.start()
            worker.join()
            answers["api reads"] = api_reads(server)  # [] : every answer came from the cache
        finally:
            config.close()
    for path, answer in answers.items():
        print(path, "->", answer)
    return answers


def serve(port: int) -> None:
    """Serve the app under waitress (8 threads) until Ctrl-C."""
    from waitress.server import create_server

    with cluster():
        config = Config(cache=Cache(resources=[Pod]))
        config.set_default()
        try:
            server = create_server(app, host="127.0.0.1", port=port, threads=8)  # listening from here
            print(f"serving on http://127.0.0.1:{port}/ (Ctrl-C to stop)", flush=True)
            server.run()  # until Ctrl-C; then waitress stops its worker threads
        finally:
            config.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Flask app reading pods from the informer cache")
    parser.add_argument("--serve", action="store_true", help="serve under waitress until Ctrl-C")
    parser.add_argument("--port", type=int, default=8000, help="port for --serve (8000)")
    options = parser.parse_args()
    if options.serve:
        serve(options.port)
    else:
        main()
