"""Regression tests for the review's concurrency defects in the layers below the cache (issue 8, §4).

- the blocking executors released from one of their own workers (a done-callback) joined themselves;
- the async watch's cleanup blocked the event loop while the watch was still opening;
- ``Interrupter.interrupt()`` (a reflector's stop) could not abort a TCP connect in progress.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from typing import Iterator

import pytest

from cloudcoil_cache._http import Transport
from cloudcoil_cache._http._interrupt import Interrupter, interruptible
from cloudcoil_cache._threads import run_blocking, run_control
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import ConnectError, TransportError
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod


def _callback_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() + repr(r.exc_info) for r in caplog.records
            if r.name == "concurrent.futures" and r.levelno >= logging.ERROR]


@pytest.mark.parametrize("run", [run_blocking, run_control], ids=["io", "control"])
def test_a_call_outside_any_async_scope_never_joins_its_own_worker(run, caplog):
    caplog.set_level(logging.DEBUG)

    async def calls() -> None:
        for _ in range(3):
            started = threading.Event()
            # The call is still running when its future gets the done-callback, so the callback
            # (the pool's last use ending) runs on the worker thread itself.
            asyncio.get_running_loop().call_soon(started.set)
            assert await run(started.wait, 10)

    asyncio.run(calls())
    assert _callback_errors(caplog) == []


def test_async_get_after_set_default_logs_no_executor_error(caplog):
    caplog.set_level(logging.DEBUG)
    with FakeAPIServer() as server:
        server.create("pods", make_pod("p0", "default"), "default")
        config = Config(server=server.url, namespace="default")
        config.set_default()
        try:
            async def gets() -> list[str]:
                return [(await Pod.async_get("p0")).metadata.name for _ in range(3)]

            assert asyncio.run(gets()) == ["p0"] * 3
        finally:
            config.close()
    assert _callback_errors(caplog) == []
