"""LineStream's own chunked decoding (``_http._chunked``) against a raw-socket server that writes exact bytes.

The server below sends the header and chunk framing the test scripts, split across socket writes
wherever the test likes; a write that must reach the client in a later read than the previous one
waits for an Event that the test sets once it has the line that the previous write completed.
"""

from __future__ import annotations

import gzip
import socket
import ssl
import threading
from typing import Callable

import pytest
import trustme
from _servers import StreamConsumer

from cloudcoil_cache import errors
from cloudcoil_cache._http import TLSConfig, Transport
from cloudcoil_cache._http._chunked import ChunkedBody

WAIT = 10.0  # seconds: a bound on waits that should end at once (only reached when a test fails)
CHUNKED_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"


def chunk(data: bytes, ext: bytes = b"") -> bytes:
    return b"%x%s\r\n%s\r\n" % (len(data), ext, data)


LAST = b"0\r\n\r\n"


class Conn:
    """One request on the raw server, as a script sees it."""

    def __init__(self, sock: socket.socket, index: int, head: bytes) -> None:
        self.sock = sock
        self.index = index  # which connection (0 = the first accepted)
        self.head = head

    def send(self, *parts: bytes) -> None:
        for part in parts:
            self.sock.sendall(part)

    def after(self, event: threading.Event) -> None:
        if not event.wait(WAIT):
            raise RuntimeError("the client did not get there")

    def end(self) -> None:
        """Drop the connection now (whatever the body's state)."""
        self.sock.shutdown(socket.SHUT_RDWR)

    def hold(self) -> None:
        """Send nothing more until the client closes the connection (or the server stops)."""
        try:
            while self.sock.recv(65536):
                pass
        except (OSError, ssl.SSLError):
            pass


Script = Callable[[Conn], None]


class RawServer:
    """A loopback HTTP/1.1 server whose every response is written by ``script`` byte for byte.

    Connections are served by named threads; ``stop()`` shuts them down and joins them all.
    ``requests`` records ``(connection index, request head)``; ``client_closed[i]`` is set when
    the client closed connection ``i`` while the server waited for its next request.
    """

    def __init__(self, script: Script, *, ssl_context: ssl.SSLContext | None = None) -> None:
        self.script = script
        self.ssl_context = ssl_context
        self.requests: list[tuple[int, bytes]] = []
        self.client_closed: list[threading.Event] = []
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._acceptor = threading.Thread(target=self._accept, name="raw-http-server")
        self._acceptor.start()

    @property
    def url(self) -> str:
        return f"{'https' if self.ssl_context else 'http'}://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            sock, _ = self._listener.accept()
            if self._stopping.is_set():
                sock.close()
                return
            with self._lock:
                index = len(self.client_closed)
                self.client_closed.append(threading.Event())
                self._socks.append(sock)
                thread = threading.Thread(target=self._serve, args=(sock, index), name="raw-http-connection")
                self._threads.append(thread)
            thread.start()

    def _serve(self, sock: socket.socket, index: int) -> None:
        try:
            if self.ssl_context is not None:
                sock = self.ssl_context.wrap_socket(sock, server_side=True)
                with self._lock:
                    self._socks.append(sock)
            buffered = b""
            while True:
                try:
                    while b"\r\n\r\n" not in buffered:
                        more = sock.recv(65536)
                        if not more:
                            break
                        buffered += more
                except (OSError, ssl.SSLError):
                    pass
                if b"\r\n\r\n" not in buffered:  # no next request: the client closed the connection
                    self.client_closed[index].set()
                    return
                head, buffered = buffered.split(b"\r\n\r\n", 1)
                with self._lock:
                    self.requests.append((index, head))
                self.script(Conn(sock, index, head))
        except (OSError, ssl.SSLError, RuntimeError):
            pass  # the client went away, or the server is stopping
        finally:
            sock.close()

    def stop(self) -> None:
        self._stopping.set()
        socket.create_connection(("127.0.0.1", self.port)).close()  # wakes accept()
        self._acceptor.join(WAIT)
        self._listener.close()
        with self._lock:
            socks, threads = list(self._socks), list(self._threads)
        for sock in socks:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in threads:
            thread.join(WAIT)

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(params=["tcp", "tls"])
def serve(request, ca):
    """``serve(script) -> (server, transport)`` over plain TCP and over TLS; both closed at teardown."""
    made: list[tuple[RawServer, Transport]] = []

    def start(script: Script, **transport_options) -> tuple[RawServer, Transport]:
        ctx = tls = None
        if request.param == "tls":
            ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ca.issue_cert("127.0.0.1").configure_cert(ctx)
            tls = TLSConfig(ca_data=ca.cert_pem.bytes())
        server = RawServer(script, ssl_context=ctx)
        transport = Transport(server.url, tls=tls, **{"read_timeout": WAIT, **transport_options})
        made.append((server, transport))
        return server, transport

    yield start
    for server, transport in made:
        transport.close()
        server.stop()


def answer(*parts: bytes) -> Script:
    def script(conn: Conn) -> None:
        conn.send(*parts)

    return script


# -- the chunk framing, however the payload and the framing are cut ---------------------------------

LINES = [b'{"n":%d,"pad":"%s"}' % (i, b"p" * (i * 53 % 300)) for i in range(12)]
PAYLOAD = b"".join(line + b"\n" for line in LINES)


def cut(data: bytes, sizes: list[int]) -> list[bytes]:
    pieces, i, k = [], 0, 0
    while i < len(data):
        n = sizes[k % len(sizes)]
        pieces.append(data[i : i + n])
        i += n
        k += 1
    return pieces


FRAMINGS = {
    "one-chunk-per-line": [chunk(line + b"\n") for line in LINES],
    "all-lines-in-one-chunk": [chunk(PAYLOAD)],
    "one-byte-chunks": [chunk(bytes([b])) for b in PAYLOAD],
    "odd-sized-chunks": [chunk(p) for p in cut(PAYLOAD, [1, 2, 3, 500, 7, 1024, 13])],
    "chunks-start-with-the-newline": [chunk(LINES[0])] + [chunk(b"\n" + line) for line in LINES[1:]] + [chunk(b"\n")],
    "extensions-and-blanks": [chunk(line + b"\n", ext=b' ;name=value; q="x;y"\t') for line in LINES],
    "uppercase-hex-and-zero-padding": [b"%08X\r\n%s\r\n" % (len(line) + 1, line + b"\n") for line in LINES],
}


@pytest.mark.parametrize("send_size", [3, 4096, 1 << 20], ids=lambda n: f"writes-of-{n}")
@pytest.mark.parametrize("framing", list(FRAMINGS), ids=list(FRAMINGS))
def test_the_lines_arrive_whole_however_chunks_and_writes_cut_them(serve, framing, send_size):
    body = CHUNKED_HEAD + b"".join(FRAMINGS[framing]) + LAST
    server, t = serve(answer(*cut(body, [send_size])))
    with t.stream("/w") as s:
        assert list(s) == LINES
        assert s.closed


AWKWARD = {  # where the write is split: the client has read (and yielded) line 1 before the rest comes
    "inside-the-hex-size": (b"2", b"0\r\n" + b"x" * 31 + b"\n\r\n"),
    "between-size-cr-and-lf": (b"20\r", b"\n" + b"x" * 31 + b"\n\r\n"),
    "right-after-the-size-line": (b"20\r\n", b"x" * 31 + b"\n\r\n"),
    "inside-the-payload": (b"20\r\nxxxxx", b"x" * 26 + b"\n\r\n"),
    "before-the-payload-crlf": (b"20\r\n" + b"x" * 31 + b"\n", b"\r\n"),
    "between-payload-cr-and-lf": (b"20\r\n" + b"x" * 31 + b"\n\r", b"\n"),
    "inside-an-extension": (b"20;ext=", b"val\r\n" + b"x" * 31 + b"\n\r\n"),
}


@pytest.mark.parametrize("split", list(AWKWARD), ids=list(AWKWARD))
def test_framing_split_across_socket_reads_is_joined(serve, split):
    first, rest = AWKWARD[split]
    got_first = threading.Event()

    def script(conn: Conn) -> None:
        conn.send(CHUNKED_HEAD + chunk(b'{"n":1}\n') + first)
        conn.after(got_first)
        conn.send(rest, chunk(b'{"n":3}\n'), LAST)

    server, t = serve(script)
    with t.stream("/w") as s:
        it = iter(s)
        assert next(it) == b'{"n":1}'
        got_first.set()
        assert list(it) == [b"x" * 31, b'{"n":3}']


@pytest.mark.parametrize("split_at", [0, 1, 3, 9, 13, 14, 15, 19, 20], ids=lambda n: f"at-{n}")
def test_trailers_end_the_body_cleanly_even_split_across_reads(serve, split_at):
    trailers = b"0\r\nX-A: 1\r\nX-B: 2\r\n\r\n"
    got_first = threading.Event()

    def script(conn: Conn) -> None:
        conn.send(CHUNKED_HEAD + chunk(b'{"n":1}\n') + trailers[:split_at])
        conn.after(got_first)
        conn.send(trailers[split_at:])

    server, t = serve(script)
    with t.stream("/w") as s:
        it = iter(s)
        assert next(it) == b'{"n":1}'
        got_first.set()
        assert list(it) == []
        assert s.closed


@pytest.mark.parametrize(
    "ending",
    [b"0\r\n", b"0\r\nX-A: 1\r\n", b"0\r\nX-A: 1\r\n\r"],
    ids=["before-the-final-crlf", "inside-the-trailers", "between-the-final-cr-and-lf"],
)
def test_a_body_cut_after_its_last_chunk_ends_cleanly_as_with_http_client(serve, ending):
    server, t = serve(lambda conn: (conn.send(CHUNKED_HEAD, chunk(b'{"a":1}\n'), ending), conn.end()))
    with t.stream("/w") as s:
        assert list(s) == [b'{"a":1}']


def test_empty_lines_are_skipped(serve):
    server, t = serve(answer(CHUNKED_HEAD, chunk(b"\n\n{}\n"), chunk(b"\n"), chunk(b'{"a":1}\n\n\n'), LAST))
    with t.stream("/w") as s:
        assert list(s) == [b"{}", b'{"a":1}']


def test_a_line_bigger_than_a_read_arrives_whole(serve):
    big = b'{"data":"' + b"y" * 700_000 + b'"}'
    server, t = serve(answer(CHUNKED_HEAD, chunk(big[:300_000]), chunk(big[300_000:] + b"\n{}\n"), LAST))
    with t.stream("/w") as s:
        assert list(s) == [big, b"{}"]


# -- bodies that end too early or are not chunked correctly -----------------------------------------

ENDINGS = {  # what is sent after the line {"a":1}: (bytes, then the connection closes)
    "last-chunk-after-a-partial-line": chunk(b'{"b"') + LAST,
    "cut-inside-a-line": chunk(b'{"b":2,'),
    "cut-at-a-line-end-without-the-last-chunk": chunk(b"\n"),
    "cut-inside-the-size-line": b"1",
    "cut-inside-the-payload": b"10\r\n\n\n",
    "cut-before-the-payload-crlf": b"2\r\n\n\n",
    "cut-between-payload-cr-and-lf": b"2\r\n\n\n\r",
}


@pytest.mark.parametrize("ending", list(ENDINGS), ids=list(ENDINGS))
def test_a_body_cut_short_raises_protocol_error_after_the_complete_lines(serve, ending):
    server, t = serve(lambda conn: (conn.send(CHUNKED_HEAD, chunk(b'{"a":1}\n'), ENDINGS[ending]), conn.end()))
    got: list[bytes] = []
    with t.stream("/w") as s, pytest.raises(errors.ProtocolError) as info:
        for line in s:
            got.append(line)
    assert got == [b'{"a":1}']
    assert str(info.value).startswith("GET /w:")
    assert s.closed


MALFORMED = {
    "not-hex": b"zz\r\n",
    "negative": b"-1\r\n",
    "hex-prefix": b"0x10\r\n",
    "plus-sign": b"+10\r\n",
    "underscore": b"1_0\r\n",
    "empty-size": b"\r\n",
    "only-an-extension": b";a=b\r\n",
    "too-many-digits": b"1" + b"0" * 15 + b"\r\n",
    "payload-not-followed-by-crlf": b"2\r\n\n\nXY",
    "bare-lf-after-payload": b"1\r\n\n\n1\r\n",
    "size-line-without-crlf": b"a" * 70_000,
    "trailers-without-end": b"0\r\n" + b"X-A: 1\r\n" * 9000,
}


@pytest.mark.parametrize("bad", list(MALFORMED), ids=list(MALFORMED))
def test_malformed_framing_raises_protocol_error_naming_the_request_not_the_bytes(serve, bad):
    server, t = serve(lambda conn: (conn.send(CHUNKED_HEAD + chunk(b'{"a":1}\n') + MALFORMED[bad]), conn.hold()))
    got: list[bytes] = []
    with t.stream("/w") as s, pytest.raises(errors.ProtocolError) as info:
        for line in s:
            got.append(line)
    message = str(info.value)
    assert message.startswith("GET /w: malformed chunked response body")
    for shown in (b"zz", b"0x10", b"1_0", b"XY", b"X-A"):
        assert shown.decode() not in message
    assert got == [b'{"a":1}']
    assert s.closed


@pytest.mark.parametrize("shape", ["one-line-in-many-chunks", "one-chunk-too-long", "newline-too-late"])
def test_a_line_over_max_line_bytes_raises_line_too_long_across_chunks(serve, shape):
    long_line = b"z" * 150
    framing = {
        "one-line-in-many-chunks": [chunk(long_line[i : i + 10]) for i in range(0, 150, 10)] + [chunk(b"\n")],
        "one-chunk-too-long": [chunk(long_line + b"\n")],
        "newline-too-late": [chunk(b"z" * 90), chunk(b"z" * 20 + b"\n")],
    }[shape]
    server, t = serve(
        lambda conn: (conn.send(CHUNKED_HEAD, chunk(b'{"a":1}\n'), *framing), conn.hold()), max_line_bytes=100
    )
    got: list[bytes] = []
    with t.stream("/w") as s, pytest.raises(errors.LineTooLong) as info:
        for line in s:
            got.append(line)
    assert info.value.limit == 100
    assert got == [b'{"a":1}']
    assert s.closed


# -- close() from another thread, read timeouts --------------------------------------------------------


@pytest.mark.parametrize("blocked", ["before-any-byte", "after-a-line", "inside-a-chunk", "inside-a-size"])
def test_close_from_another_thread_ends_a_blocked_iteration_normally(serve, blocked):
    sent = {
        "before-any-byte": b"",
        "after-a-line": chunk(b'{"a":1}\n'),
        "inside-a-chunk": chunk(b'{"a":1}\n') + b'40\r\n{"partial',
        "inside-a-size": chunk(b'{"a":1}\n') + b"4",
    }[blocked]
    server, t = serve(lambda conn: (conn.send(CHUNKED_HEAD + sent), conn.hold()), read_timeout=60)
    stream = t.stream("/w")
    reader = StreamConsumer(stream)
    if blocked != "before-any-byte":
        assert reader.got_line.wait(WAIT)
    stream.close()
    assert reader.join(WAIT), "close() did not unblock the read"
    assert reader.outcome == ["stopped"]
    assert reader.received == ([] if blocked == "before-any-byte" else [b'{"a":1}'])
    assert server.client_closed[0].wait(WAIT)  # and the connection is gone


@pytest.mark.parametrize("silent", ["after-a-line", "inside-a-chunk"])
def test_a_silent_server_raises_read_timeout(serve, silent):
    more = b"" if silent == "after-a-line" else b'40\r\n{"partial'
    server, t = serve(lambda conn: (conn.send(CHUNKED_HEAD + chunk(b'{"a":1}\n') + more), conn.hold()))
    with t.stream("/w", read_timeout=0.3) as s:
        it = iter(s)
        assert next(it) == b'{"a":1}'
        with pytest.raises(errors.ReadTimeout, match="^GET /w: "):
            next(it)
        assert s.closed


# -- the connection afterwards ------------------------------------------------------------------------


def test_after_a_dechunked_body_the_connection_is_closed_and_the_next_request_works(serve):
    def script(conn: Conn) -> None:
        if b"GET /w " in conn.head:
            conn.send(CHUNKED_HEAD, chunk(b'{"a":1}\n'), LAST + b"garbage after the body")
        else:
            conn.send(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"x":1}')

    server, t = serve(script)
    with t.stream("/w") as s:
        assert list(s) == [b'{"a":1}']
    assert server.client_closed[0].wait(WAIT)  # never back to the pool: urllib3 would misread the rest
    assert t.request("GET", "/api").json() == {"x": 1}
    assert t.request("GET", "/api").json() == {"x": 1}
    assert [index for index, _ in server.requests] == [0, 1, 1]


def test_read_all_decodes_a_chunked_list_body(serve):
    body = b'{"kind":"PodList","items":[' + b",".join(b'{"n":%d}' % i for i in range(5000)) + b"]}"
    framing = [chunk(p) for p in cut(body, [1, 4096, 3, 70_000])]
    server, t = serve(answer(CHUNKED_HEAD, *framing, b"0\r\nX-T: 1\r\n\r\n"))
    assert t.stream("/list").read_all() == body
    assert server.client_closed[0].wait(WAIT)


def test_read_all_of_a_cut_chunked_body_raises_protocol_error(serve):
    server, t = serve(lambda conn: (conn.send(CHUNKED_HEAD, chunk(b'{"items":['), b"20\r\n{"), conn.end()))
    with pytest.raises(errors.ProtocolError, match="^GET /list: the response body was cut off"):
        t.stream("/list").read_all()


def test_read_all_of_a_content_length_body_reuses_the_connection(serve):
    body = b'{"items":[' + b",".join(b'{"n":%d}' % i for i in range(100_000)) + b"]}"
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    server, t = serve(answer(head, *cut(body, [1, 100_000, 7, 300_000])))
    assert t.stream("/list").read_all() == body
    assert t.stream("/list").read_all() == body
    assert [index for index, _ in server.requests] == [0, 0]


def test_read_all_of_a_short_content_length_body_raises_protocol_error(serve):
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n"
    server, t = serve(lambda conn: (conn.send(head + b'{"items":['), conn.end()))
    with pytest.raises(errors.ProtocolError, match="^GET /list: "):
        t.stream("/list").read_all()


def test_close_from_another_thread_interrupts_a_content_length_read_all(serve):
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n"
    server, t = serve(lambda conn: (conn.send(head + b'{"items":['), conn.hold()), read_timeout=60)
    stream = t.stream("/list")
    outcome: list[object] = []

    def read() -> None:
        try:
            outcome.append(stream.read_all())
        except Exception as e:  # recorded for the assertion below
            outcome.append(e)

    reader = threading.Thread(target=read, name="test-list-reader")
    reader.start()
    assert server.requests  # the response head is in: read_all() is reading or about to
    stream.close()
    reader.join(WAIT)
    assert not reader.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], errors.ProtocolError)


def test_a_gzip_body_is_still_read_through_urllib3(serve):
    compressed = gzip.compress(PAYLOAD)
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    server, t = serve(answer(head, *[chunk(p) for p in cut(compressed, [5, 100, 1])], LAST))
    with t.stream("/w") as s:
        assert list(s) == LINES
    assert t.stream("/w").read_all() == PAYLOAD
    assert [index for index, _ in server.requests] == [0, 0]  # urllib3 framed it: back to the pool


# -- ChunkedBody itself, over a socket pair, at every split of the input ------------------------------

BODY = (
    chunk(b"ab\ncd", ext=b";x=1")
    + chunk(b"\n")
    + b"0A\r\n0123456789\r\n"
    + chunk(b"e" * 3)
    + b"0;end\r\nTrailer: t\r\n\r\n"
)
DECODED = b"ab\ncd\n0123456789eee"


def decode(data: bytes, first_read: int) -> tuple[bytes, bool]:
    """``data`` read from a socket pair in one read of ``first_read`` bytes, then reads of 7."""
    a, b = socket.socketpair()
    with a, b:
        a.sendall(data)
        a.shutdown(socket.SHUT_WR)
        sizes = iter([first_read])
        body = ChunkedBody(lambda: b.recv(next(sizes, 7)), "GET /t")
        got = b"".join(d[start:end] for d, start, end in body.pieces())
        return got, body.complete


@pytest.mark.parametrize("first_read", range(1, len(BODY) + 1))
def test_chunked_body_decodes_the_same_at_every_read_split(first_read):
    assert decode(BODY + b"ignored after the body", first_read) == (DECODED, True)


TRAILERS_START = BODY.index(b"0;end\r\n") + len(b"0;end\r\n")


@pytest.mark.parametrize("length", range(len(BODY)))
def test_chunked_body_cut_anywhere_is_incomplete_never_malformed(length):
    got, complete = decode(BODY[:length], 3)
    assert complete == (length >= TRAILERS_START)  # a cut trailer section loses nothing
    assert got == DECODED if complete else DECODED.startswith(got)
