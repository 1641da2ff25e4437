"""A Flask app whose request handlers read pods from the cache (``python examples/flask_app.py``).

Flask (like any WSGI server) answers requests on threads that do not inherit context
variables, so the app makes its Config the process-wide default with ``config.set_default()``:
``Pod.list(...)`` in a request handler is then served from memory. ``config.close()`` stops the
cache (it also runs at interpreter exit). ``main()`` drives the app with Flask's test client,
once on the main thread and once from a worker thread.
"""

from __future__ import annotations

import threading
from typing import Any

from _fake_cluster import api_reads, cluster
from flask import Flask, jsonify, request

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import Pod

app = Flask(__name__)


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


if __name__ == "__main__":
    main()
