"""The deploy tier's ASGI app: Starlette with the Config's lifespan; handlers read with ``await Pod.async_*``.

``lifespan=config.lifespan`` makes the config the process default while the app runs, so every
request task (which does not inherit the lifespan's context) reads through its cache.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod

config = Config(cache=Cache(resources=[Pod], namespaces=["default"]))


def _hold(request: Request) -> None:
    """``?hold=S``: keep this worker busy a moment (blocking its loop), so that concurrent requests
    reach the others."""
    hold = request.query_params.get("hold")
    if hold:
        time.sleep(min(float(hold), 0.2))


async def pods(request: Request) -> JSONResponse:
    _hold(request)
    await asyncio.sleep(0)
    listed = await Pod.async_list(namespace="default")
    body = {p.name: (p.metadata.labels or {}).get("v", "") for p in listed}
    return JSONResponse(body, headers={"X-Pid": str(os.getpid())})


async def status(request: Request) -> JSONResponse:
    _hold(request)
    assert config.cache is not None
    (informer,) = config.cache.status().informers
    body: dict[str, Any] = {
        "pid": os.getpid(),
        "state": informer.state,
        "same_config": request.state.cloudcoil_config is config,
    }
    return JSONResponse(body, headers={"X-Pid": str(os.getpid())})


app = Starlette(routes=[Route("/pods", pods), Route("/status", status)], lifespan=config.lifespan)
