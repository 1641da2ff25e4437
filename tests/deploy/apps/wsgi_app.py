"""The deploy tier's WSGI app: a web app as the docs set it up (``config.set_default()`` at import).

``/pods`` answers the pods in "default" (``$DEPLOY_NAMESPACE``) from the cache (name: its label
``v``), ``/status`` this process's pid, its informer's state and its threads; every answer carries
``X-Pid``. The cluster is ``$KUBECONFIG``.
Under ``gunicorn --preload`` (and uWSGI's default) the import, and so the cache's start, happens in
the master, and the workers are forked from it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any, Callable, Iterable
from urllib.parse import parse_qs

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod

NAMESPACE = os.environ.get("DEPLOY_NAMESPACE", "default")
config = Config(cache=Cache(resources=[Pod], namespaces=[NAMESPACE]))
config.set_default()


def status() -> dict[str, Any]:
    assert config.cache is not None
    st = config.cache.status()
    (informer,) = st.informers
    return {
        "pid": os.getpid(),
        "state": informer.state,
        "last_error": informer.last_error,
        "resource_version": informer.resource_version,
        "relists": informer.relist_count,
        "threads": sorted(t.name for t in threading.enumerate()),
    }


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    path = environ.get("PATH_INFO", "/")
    hold = parse_qs(environ.get("QUERY_STRING", "")).get("hold")
    if hold:  # keep this worker busy a moment, so that concurrent requests reach the others
        time.sleep(min(float(hold[0]), 0.2))
    if path == "/pods":
        body: Any = {p.name: (p.metadata.labels or {}).get("v", "") for p in Pod.list(namespace=NAMESPACE)}
    elif path == "/status":
        body = status()
    else:
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found\n"]
    data = json.dumps(body).encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("X-Pid", str(os.getpid()))])
    return [data]


application = app  # uWSGI's default callable name
