"""Transport over real loopback sockets: line framing, truncation, timeouts, close() from a thread."""

from __future__ import annotations

import threading
import time

import pytest
from _servers import Exchange, StreamConsumer, TinyServer, free_port

from cloudcoil_cache import errors
from cloudcoil_cache._http import Transport

LINES = [b'{"type":"ADDED","object":{"n":%d,"pad":"%s"}}' % (i, b"x" * (i * 37 % 300)) for i in range(40)]
PAYLOAD = b"".join(line + b"\n" for line in LINES)


def split_every(n: int) -> list[bytes]:
    return [PAYLOAD[i : i + n] for i in range(0, len(PAYLOAD), n)]


def split_at_lines() -> list[bytes]:
    return [line + b"\n" for line in LINES]


def split_mid_lines() -> list[bytes]:
    cuts = [0, 5, 6, 333, 334, 335, 1200, 1201, 4000, len(PAYLOAD)]
    return [PAYLOAD[a:b] for a, b in zip(cuts, cuts[1:]) if b > a]


def split_newline_first() -> list[bytes]:
    # every chunk starts with the newline that ends the previous line
    pieces = [LINES[0]] + [b"\n" + line for line in LINES[1:]] + [b"\n"]
    return pieces


SPLITS = [
    ("one-chunk-per-line", split_at_lines()),
    ("one-byte-chunks", split_every(1)),
    ("seven-byte-chunks", split_every(7)),
    ("cuts-inside-lines", split_mid_lines()),
    ("newline-starts-each-chunk", split_newline_first()),
    ("everything-in-one-chunk", [PAYLOAD]),
]


@pytest.fixture
def serve():
    servers: list[TinyServer] = []

    def start(handler) -> TinyServer:
        server = TinyServer(handler).start()
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.stop()


def transport_for(server: TinyServer, **kwargs) -> Transport:
    return Transport(server.url, **{"read_timeout": 5.0, **kwargs})


@pytest.mark.parametrize("chunks", [c for _, c in SPLITS], ids=[n for n, _ in SPLITS])
def test_a_chunked_stream_yields_exactly_the_complete_lines_across_any_chunk_split(serve, chunks):
    def handler(ex: Exchange) -> None:
        ex.start_chunked()
        for c in chunks:
            ex.chunk(c)
        ex.end_chunks()

    server = serve(handler)
    with transport_for(server) as t, t.stream("/api/v1/pods") as s:
        assert list(s) == LINES


def test_a_line_bigger_than_the_read_size_arrives_whole(serve):
    big = b'{"data":"' + b"y" * 700_000 + b'"}'

    def handler(ex: Exchange) -> None:
        ex.start_chunked()
        for i in range(0, len(big), 100_000):
            ex.chunk(big[i : i + 100_000])
        ex.chunk(b"\n{}\n")
        ex.end_chunks()

    with transport_for(serve(handler)) as t, t.stream("/w") as s:
        assert list(s) == [big, b"{}"]


@pytest.mark.parametrize("framing", ["chunked", "until-close"])
def test_each_line_is_delivered_as_soon_as_it_arrives_not_when_the_stream_ends(serve, framing):
    got_first = threading.Event()

    def handler(ex: Exchange) -> None:
        send = ex.chunk if framing == "chunked" else ex.write
        (ex.start_chunked if framing == "chunked" else ex.start_until_close)()
        send(b'{"n":1}\n')
        if not got_first.wait(5):
            ex.cut()  # the client buffered instead of yielding: fail it
            return
        send(b'{"n":2}\n')
        if framing == "chunked":
            ex.end_chunks()
        else:
            ex.cut()

    with transport_for(serve(handler)) as t, t.stream("/w") as s:
        it = iter(s)
        assert next(it) == b'{"n":1}'
        got_first.set()
        assert list(it) == [b'{"n":2}']


TRUNCATIONS = [
    ("chunked-cut-mid-line", lambda ex: (ex.start_chunked(), ex.chunk(b'{"a":1}\n{"b":2}\n{"c"'), ex.cut())),
    ("chunked-cut-at-line-end", lambda ex: (ex.start_chunked(), ex.chunk(b'{"a":1}\n{"b":2}\n'), ex.cut())),
    (
        "chunked-clean-end-after-partial-line",
        lambda ex: (ex.start_chunked(), ex.chunk(b'{"a":1}\n{"b":2}\n{"c":'), ex.end_chunks()),
    ),
    ("until-close-ends-mid-line", lambda ex: (ex.start_until_close(), ex.write(b'{"a":1}\n{"b":2}\n{"c":3'), ex.cut())),
    (
        "content-length-short",
        lambda ex: (ex.write(b'HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{"a":1}\n{"b":2}\n{"c'), ex.cut()),
    ),
]


@pytest.mark.parametrize("script", [s for _, s in TRUNCATIONS], ids=[n for n, _ in TRUNCATIONS])
def test_a_truncated_stream_raises_protocol_error_after_the_complete_lines_only(serve, script):
    with transport_for(serve(script)) as t, t.stream("/w") as s:
        got: list[bytes] = []
        with pytest.raises(errors.ProtocolError) as info:
            for line in s:
                got.append(line)
    assert got == [b'{"a":1}', b'{"b":2}']
    assert str(info.value).startswith("GET /w:")


def test_a_stream_closed_cleanly_at_a_line_end_just_stops(serve):
    def handler(ex: Exchange) -> None:
        ex.start_until_close()
        ex.write(b'{"a":1}\n{"b":2}\n')
        ex.cut()

    with transport_for(serve(handler)) as t, t.stream("/w") as s:
        assert list(s) == [b'{"a":1}', b'{"b":2}']
        assert s.closed


def test_a_silent_stream_raises_read_timeout(serve):
    def handler(ex: Exchange) -> None:
        ex.start_chunked()
        ex.chunk(b'{"a":1}\n')
        ex.hold()

    with transport_for(serve(handler)) as t, t.stream("/w", read_timeout=0.3) as s:
        it = iter(s)
        assert next(it) == b'{"a":1}'
        started = time.monotonic()
        with pytest.raises(errors.ReadTimeout, match="GET /w"):
            next(it)
        assert time.monotonic() - started < 3


def test_a_silent_server_makes_request_raise_read_timeout(serve):
    with transport_for(serve(lambda ex: ex.hold())) as t, pytest.raises(errors.ReadTimeout):
        t.request("GET", "/api", timeout=0.3)


@pytest.mark.parametrize("first_line", [True, False], ids=["after-a-line", "before-any-line"])
@pytest.mark.parametrize("ending", ["keep-alive", "connection-close", "until-close"])
def test_close_from_another_thread_unblocks_a_blocked_read_within_a_second(serve, first_line, ending):
    """Also when the response ends its connection (http.client then hands the socket over to the
    response and forgets it on the connection)."""

    def handler(ex: Exchange) -> None:
        if ending == "until-close":
            ex.start_until_close()
            if first_line:
                ex.write(b'{"a":1}\n{"partial')
        else:
            ex.start_chunked(close=ending == "connection-close")
            if first_line:
                ex.chunk(b'{"a":1}\n{"partial')
        ex.hold()

    with transport_for(serve(handler), read_timeout=30) as t:
        stream = t.stream("/w")
        reader = StreamConsumer(stream)
        assert reader.reading.wait(5)
        if first_line:
            assert reader.got_line.wait(5)
        started = time.monotonic()
        stream.close()
        ended = reader.join(1.0)
        elapsed = time.monotonic() - started
        assert ended, "close() did not unblock the read"
    assert elapsed < 1.0
    assert reader.outcome == ["stopped"]
    assert reader.received == ([b'{"a":1}'] if first_line else [])


def test_connection_refused_raises_connect_error():
    with Transport(f"http://127.0.0.1:{free_port()}", connect_timeout=2) as t:
        with pytest.raises(errors.ConnectError, match="GET /api: cannot connect"):
            t.request("GET", "/api")


def test_a_server_that_hangs_up_without_answering_raises_protocol_error(serve):
    with transport_for(serve(lambda ex: ex.cut())) as t, pytest.raises(errors.ProtocolError):
        t.request("GET", "/api")


def test_one_transport_serves_many_threads_at_once(serve):
    def handler(ex: Exchange) -> None:
        ex.reply(200, b'{"path":"%s"}' % ex.path.encode())

    results: dict[int, list[object]] = {}
    with transport_for(serve(handler)) as t:

        def work(n: int) -> None:
            results[n] = [t.request("GET", f"/t{n}/{i}").json()["path"] for i in range(5)]

        threads = [threading.Thread(target=work, args=(n,), name=f"test-client-{n}") for n in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(10)
    assert results == {n: [f"/t{n}/{i}" for i in range(5)] for n in range(8)}
