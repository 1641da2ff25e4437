"""The webhook as an ASGI application (cloudcoil 0.8's form, for uvicorn set-ups): a thin shell over ``answer``."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Awaitable, Callable, MutableMapping
from urllib.parse import parse_qsl

from cloudcoil_cache._threads import run_blocking
from cloudcoil_cache.admission._exchange import Answer, Endpoint, Exchange
from cloudcoil_cache.admission._review import http_error

__all__ = ["serve_asgi"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

#: The ASGI lifespan's start waits this long for the admission cache to sync.
SYNC_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0


async def _lifespan(endpoint: Endpoint, receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            try:
                await run_blocking(endpoint.start, SYNC_TIMEOUT)
            except Exception as exc:
                await send({"type": "lifespan.startup.failed", "message": type(exc).__name__})
                return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await run_blocking(endpoint.stop, STOP_TIMEOUT)
            await send({"type": "lifespan.shutdown.complete"})
            return


class _Gone(Exception):
    """The client disconnected before its body was read."""


async def _body(receive: Receive, limit: int) -> bytes | None:
    """The request body, or None when it is over ``limit`` bytes (``_Gone`` when the client left)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Gone()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _watch_disconnect(receive: Receive, disconnected: threading.Event) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    disconnected.set()


async def _send(send: Send, answer: Answer) -> None:
    headers = [(b"content-type", answer.content_type.encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in answer.headers]
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    await send({"type": "http.response.body", "body": answer.body})


async def serve_asgi(endpoint: Endpoint, scope: Scope, receive: Receive, send: Send) -> None:
    """One ASGI call: the lifespan starts/stops the endpoint; an HTTP request is answered off the loop."""
    if scope["type"] == "lifespan":
        await _lifespan(endpoint, receive, send)
        return
    if scope["type"] != "http":
        return
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
    try:
        body = await _body(receive, endpoint.max_body_bytes)
    except _Gone:
        return
    if body is None:
        await _send(send, Answer(413, http_error(f"Request Entity Too Large: over {endpoint.max_body_bytes} bytes")))
        return
    exchange = Exchange(
        method=scope.get("method", "GET"),
        path=scope.get("path", "/"),
        query=dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"))),
        headers=headers,
        body=body,
    )
    disconnected = threading.Event()
    watcher = asyncio.ensure_future(_watch_disconnect(receive, disconnected))
    try:
        answer = await run_blocking(endpoint.answer, exchange, disconnected)
    finally:
        watcher.cancel()
    await _send(send, answer)
