"""Tiny real HTTP(S) servers for transport tests: each request is answered by a test's function.

The handler function gets an ``Exchange`` and may answer normally, script raw bytes (chunks split
anywhere, a body cut mid-line), or hold the connection silent until the server stops. Every thread
is named and joined by ``stop()``; open connections are shut down so none outlives the server.
"""

from __future__ import annotations

import http.server
import socket
import socketserver
import ssl
import threading
from typing import Any, Callable
from urllib.parse import parse_qsl, urlsplit

Handler = Callable[["Exchange"], None]


class Exchange:
    """One request as the handler function sees it, with helpers to answer it."""

    def __init__(self, req: _RequestHandler, server: TinyServer) -> None:
        self._req = req
        self.server = server
        self.method: str = req.command
        self.path: str = urlsplit(req.path).path
        self.query: dict[str, str] = dict(parse_qsl(urlsplit(req.path).query))
        self.headers = req.headers
        conn = req.connection
        self.client_port: int = req.client_address[1]  # tells one client connection from another
        self.peer_cert = conn.getpeercert() if isinstance(conn, ssl.SSLSocket) else None

    def reply(
        self,
        status: int,
        body: bytes = b"",
        *,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self._req.send_response(status)
        self._req.send_header("Content-Type", content_type)
        self._req.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self._req.send_header(k, v)
        self._req.end_headers()
        self._req.wfile.write(body)
        self._req.wfile.flush()

    def start_chunked(self, status: int = 200, *, close: bool = False) -> None:
        """Headers for a chunked body; ``close``: with ``Connection: close`` (the connection ends with it)."""
        self._req.send_response(status)
        self._req.send_header("Content-Type", "application/json")
        self._req.send_header("Transfer-Encoding", "chunked")
        if close:
            self._req.send_header("Connection", "close")
        self._req.end_headers()
        self._req.wfile.flush()

    def chunk(self, data: bytes) -> None:
        self.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_chunks(self) -> None:
        self.write(b"0\r\n\r\n")

    def start_until_close(self, status: int = 200) -> None:
        """Headers for a body delimited by closing the connection (no length, not chunked)."""
        self._req.send_response(status)
        self._req.send_header("Content-Type", "application/json")
        self._req.send_header("Connection", "close")
        self._req.end_headers()
        self._req.wfile.flush()

    def write(self, data: bytes) -> None:
        self._req.wfile.write(data)
        self._req.wfile.flush()

    def cut(self) -> None:
        """Drop the connection now (no terminating chunk, no more bytes)."""
        self._req.close_connection = True
        try:
            self._req.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def hold(self, timeout: float = 10.0) -> None:
        """Keep the connection silent until the server stops (or ``timeout``)."""
        self.server.released.wait(timeout)


class _RequestHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def _dispatch(self) -> None:
        tiny = self.server.tiny
        ex = Exchange(self, tiny)
        with tiny.lock:
            tiny.requests.append(ex)
        tiny.handler(ex)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _dispatch

    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = False  # so that server_close() joins every connection thread
    block_on_close = True
    tiny: TinyServer

    def process_request(self, request: socket.socket, client_address: object) -> None:
        with self.tiny.lock:
            self.tiny.connections.add(request)
        t = threading.Thread(
            target=self.process_request_thread, args=(request, client_address), name="tiny-server-connection"
        )
        t.daemon = False
        threads = vars(self).setdefault("_threads", socketserver._Threads())  # type: ignore[attr-defined]
        threads.append(t)
        t.start()

    def shutdown_request(self, request: socket.socket) -> None:  # type: ignore[override]
        with self.tiny.lock:
            self.tiny.connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # TLS handshake failures and client disconnects are expected in these tests


class TinyServer:
    """A threaded HTTP(S) server on 127.0.0.1:0; a context manager that stops it on exit."""

    def __init__(self, handler: Handler, *, ssl_context: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.lock = threading.Lock()
        self.requests: list[Exchange] = []
        self.connections: set[socket.socket] = set()
        self.released = threading.Event()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _RequestHandler)
        self._httpd.tiny = self
        if ssl_context is not None:
            self._httpd.socket = ssl_context.wrap_socket(
                self._httpd.socket, server_side=True, do_handshake_on_connect=False
            )
        self.port: int = self._httpd.server_address[1]
        self.scheme = "https" if ssl_context is not None else "http"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="tiny-server")

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def start(self) -> TinyServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.released.set()
        self._httpd.shutdown()
        with self.lock:
            conns = list(self.connections)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._httpd.server_close()  # joins the connection threads
        self._thread.join()

    def __enter__(self) -> TinyServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class StreamConsumer:
    """Iterates a ``LineStream`` on a named thread: the lines it got, and how the iteration ended
    (``"stopped"`` or the exception), for tests that close the stream from another thread."""

    def __init__(self, stream: Any, name: str = "test-stream-reader") -> None:
        self.received: list[bytes] = []
        self.outcome: list[object] = []
        self.reading = threading.Event()
        self.got_line = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(stream,), name=name)
        self.thread.start()

    def _run(self, stream: Any) -> None:
        self.reading.set()
        try:
            for line in stream:
                self.received.append(line)
                self.got_line.set()
            self.outcome.append("stopped")
        except Exception as e:  # recorded for the test's assertions
            self.outcome.append(e)

    def join(self, timeout: float) -> bool:
        """Wait for the iteration to end; True when it did."""
        self.thread.join(timeout)
        return not self.thread.is_alive()
