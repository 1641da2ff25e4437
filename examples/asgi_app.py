"""An ASGI app (Starlette) whose async handlers read pods from the cache, deployable as it is.

Served (from the repository's root; ``pip install -e '.[examples]'``)::

    uvicorn examples.asgi_app:app                    # add --workers 2: each worker has its own cache
    python examples/asgi_app.py --serve [--port N]   # uvicorn, until Ctrl-C or SIGTERM
    python examples/asgi_app.py                      # a demo: serves, asks a few pages, stops

An ASGI server runs each request in a task of its own, which does not inherit the context variables
of the app's lifespan: ``async with config:`` in a lifespan would reach no handler. So the app is
``Starlette(..., lifespan=config.lifespan)`` (FastAPI takes the same argument; inside a lifespan of
your own, ``async with config.lifespan():``): at start-up it makes the config the process default,
starts its cache and waits for the sync (off the event loop), and at shutdown (SIGTERM under
uvicorn) it closes the config, its threads joined. Every ``await Pod.async_list(...)`` /
``await Pod.async_get(...)`` in a handler is then served from memory.

The cluster is ``KUBECONFIG``'s; without it the examples' embedded fake cluster is started at import
(one per process that imports the module: under ``uvicorn --workers N`` each worker has its own).

Pages: ``/api/pods`` (JSON: pods by namespace, with their labels; ``?namespace=NS`` for one) and
``/pods/{namespace}/{name}``. Every answer names the process that served it in an ``X-Pid`` header.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import urllib.error
import urllib.request
from collections import defaultdict
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import Pod

if __package__:  # imported as examples.asgi_app (a server started from the repository's root)
    from ._fake_cluster import ProcessCluster, api_reads
else:  # run as a script, or imported from examples/
    from _fake_cluster import ProcessCluster, api_reads

_fake = ProcessCluster()  # a fake cluster for this process, unless KUBECONFIG names one
config = Config(cache=Cache(resources=[Pod]))


def _answer(body: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers={"X-Pid": str(os.getpid())})


def _summary(pod: Pod) -> dict[str, Any]:
    return {
        "name": pod.name,
        "namespace": pod.namespace,
        "phase": pod.status.phase if pod.status else "",
        "labels": dict(pod.metadata.labels or {}),
    }


async def api_pods(request: Request) -> JSONResponse:
    namespace = request.query_params.get("namespace")
    pods = await (Pod.async_list(namespace=namespace) if namespace else Pod.async_list(all_namespaces=True))
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for pod in sorted(pods, key=lambda p: (p.namespace, p.name)):
        groups[pod.namespace].append(_summary(pod))
    return _answer({"resourceVersion": pods.metadata.resource_version or "", "namespaces": groups})


async def get_pod(request: Request) -> JSONResponse:
    try:
        pod = await Pod.async_get(request.path_params["name"], namespace=request.path_params["namespace"])
    except ResourceNotFound as exc:
        return _answer({"error": str(exc)}, status=404)
    return _answer(_summary(pod))


app = Starlette(
    routes=[Route("/api/pods", api_pods), Route("/pods/{namespace}/{name}", get_pod)],
    lifespan=config.lifespan,  # the process default while the app runs: every request task reads the cache
)


def _get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


async def _demo() -> dict[str, Any]:
    import uvicorn

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()  # connections wait in its backlog until uvicorn, past the lifespan's start, accepts
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    serving = asyncio.ensure_future(server.serve(sockets=[listener]))
    answers: dict[str, Any] = {}
    try:
        for path in ("/api/pods?namespace=default", "/pods/other/web-0", "/pods/default/nope"):
            status, body = await asyncio.to_thread(_get, url + path)
            answers[path] = body if status == 200 else (status, body)
    finally:
        server.should_exit = True  # as on SIGTERM: the lifespan's shutdown closes the config
        await serving
        listener.close()
    return answers


def main() -> dict[str, Any]:
    """Serve the app with uvicorn on a free port, ask three pages, stop; print and return the answers."""
    try:
        if _fake.server is not None:
            _fake.server.clear_requests()
        answers = asyncio.run(_demo())
        answers["api reads"] = api_reads(_fake.server)  # the cache's LIST at start-up; no request read
    finally:
        _fake.stop()
    for path, answer in answers.items():
        print(path, "->", answer)
    return answers


def serve(port: int) -> None:
    """Serve the app with uvicorn until Ctrl-C or SIGTERM (the lifespan then closes the config)."""
    import uvicorn

    # uvicorn stops on SIGTERM (or Ctrl-C), then raises the signal again once stopped, for the signal's
    # previous handler (by default: die of it, exit code 143; or KeyboardInterrupt): these ignore it,
    # and the script exits with 0.
    for stop_signal in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop_signal, lambda signum, frame: None)
    print(f"serving on http://127.0.0.1:{port}/ (Ctrl-C to stop)", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
    print("stopped: cache closed", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="ASGI app reading pods from the informer cache")
    parser.add_argument("--serve", action="store_true", help="serve with uvicorn until Ctrl-C or SIGTERM")
    parser.add_argument("--port", type=int, default=8000, help="port for --serve (8000)")
    options = parser.parse_args()
    if options.serve:
        serve(options.port)
    else:
        main()
