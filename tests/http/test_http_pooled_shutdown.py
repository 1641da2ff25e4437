"""A stopping request never shuts down a connection that has gone back to the pool.

A reflector's stop shuts its request's socket down from another thread (``Interrupter.interrupt``,
``LineStream.close``). If that connection had meanwhile gone back to the pool and another request
had taken it, the shutdown cut that other request: over TLS it then read the server's raw TLS
records as its status line (``BadStatusLine('\\x17\\x03\\x03…')``), over plain HTTP it saw the
connection end. Each test puts a second request on the very connection (the server checks the
client port) and stops the first user while the second waits for its answer.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator

import pytest
import trustme
from _servers import Exchange, TinyServer

from cloudcoil_cache._http import TLSConfig, Transport
from cloudcoil_cache._http._interrupt import Interrupter, interruptible
from cloudcoil_cache.errors import ProtocolError, TransportError

WAIT = 10.0


class _Held:
    """A server whose ``/slow`` answers only when released; every request's client port is kept."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.release = threading.Event()
        self.ports: dict[str, list[int]] = {}

    def __call__(self, ex: Exchange) -> None:
        self.ports.setdefault(ex.path, []).append(ex.client_port)
        if ex.path == "/slow":
            self.arrived.set()
            self.release.wait(WAIT)
        body = b'{"path": "%s"}' % ex.path.encode()
        ex.reply(200, body)


@pytest.fixture(params=["http", "https"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[TinyServer, _Held, TLSConfig | None]]:
    held = _Held()
    if request.param == "https":
        import ssl

        ca = trustme.CA()
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ca.issue_cert("127.0.0.1").configure_cert(ctx)
        server, tls = TinyServer(held, ssl_context=ctx), TLSConfig(ca_data=ca.cert_pem.bytes())
    else:
        server, tls = TinyServer(held), None
    with server:
        try:
            yield server, held, tls
        finally:
            held.release.set()


def _in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, list[object]]:
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(fn())
        except Exception as exc:  # the test asserts on it
            outcome.append(exc)

    thread = threading.Thread(target=run, name="test-second-request")
    thread.start()
    return thread, outcome


def test_an_interrupt_leaves_alone_a_connection_another_request_took_from_the_pool(served):
    server, held, tls = served
    with Transport(server.url, tls=tls) as transport:
        interrupter = Interrupter()
        with interruptible(interrupter):  # e.g. a CLI deadline around several requests
            assert transport.request("GET", "/first").json() == {"path": "/first"}
        # the first request is complete: its connection is back in the pool, and a POST takes it
        thread, outcome = _in_thread(lambda: transport.request("POST", "/slow", body=b"{}").json())
        assert held.arrived.wait(WAIT)
        assert held.ports["/slow"] == held.ports["/first"]  # the very connection
        interrupter.interrupt()
        held.release.set()
        thread.join(WAIT)
        assert outcome == [{"path": "/slow"}]


def test_closing_a_finished_stream_leaves_alone_its_connection_once_pooled(served, monkeypatch):
    """``LineStream.close()`` from another thread as the body completes: urllib3 had put the
    connection back in the pool (and another request had taken it) before it forgot it."""
    server, held, tls = served
    with Transport(server.url, tls=tls) as transport:
        stream = transport.stream("/first")
        pool = stream._raw._pool
        put = pool._put_conn
        second: list[Any] = []

        def put_then_race(conn: Any) -> None:
            put(conn)  # pooled; the response still names it until this returns
            if second:
                return
            second.append(_in_thread(lambda: transport.request("POST", "/slow", body=b"{}").json()))
            assert held.arrived.wait(WAIT)
            closer = threading.Thread(target=stream.close, name="test-closer")  # the reflector's stop
            closer.start()
            closer.join(WAIT)
            # the second request's connection is still open (closing the response closed it too)
            second.append(conn.sock is not None)

        monkeypatch.setattr(pool, "_put_conn", put_then_race)
        with pytest.raises(ProtocolError, match="closed while the body was read"):
            stream.read_all()  # the stop came first, as far as the reader can tell
        monkeypatch.undo()
        assert held.ports["/slow"] == held.ports["/first"]
        held.release.set()
        (thread, outcome), still_open = second
        thread.join(WAIT)
        assert still_open
        assert outcome == [{"path": "/slow"}]


def test_an_interrupted_get_is_not_retried_as_a_stale_connection(served, caplog):
    # its connection broke because the interrupt shut it down, not because the server had closed a
    # kept-alive one: no second try (urllib3 warned "Retrying (StaleConnectionRetry...)" on every stop)
    server, held, tls = served
    with Transport(server.url, tls=tls) as transport:
        interrupter = Interrupter()

        def get() -> Any:
            with interruptible(interrupter):
                return transport.request("GET", "/slow")

        with caplog.at_level("DEBUG", logger="urllib3"):
            thread, outcome = _in_thread(get)
            assert held.arrived.wait(WAIT)
            interrupter.interrupt()
            thread.join(WAIT)
        held.release.set()
    assert len(outcome) == 1 and isinstance(outcome[0], TransportError), outcome
    assert not [r for r in caplog.records if "Retrying" in r.getMessage()]
    assert len(held.ports["/slow"]) == 1
