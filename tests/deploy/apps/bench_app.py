"""The deploy benchmark's WSGI app (``benchmarks/deploy.py``): ``wsgi_app`` plus ``/count``, a cached
``Pod.list`` whose answer is small (the number of pods), so that the latency is the cache's."""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Iterable

from wsgi_app import app as _app

from cloudcoil_cache.models.kubernetes.core.v1 import Pod


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    if environ.get("PATH_INFO") == "/count":
        data = json.dumps(len(Pod.list(namespace="default").items)).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("X-Pid", str(os.getpid()))])
        return [data]
    return _app(environ, start_response)
