"""A scripted hostile API server for one collection: every LIST and WATCH is answered by a row's script.

Stdlib ``http.server`` on 127.0.0.1:0, real sockets. A row gives two functions, ``on_list(ex)`` and
``on_watch(ex)``; each gets an ``Exchange`` with helpers to answer as an API server would (a list
object, a chunked watch stream of event lines) or as a hostile one would (a stream that ends after
one bookmark, trickles a byte at a time, goes silent after its headers, a body of any size).
Requests are recorded and can be waited for; every thread is named and joined by ``stop()``.
"""

from __future__ import annotations

import http.server
import json
import socket
import socketserver
import threading
from typing import Any, Callable, Iterator
from urllib.parse import parse_qsl, urlsplit

Script = Callable[["Exchange"], None]


def pod(name: str | None, rv: int | str, namespace: str | None = "default", **extra: Any) -> dict[str, Any]:
    """A minimal Pod as the API server sends it (``name=None`` / ``namespace=None``: the field is null)."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "resourceVersion": str(rv), "uid": f"uid-{name}"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": []}, **extra}


def event_line(kind: str, obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": kind, "object": obj}).encode() + b"\n"


def bookmark_line(rv: int | str) -> bytes:
    return event_line("BOOKMARK", {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": str(rv)}})


def status_body(code: int, reason: str, message: str) -> bytes:
    return json.dumps(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "reason": reason,
            "message": message,
            "code": code,
        }
    ).encode()


class Exchange:
    """One request as a script sees it: ``verb`` ("list"/"watch"), ``query``, and ways to answer."""

    def __init__(self, req: _Handler, server: HostileServer) -> None:
        self._req = req
        self.server = server
        parts = urlsplit(req.path)
        self.path = parts.path
        self.query: dict[str, str] = dict(parse_qsl(parts.query, keep_blank_values=True))
        self.verb = "watch" if self.query.get("watch") in ("1", "true") else "list"
        self.sent = 0  # body bytes written so far

    # ---------------------------------------------------------- plain answers
    def reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.head(status, {"Content-Length": str(len(body)), **(headers or {})})
        self.write(body)

    def reply_json(self, obj: Any, status: int = 200) -> None:
        self.reply(status, json.dumps(obj).encode())

    def reply_list(
        self, items: list[dict[str, Any]], rv: int | str, *, continue_: str | None = None, remaining: int | None = None
    ) -> None:
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if continue_:
            meta["continue"] = continue_
        if remaining is not None:
            meta["remainingItemCount"] = remaining
        self.reply_json({"kind": "PodList", "apiVersion": "v1", "metadata": meta, "items": items})

    def reply_status(self, code: int, reason: str, message: str) -> None:
        self.reply(code, status_body(code, reason, message))

    # -------------------------------------------------------------- streaming
    def head(self, status: int = 200, headers: dict[str, str] | None = None) -> None:
        req = self._req
        req.close_connection = True  # one request per connection: nothing idles in a pool here
        req.send_response(status)
        req.send_header("Content-Type", "application/json")
        req.send_header("Connection", "close")
        for k, v in (headers or {}).items():
            req.send_header(k, v)
        req.end_headers()
        req.wfile.flush()

    def start_chunked(self) -> None:
        self.head(200, {"Transfer-Encoding": "chunked"})

    def chunk(self, data: bytes) -> None:
        self.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_chunks(self) -> None:
        self.write(b"0\r\n\r\n")

    def write(self, data: bytes) -> None:
        """Write and flush; raises ``Gone`` once the client has closed the connection."""
        try:
            self._req.wfile.write(data)
            self._req.wfile.flush()
        except OSError:
            raise Gone() from None
        self.sent += len(data)

    def pause(self, seconds: float) -> None:
        """Wait (real time); raises ``Gone`` when the server is stopping."""
        if self.server.stopping.wait(seconds):
            raise Gone()

    def hold(self) -> None:
        """Keep the connection open and silent until the server stops."""
        self.server.stopping.wait()
        raise Gone()


class Gone(Exception):
    """The client went away or the server is stopping: the script's answer ends here."""


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        hostile = self.server.hostile
        ex = Exchange(self, hostile)
        hostile.record(ex)
        script = hostile.on_watch if ex.verb == "watch" else hostile.on_list
        if ex.path != hostile.path:
            script = _not_found
        try:
            script(ex)
        except Gone:
            pass

    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass


def _not_found(ex: Exchange) -> None:
    ex.reply_status(404, "NotFound", f"the server could not find the requested resource {ex.path}")


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = False  # server_close() joins every connection thread
    block_on_close = True
    hostile: HostileServer

    def process_request(self, request: socket.socket, client_address: object) -> None:
        with self.hostile.lock:
            self.hostile.connections.add(request)
        t = threading.Thread(
            target=self.process_request_thread, args=(request, client_address), name="hostile-server-connection"
        )
        threads = vars(self).setdefault("_threads", socketserver._Threads())  # type: ignore[attr-defined]
        threads.append(t)
        t.start()

    def shutdown_request(self, request: socket.socket) -> None:  # type: ignore[override]
        with self.hostile.lock:
            self.hostile.connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that closes mid-answer is what these rows are about


class HostileServer:
    """A threaded server on 127.0.0.1:0 serving ``path`` (the Pod collection) with two scripts."""

    def __init__(self, on_list: Script, on_watch: Script, *, path: str = "/api/v1/pods") -> None:
        self.on_list = on_list
        self.on_watch = on_watch
        self.path = path
        self.lock = threading.RLock()  # re-entrant: wait_for predicates count requests under it
        self.changed = threading.Condition(self.lock)
        self.requests: list[Exchange] = []
        self.connections: set[socket.socket] = set()
        self.stopping = threading.Event()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.hostile = self
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="hostile-server")

    def record(self, ex: Exchange) -> None:
        with self.changed:
            self.requests.append(ex)
            self.changed.notify_all()

    def count(self, verb: str) -> int:
        with self.lock:
            return sum(1 for r in self.requests if r.verb == verb)

    def of(self, verb: str) -> list[Exchange]:
        with self.lock:
            return [r for r in self.requests if r.verb == verb]

    def wait_for(self, predicate: Callable[[HostileServer], bool], timeout: float = 10.0) -> None:
        """Block (real time) until ``predicate(server)`` holds after some request; AssertionError if not."""
        with self.changed:
            ok = self.changed.wait_for(lambda: predicate(self), timeout)
        if not ok:
            raise AssertionError(
                f"the hostile server never saw what the test waited for; requests: "
                f"{[(r.verb, r.query) for r in self.requests][-10:]}"
            )

    def start(self) -> HostileServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
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

    def __enter__(self) -> HostileServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def filler(total: int, piece: int = 64 * 1024) -> Iterator[bytes]:
    """``total`` bytes of a JSON string's inside, in pieces (a body far bigger than anything real)."""
    block = b"x" * piece
    while total > 0:
        yield block[: min(piece, total)]
        total -= piece
