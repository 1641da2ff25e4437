"""A Flask app whose request handlers read pods from the cache, deployable as it is.

Served (from the repository's root; ``pip install -e '.[examples]'``)::

    gunicorn --workers 2 examples.flask_app:app              # add --preload: one LIST for every worker
    uwsgi --master --processes 2 --enable-threads --py-call-uwsgi-fork-hooks --die-on-term \\
        --http-socket 127.0.0.1:8000 --module examples.flask_app:app
    python examples/flask_app.py --serve [--port N]          # waitress, 8 threads, until Ctrl-C or SIGTERM
    python examples/flask_app.py                             # a demo with Flask's test client

Flask (like any WSGI server) answers requests on threads that do not inherit context variables, so
the app makes its Config the process-wide default with ``config.set_default()``, which starts the
cache and waits for its sync: ``Pod.list(...)`` in a request handler is then served from memory, on
any thread. It does so **at import**, as the docs advise for any web app: a server imports the
module to find ``app``, so every process that serves it has a started cache before its first
request, whatever the server (without it, every request would read the API server). Under
``gunicorn --preload`` and uWSGI (which loads the app in its master) that import, and so the one
LIST, happens in the master; the workers are forked from it and resume its watch. Run as a script,
the import (as ``__main__``) starts nothing: ``main()`` or ``serve()`` starts the cache. ``stop()``
closes it (its threads are joined), as interpreter exit does.

The cluster is ``KUBECONFIG``'s; without it the module starts the examples' embedded fake cluster
(a few pods) at import, in each process that imports it: each worker has its own fake cluster,
except under ``--preload`` or uWSGI's master, where the workers share the master's.

Pages: ``/`` (HTML: the pods of every namespace, a table per namespace), ``/api/pods`` (JSON: pods by
namespace, with their labels; ``?namespace=NS`` for one), ``/pods`` (names in ``?namespace=``,
default "default") and ``/pods/<namespace>/<name>``. Every answer names the process that served it
in an ``X-Pid`` header (behind a preforking server each worker reads its own cache).

``--serve`` stops on Ctrl-C or SIGTERM (how Kubernetes stops a pod): waitress stops, the cache is
closed, and the exit code is 0. Without it, ``main()`` drives the app with Flask's test client,
once on the main thread and once from a worker thread, and prints the answers.
"""

from __future__ import annotations

import argparse
import os
import signal
import threading
from collections import defaultdict
from typing import Any

from flask import Flask, Response, jsonify, render_template_string, request

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import Pod

if __package__:  # imported as examples.flask_app (a server started from the repository's root)
    from ._fake_cluster import ProcessCluster, api_reads
else:  # run as a script, or imported from examples/
    from _fake_cluster import ProcessCluster, api_reads

_fake = ProcessCluster()  # without KUBECONFIG, the examples' fake cluster (for this process)
config = Config(cache=Cache(resources=[Pod]))
if __name__ != "__main__":  # imported: by a server above all; run as a script, main() or serve() starts it
    config.set_default()  # starts the cache and waits for its sync: before the first request
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


def _summary(pod: Pod) -> dict[str, Any]:
    statuses = (pod.status.container_statuses or []) if pod.status else []
    containers = pod.spec.containers if pod.spec else []
    return {
        "name": pod.name,
        "namespace": pod.namespace,
        "phase": pod.status.phase if pod.status else "",
        "node": (pod.spec.node_name or "") if pod.spec else "",
        "ready": f"{sum(1 for s in statuses if s.ready)}/{len(containers)}",
        "labels": dict(pod.metadata.labels or {}),
    }


def _by_namespace(namespace: str | None) -> tuple[dict[str, list[dict[str, Any]]], str]:
    pods = Pod.list(namespace=namespace) if namespace else Pod.list(all_namespaces=True)
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
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


@app.after_request
def served_by(response: Response) -> Response:
    response.headers["X-Pid"] = str(os.getpid())  # which worker process (and so which cache) answered
    return response


def stop() -> None:
    """Close the cache (its threads are joined) and the fake cluster; also done at interpreter exit."""
    config.close()
    _fake.stop()  # nothing in a forked worker: the fake cluster is its parent's


def main() -> dict[str, Any]:
    """Start the cache (unless the import did), make a few requests, print and return the answers."""
    config.set_default()
    try:
        server = _fake.server  # None: KUBECONFIG's cluster
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
        stop()
    for path, answer in answers.items():
        print(path, "->", answer)
    return answers


def _exit_on(signum: int, frame: object) -> None:
    raise SystemExit(0)  # out of waitress's loop, which stops its threads; the caller closes the cache


def serve(port: int) -> None:
    """Serve the app under waitress (8 threads) until Ctrl-C or SIGTERM, then close the cache."""
    from waitress.server import create_server

    signal.signal(signal.SIGTERM, _exit_on)  # Kubernetes stops a pod with SIGTERM: stop as on Ctrl-C
    try:
        config.set_default()
        server = create_server(app, host="127.0.0.1", port=port, threads=8)  # listening from here
        print(f"serving on http://127.0.0.1:{port}/ (Ctrl-C to stop)", flush=True)
        server.run()  # until Ctrl-C or SIGTERM; then waitress stops its worker threads
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # stopping already: a second SIGTERM cannot cut it short
        stop()
        print("stopped: cache closed", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Flask app reading pods from the informer cache")
    parser.add_argument("--serve", action="store_true", help="serve under waitress until Ctrl-C or SIGTERM")
    parser.add_argument("--port", type=int, default=8000, help="port for --serve (8000)")
    options = parser.parse_args()
    if options.serve:
        serve(options.port)
    else:
        main()
