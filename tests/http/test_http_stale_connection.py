"""A GET whose kept-alive connection the server closed just as it was reused is sent once more
(as Go's net/http does for client-go); nothing else is retried that way."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from _servers import Exchange, TinyServer

from cloudcoil_cache._http import Transport
from cloudcoil_cache.errors import ProtocolError, ReadTimeout


class _DropsTheSecondRequest:
    """Answers the first request on each connection (kept alive) and drops the second unanswered."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.per_connection: dict[int, int] = {}
        self.seen: list[tuple[str, str]] = []

    def __call__(self, ex: Exchange) -> None:
        with self.lock:
            conn = id(ex._req.connection)
            n = self.per_connection[conn] = self.per_connection.get(conn, 0) + 1
            self.seen.append((ex.method, ex.path))
        if n == 1:
            ex.reply(200, b"{}")
        else:
            ex.cut()  # the request was read; the connection closes with no response


@pytest.fixture
def dropping() -> Any:
    handler = _DropsTheSecondRequest()
    with TinyServer(handler) as server:
        with Transport(server.url, connect_timeout=5, read_timeout=5, max_retries=0) as transport:
            yield handler, transport


def test_a_get_on_a_connection_closed_under_it_is_sent_again_on_a_new_one(dropping):
    handler, transport = dropping
    transport.request("GET", "/first")
    assert transport.request("GET", "/second").json() == {}
    assert handler.seen == [("GET", "/first"), ("GET", "/second"), ("GET", "/second")]
    assert len(handler.per_connection) == 2


def test_a_post_is_not_sent_again(dropping):
    handler, transport = dropping
    transport.request("GET", "/first")
    with pytest.raises(ProtocolError, match="connection broke before a response"):
        transport.request("POST", "/create", body=b"{}")
    assert handler.seen == [("GET", "/first"), ("POST", "/create")]


def test_a_read_timeout_is_not_retried_and_stays_a_read_timeout():
    seen: list[str] = []

    def silent(ex: Exchange) -> None:
        seen.append(ex.path)
        ex.hold()

    with TinyServer(silent) as server:
        with Transport(server.url, connect_timeout=5, read_timeout=0.3, max_retries=0) as transport:
            with pytest.raises(ReadTimeout):
                transport.request("GET", "/slow")
    assert seen == ["/slow"]


def test_a_watch_opened_on_a_connection_closed_under_it_opens_on_a_new_one():
    handler = _DropsTheSecondRequest()
    chunks = threading.Event()

    def serve(ex: Exchange) -> None:
        if ex.query.get("watch") != "1":
            handler(ex)
            return
        with handler.lock:
            conn = id(ex._req.connection)
            n = handler.per_connection[conn] = handler.per_connection.get(conn, 0) + 1
            handler.seen.append((ex.method, "watch"))
        if n > 1:
            ex.cut()
            return
        ex.start_chunked()
        ex.chunk(b'{"type":"BOOKMARK"}\n')
        ex.end_chunks()
        chunks.set()

    with TinyServer(serve) as server:
        with Transport(server.url, connect_timeout=5, read_timeout=5, max_retries=0) as transport:
            transport.request("GET", "/list")
            with transport.stream("/list", params={"watch": "1"}) as lines:
                assert list(lines) == [b'{"type":"BOOKMARK"}']
    assert chunks.is_set() and handler.seen == [("GET", "/list"), ("GET", "watch"), ("GET", "watch")]
