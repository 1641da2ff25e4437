"""Regression tests for the review's concurrency defects in the layers below the cache (issue 8, §4).

- the blocking executors released from one of their own workers (a done-callback) joined themselves;
- the async watch's cleanup blocked the event loop while the watch was still opening;
- ``Interrupter.interrupt()`` (a reflector's stop) could not abort a TCP connect in progress.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
import threading
from typing import Any, Iterator

import pytest
from _servers import Exchange, TinyServer

from cloudcoil_cache._http import TLSConfig, Transport
from cloudcoil_cache._listwatch import ListWatch
from cloudcoil_cache._threads import run_blocking, run_control
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import ConnectError, TransportError
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod


def _callback_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() + repr(r.exc_info)
        for r in caplog.records
        if r.name == "concurrent.futures" and r.levelno >= logging.ERROR
    ]


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


# -- the async watch's cleanup never blocks the event loop ----------------------------------------


def test_cancelling_an_async_watch_while_it_opens_returns_while_the_open_is_still_blocked():
    arrived = threading.Event()
    answered = threading.Event()

    def never_answer(ex: Exchange) -> None:
        arrived.set()
        ex.hold(timeout=8.0)  # until the server stops (or 8 s): the watch never opens
        answered.set()

    with TinyServer(never_answer) as tiny:
        config = Config(server=tiny.url, namespace="default")

        async def scenario() -> None:
            async with config:

                async def consume() -> None:
                    async for _ in await Pod.async_watch():
                        pass

                task = asyncio.ensure_future(consume())
                assert await asyncio.to_thread(arrived.wait, 5)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task

        asyncio.run(scenario())
        # The cancellation finished while the server still held the request: the loop never
        # waited for the blocked open (the old cleanup joined the reader thread on the loop).
        assert not answered.is_set()
        config.close()


# -- interrupt() aborts a TCP connect (and a TLS handshake) in progress ---------------------------

_connecting: dict[int, threading.Event] = {}


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect" and _connecting:
        address = args[1]
        if isinstance(address, tuple) and len(address) >= 2 and address[1] in _connecting:
            _connecting[address[1]].set()


sys.addaudithook(_audit)  # audit hooks cannot be removed: it does nothing unless a test arms it


@pytest.fixture
def hanging_listener() -> Iterator[int]:
    """A loopback port whose accept backlog is full: a new connect stays in SYN_SENT."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    filler = socket.create_connection(("127.0.0.1", port), timeout=5)  # fills the backlog
    probe = socket.socket()
    probe.settimeout(0.2)
    try:
        with pytest.raises(OSError):  # the precondition: a connect here does hang
            probe.connect(("127.0.0.1", port))
    finally:
        probe.close()
    _connecting[port] = threading.Event()
    try:
        yield port
    finally:
        _connecting.pop(port, None)
        filler.close()
        listener.close()


@pytest.fixture
def silent_listener() -> Iterator[int]:
    """A loopback port that accepts TCP connections (in the kernel) but never answers a byte."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    _connecting[port] = threading.Event()
    try:
        yield port
    finally:
        _connecting.pop(port, None)
        listener.close()


def _list_in_thread(lw: ListWatch[Any]) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            lw.list_page(resource_version=None, limit=None, continue_=None)
        except BaseException as e:  # noqa: BLE001 - handed to the test
            errors.append(e)

    thread = threading.Thread(target=run, name="test-list")
    thread.start()
    return thread, errors


def test_interrupt_aborts_a_tcp_connect_in_progress(hanging_listener):
    port = hanging_listener
    with Transport(f"http://127.0.0.1:{port}", connect_timeout=30, read_timeout=30) as transport:
        lw: ListWatch[Any] = ListWatch(transport, Pod)
        thread, errors = _list_in_thread(lw)
        assert _connecting[port].wait(5)  # the connect has been called
        lw.interrupt()  # what a reflector's stop() does
        thread.join(10)
        assert not thread.is_alive(), "interrupt() did not abort the connect"
    assert len(errors) == 1 and isinstance(errors[0], ConnectError)
    assert "interrupted" in str(errors[0])


def test_interrupt_aborts_a_tls_handshake_in_progress(silent_listener):
    port = silent_listener
    tls = TLSConfig(insecure_skip_verify=True)
    with Transport(f"https://127.0.0.1:{port}", tls=tls, connect_timeout=30, read_timeout=30) as transport:
        lw: ListWatch[Any] = ListWatch(transport, Pod)
        thread, errors = _list_in_thread(lw)
        assert _connecting[port].wait(5)
        lw.interrupt()
        thread.join(10)
        assert not thread.is_alive(), "interrupt() did not abort the TLS handshake"
    assert len(errors) == 1 and isinstance(errors[0], TransportError)


def test_a_connect_after_the_interrupt_fails_at_once(hanging_listener):
    port = hanging_listener
    with Transport(f"http://127.0.0.1:{port}", connect_timeout=30) as transport:
        lw: ListWatch[Any] = ListWatch(transport, Pod)
        lw.interrupt()
        with pytest.raises(TransportError, match="interrupted"):
            lw.list_page(resource_version=None, limit=None, continue_=None)


def test_connects_without_an_interrupter_still_work_and_time_out(hanging_listener):
    with Transport(f"http://127.0.0.1:{hanging_listener}", connect_timeout=0.3) as transport:
        with pytest.raises(ConnectError, match="timed out connecting"):
            transport.request("GET", "/version")


def test_an_interruptible_connect_still_times_out(hanging_listener):
    with Transport(f"http://127.0.0.1:{hanging_listener}", connect_timeout=0.3) as transport:
        lw: ListWatch[Any] = ListWatch(transport, Pod)
        with pytest.raises(ConnectError, match="timed out connecting"):
            lw.list_page(resource_version=None, limit=None, continue_=None)
