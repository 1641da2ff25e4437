"""One HTTP/1.1 connection of the webhook server: TLS handshake, one request (Content-Length body), the answer."""

from __future__ import annotations

import http
import select
import socket
import ssl
import threading
from typing import Callable, Mapping
from urllib.parse import parse_qsl

from cloudcoil_cache.admission._exchange import Answer, Exchange

__all__ = ["Connection", "Refused", "Closed", "plain"]

_MAX_HEAD = 64 * 1024
_CHUNK = 64 * 1024


class Closed(Exception):
    """The client went away (or broke TLS) before a whole request arrived."""


class Refused(Exception):
    """A request that gets ``answer`` and then the connection closed (its body was not read)."""

    def __init__(self, answer: Answer) -> None:
        super().__init__(answer.status)
        self.answer = answer


def plain(status: int, text: str) -> Answer:
    return Answer(status, text.encode(), "text/plain; charset=utf-8")


class Connection:
    """A client socket; TLS once ``handshake_step()`` finished (stepped on worker threads)."""

    def __init__(self, sock: socket.socket, peer: str) -> None:
        self.sock: socket.socket = sock
        self.peer = peer
        self.tls = False
        self.generation = -1  # the ServingTLS generation it handshook under
        self.wants = select.POLLIN  # what the accept loop waits for while it holds this connection
        self.deadline = 0.0  # when the accept loop closes it if nothing came (clock seconds)
        self.disconnected = threading.Event()
        self.on_close: Callable[[Connection], None] | None = None  # the server's count of open connections
        self._buffer = bytearray()
        self._closed = False

    def __repr__(self) -> str:
        return f"<Connection {self.peer} tls={self.tls}>"

    def fileno(self) -> int:
        return self.sock.fileno()

    @property
    def closed(self) -> bool:
        return self._closed

    def handshake_step(self, context: ssl.SSLContext, generation: int) -> int:
        """Advance the TLS handshake without blocking: 0 once done, else the poll events to wait for.

        Raises ``OSError``/``ssl.SSLError`` when it failed.
        """
        if not isinstance(self.sock, ssl.SSLSocket):
            self.sock.setblocking(False)
            self.sock = context.wrap_socket(self.sock, server_side=True, do_handshake_on_connect=False)
            self.generation = generation
        try:
            self.sock.do_handshake()
        except ssl.SSLWantReadError:
            return select.POLLIN
        except ssl.SSLWantWriteError:
            return select.POLLOUT
        self.tls = True
        return 0

    def buffered(self) -> bool:
        """Whether bytes of a next request are already here (then it is read without waiting to poll)."""
        if self._buffer:
            return True
        return isinstance(self.sock, ssl.SSLSocket) and self.sock.pending() > 0

    def _fill(self) -> None:
        try:
            data = self.sock.recv(_CHUNK)
        except (OSError, ssl.SSLError) as exc:  # timeouts, resets, TLS alerts: the connection is done
            raise Closed(type(exc).__name__) from None
        if not data:
            raise Closed("end of stream")
        self._buffer += data

    def read_request(self, max_body: int, timeout: float) -> tuple[Exchange, bool]:
        """The next request and whether the client wants keep-alive.

        Raises ``Closed`` (nothing to answer) or ``Refused`` (answer, then close).
        """
        self.sock.settimeout(timeout)
        while b"\r\n\r\n" not in self._buffer:
            if len(self._buffer) > _MAX_HEAD:
                raise Refused(plain(431, "request head too large\n"))
            try:
                self._fill()
            except Closed:
                if self._buffer.strip():
                    raise Refused(plain(400, "incomplete request\n")) from None
                raise
        end = self._buffer.index(b"\r\n\r\n")
        head = bytes(self._buffer[:end])
        del self._buffer[: end + 4]
        if len(head) > _MAX_HEAD:
            raise Refused(plain(431, "request head too large\n"))
        method, target, version, headers = _parse_head(head)
        keep_alive = _keep_alive(version, headers.get("connection", ""))
        length = _content_length(headers)
        if length > max_body:
            raise Refused(plain(413, f"request body over {max_body} bytes\n"))
        if headers.get("expect", "").lower() == "100-continue" and len(self._buffer) < length:
            self._send_raw(b"HTTP/1.1 100 Continue\r\n\r\n")
        while len(self._buffer) < length:
            try:
                self._fill()
            except Closed:
                raise Refused(plain(400, "incomplete body\n")) from None
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        path, _, query = target.partition("?")
        exchange = Exchange(method, path, dict(parse_qsl(query, keep_blank_values=True)), headers, body)
        return exchange, keep_alive

    def send(self, answer: Answer, *, keep_alive: bool, head_only: bool = False) -> bool:
        """Write ``answer``; False when the client is gone."""
        try:
            reason = http.HTTPStatus(answer.status).phrase
        except ValueError:
            reason = "Unknown"
        lines = [
            f"HTTP/1.1 {answer.status} {reason}",
            f"Content-Type: {answer.content_type}",
            f"Content-Length: {len(answer.body)}",
        ]
        for name, value in answer.headers:
            if _safe_header(name, value) and name.lower() not in ("content-length", "connection", "transfer-encoding"):
                lines.append(f"{name}: {value}")
        lines.append("Connection: keep-alive" if keep_alive else "Connection: close")
        data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", errors="replace")
        return self._send_raw(data if head_only else data + answer.body)

    def _send_raw(self, data: bytes) -> bool:
        try:
            self.sock.sendall(data)
        except (OSError, ssl.SSLError):
            return False
        return True

    def shutdown(self) -> None:
        """Break a worker's blocking read or write on this connection (stop, past the drain)."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.sock.close()
        except OSError:
            pass
        if self.on_close is not None:
            self.on_close(self)


def _safe_header(name: str, value: str) -> bool:
    return bool(name) and not any(c in name + value for c in "\r\n\0") and ":" not in name


def _parse_head(head: bytes) -> tuple[str, str, str, Mapping[str, str]]:
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes any bytes
        raise Refused(plain(400, "bad request head\n")) from None
    request_line, *header_lines = text.split("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3 or not parts[0].isalpha() or not parts[2].startswith("HTTP/1."):
        raise Refused(plain(400, "bad request line\n"))
    headers: dict[str, str] = {}
    for line in header_lines:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise Refused(plain(400, "bad header line\n"))
        key = name.lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return parts[0], parts[1], parts[2], headers


def _keep_alive(version: str, connection: str) -> bool:
    tokens = {t.strip().lower() for t in connection.split(",")}
    if version == "HTTP/1.0":
        return "keep-alive" in tokens
    return "close" not in tokens


def _content_length(headers: Mapping[str, str]) -> int:
    if "transfer-encoding" in headers:
        raise Refused(plain(411, "chunked or encoded bodies are not accepted: send Content-Length\n"))
    raw = headers.get("content-length")
    if raw is None:
        return 0
    if not (raw.isascii() and raw.isdigit()):
        raise Refused(plain(400, "bad Content-Length\n"))
    return int(raw)
