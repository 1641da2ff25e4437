"""The ASGI ``__call__`` (cloudcoil 0.8's form): lifespan starts/stops the webhook, requests go through ``answer``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from _admission_support import configmap, review

from cloudcoil_cache.admission import AdmissionDenied, AdmissionRequest, AdmissionWebhook
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap


class _Lifespan:
    """Drives the ASGI lifespan protocol over two queues."""

    def __init__(self, hook: AdmissionWebhook) -> None:
        self.to_app: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.from_app: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.task = asyncio.ensure_future(hook({"type": "lifespan"}, self.to_app.get, self.from_app.put))

    async def event(self, name: str) -> str:
        await self.to_app.put({"type": f"lifespan.{name}"})
        return str((await self.from_app.get())["type"])


async def _request(hook: AdmissionWebhook, path: str, body: bytes, chunks: int = 2) -> tuple[int, bytes]:
    size = len(body) // chunks + 1
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    messages = [{"type": "http.request", "body": p, "more_body": i < len(parts) - 1} for i, p in enumerate(parts)]
    done = asyncio.Event()
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": path,
        "query_string": b"timeout=10s",
        "headers": [(b"content-type", b"application/json")],
    }
    await hook(scope, receive, send)
    done.set()
    return int(sent[0]["status"]), bytes(sent[1]["body"])


def test_asgi_serves_reviews_between_lifespan_startup_and_shutdown() -> None:
    hook = AdmissionWebhook(max_body_bytes=2048)

    @hook.validating(ConfigMap, path="/v")
    async def deny(request: AdmissionRequest[ConfigMap]) -> None:
        raise AdmissionDenied("no")

    async def main() -> None:
        lifespan = _Lifespan(hook)
        assert await lifespan.event("startup") == "lifespan.startup.complete"
        try:
            status, body = await _request(hook, "/v", json.dumps(review(configmap())).encode())
            assert status == 200 and json.loads(body)["response"]["allowed"] is False
            status, _ = await _request(hook, "/v", json.dumps(review(configmap(data={"x": "y" * 3000}))).encode())
            assert status == 413
            status, _ = await _request(hook, "/nope", b"{}")
            assert status == 404
        finally:
            assert await lifespan.event("shutdown") == "lifespan.shutdown.complete"
            await lifespan.task

    asyncio.run(main())
    assert hook.readiness() == "admission webhook not started"
