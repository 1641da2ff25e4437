"""The HTTP transport: pooled requests, API error mapping, retries, and line-framed watch streams.

``_error_catcher`` below is the one place where requests/urllib3/socket/ssl exceptions become
``errors.TransportError`` subclasses.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import io
import logging
import re
import socket
import ssl
import threading
import time
import warnings
from typing import Any, Callable, Iterator, Mapping
from urllib.parse import urlsplit

import attrs
import requests
import urllib3

from .. import __version__, _json
from ..errors import (
    APIError,
    BodyTooLarge,
    ConfigError,
    ConnectError,
    DecodeError,
    LineTooLong,
    ProtocolError,
    ReadTimeout,
    TransportError,
    api_error_from_status,
)
from ._auth import ClientCertificateSource, Credentials
from ._chunked import ChunkedBody, Piece
from ._interrupt import Interrupter, interruptible, lease_of
from ._retry import RetryPolicy, StaleConnectionRetry, parse_retry_after
from ._tls import PlainAdapter, TLSAdapter, TLSConfig, build_ssl_context
from ._warnings import WarningHandler, WarningLog, parse_warnings

__all__ = ["DEFAULT_USER_AGENT", "MAX_LINE_BYTES", "LineStream", "Response", "Transport", "normalise_server"]

log = logging.getLogger(__name__)

DEFAULT_USER_AGENT = f"cloudcoil-cache/{__version__}"

# A watch is read in chunks of up to this size (one read1() per chunk): reading big chunks is
# 6-15x faster than requests' iter_lines() with its 512-byte default.
_READ_SIZE = 256 * 1024
# The longest watch line accepted (``Transport(max_line_bytes=...)``): one line is one object, and
# the API server's own limit for a request is 3 MiB (etcd's 1.5 MiB per object), so 64 MiB leaves
# room for any real object while a stream that never sends a newline cannot exhaust memory.
MAX_LINE_BYTES = 64 * 1024 * 1024
# A chunked body de-chunked here is read with one raw read per read1(): of this size, and of
# _READ_SIZE while the reads come back full (a burst of events). BufferedReader.read1(n) allocates
# n bytes and shrinks them to what came: above glibc's mmap threshold (128 KiB) that is an mmap +
# mremap, ~30 us when one 7 KB event came (as in a quiet watch, or over TLS, where a read returns
# one 16 KB record); at 64 KiB it costs no more than an 8 KiB read.
_RAW_READ_SIZE = 64 * 1024
# An error message built from a non-JSON body shows at most this many characters of it.
_MESSAGE_LIMIT = 200


@contextlib.contextmanager
def _error_catcher(method: str, path: str) -> Iterator[None]:
    """Convert transport exceptions into ``errors.TransportError`` subclasses (``raise ... from``).

    Messages name the method and the URL path, never headers, query values or credentials.
    """
    where = f"{method} {path.split('?', 1)[0]}"
    try:
        yield
    except requests.exceptions.ConnectTimeout as e:
        raise ConnectError(f"{where}: timed out connecting to the server") from e
    except requests.exceptions.ReadTimeout as e:
        raise ReadTimeout(f"{where}: the server sent nothing within the read timeout") from e
    except requests.exceptions.SSLError as e:
        raise ConnectError(f"{where}: TLS handshake failed: {_root_cause(e)}") from e
    except requests.exceptions.ChunkedEncodingError as e:
        raise ProtocolError(f"{where}: the response body was cut off: {_root_cause(e)}") from e
    except requests.exceptions.ConnectionError as e:
        if _caused_by(e, (urllib3.exceptions.ProtocolError, http.client.HTTPException)):
            raise ProtocolError(f"{where}: the connection broke before a response: {_root_cause(e)}") from e
        raise ConnectError(f"{where}: cannot connect: {_root_cause(e)}") from e
    except (urllib3.exceptions.ReadTimeoutError, TimeoutError) as e:
        raise ReadTimeout(f"{where}: the server sent nothing within the read timeout") from e
    except requests.exceptions.InvalidHeader:
        # requests' message quotes the header value, which may be a token: never show it.
        raise ConfigError(
            f"{where}: a header value (e.g. the token) has characters not allowed in HTTP headers (value not shown)"
        ) from None
    except requests.exceptions.RequestException as e:  # (an OSError subclass: keep it first)
        raise TransportError(f"{where}: {type(e).__name__}: {_root_cause(e)}") from e
    except (urllib3.exceptions.HTTPError, http.client.HTTPException, ssl.SSLError, OSError) as e:
        raise ProtocolError(f"{where}: the connection broke while reading: {_root_cause(e)}") from e


def _caused_by(exc: BaseException, types: tuple[type[BaseException], ...]) -> bool:
    seen: set[int] = set()
    todo: list[Any] = [exc]
    while todo:
        e = todo.pop()
        if not isinstance(e, BaseException) or id(e) in seen:
            continue
        seen.add(id(e))
        if e is not exc and isinstance(e, types):
            return True
        todo.extend([*e.args, getattr(e, "reason", None), e.__cause__, e.__context__])
    return False


def _root_cause(exc: BaseException) -> str:
    """The innermost useful description (urllib3 nests its reason inside MaxRetryError)."""
    e: Any = exc
    for _ in range(5):
        inner = getattr(e, "reason", None)
        if inner is None and e.args and isinstance(e.args[0], BaseException):
            inner = e.args[0]
        if not isinstance(inner, BaseException):
            break
        e = inner
    text = str(e) or type(e).__name__
    return text if len(text) <= 300 else text[:300] + "..."


@attrs.frozen
class Response:
    """A complete (non-streamed) response; immutable."""

    status_code: int
    headers: Mapping[str, str] = attrs.field(repr=False)
    content: bytes = attrs.field(repr=lambda c: f"<{len(c)} bytes>")

    def json(self) -> Any:
        """The body parsed as JSON.

        Raises:
            DecodeError: the body is not JSON.
        """
        return _json.loads(self.content)


class LineStream:
    """An open streaming response, iterated as complete lines. Context manager; iterate once.

    Iteration yields each complete line (without ``b"\\n"``; empty lines skipped). A line is only
    ever yielded whole: if the body ends (cleanly or not) after a partial line, iteration raises
    ``errors.ProtocolError``; a read timeout raises ``errors.ReadTimeout``. A clean end of the body
    simply stops iteration. A line longer than ``max_line`` bytes closes the stream and raises
    ``errors.LineTooLong`` as soon as the limit is passed (at most one read chunk later). With a
    ``line_timeout``, a line not complete that many seconds after its first byte closes the stream
    and raises ``errors.ReadTimeout`` even while bytes keep coming (a server trickling a byte a
    second is a stall: progress is a complete line, not a byte); it is noticed at the first read
    after the deadline. A stream silent between lines is left to the socket's read timeout (a quiet
    watch sends nothing for minutes).

    ``close()`` may be called from any thread, also while another thread is blocked reading: it
    shuts the socket down so that the read returns at once, and the iteration then **ends
    normally (StopIteration)**, whatever state the body was in. The reader tells a deliberate
    close from the server ending the stream by its own stop flag (or ``closed``).

    A chunked body without a content encoding (every watch) is read in big raw reads from the
    socket's buffered reader and de-chunked here (``_chunked``), not by ``http.client`` (which
    returns one chunk per read: a system call and several layers of Python per watch event). Its
    connection then never goes back to the pool: the stream closes it, also after a complete body.
    Any other body is read through urllib3.
    """

    def __init__(
        self,
        response: requests.Response,
        method: str,
        path: str,
        *,
        max_line: int = MAX_LINE_BYTES,
        line_timeout: float | None = None,
    ) -> None:
        self.max_line = max_line
        self.line_timeout = line_timeout
        self.status_code = response.status_code
        self.headers: Mapping[str, str] = response.headers
        self._response = response
        self._raw: urllib3.HTTPResponse = response.raw
        # what close() shuts down: this use of the connection only, never it once back in the pool
        self._lease = lease_of(getattr(self._raw, "_connection", None))
        self._method = method
        self._path = path
        self._closed = False
        self._iterated = False
        self._close_lock = threading.Lock()

    @property
    def closed(self) -> bool:
        """True once ``close()`` was called (or the body was read to its end)."""
        return self._closed

    def __enter__(self) -> LineStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[bytes]:
        if self._iterated:
            raise RuntimeError("a LineStream can be iterated only once")
        self._iterated = True
        return self._lines()

    # Hot path of every watch event: the per-piece and per-line branches stay inline (a helper would add
    # a call per line or piece), so this one function is over the complexity limit.
    def _lines(self) -> Iterator[bytes]:  # noqa: C901
        body = self._chunked_body()
        pieces = body.pieces() if body is not None else self._urllib3_pieces()
        pending: list[bytes] = []  # pieces of the current, still incomplete line
        pending_size = 0
        limit = self.max_line
        line_timeout = self.line_timeout
        clock = time.monotonic
        deadline = 0.0  # while a line is pending: when it must be complete (it started then + timeout)
        try:
            for data, start, end in pieces:
                nl = data.find(b"\n", start, end)
                if nl < 0:
                    if line_timeout is not None and not pending_size:
                        deadline = clock() + line_timeout  # a new line starts: its own deadline
                    pending.append(data[start:end])
                    pending_size += end - start
                    if pending_size > limit:
                        self._too_long(pending_size)
                    if line_timeout is not None and clock() > deadline:
                        self._stalled()
                    continue
                if pending:
                    pending.append(data[start:nl])
                    line = b"".join(pending)
                    pending.clear()
                else:
                    line = data[start:nl]
                while True:
                    if len(line) > limit:
                        self._too_long(len(line))
                    if line:
                        yield line
                    start = nl + 1
                    nl = data.find(b"\n", start, end)
                    if nl < 0:
                        break
                    line = data[start:nl]
                pending_size = end - start
                if pending_size:
                    pending.append(data[start:end])
                    if pending_size > limit:
                        self._too_long(pending_size)
                    if line_timeout is not None:
                        deadline = clock() + line_timeout  # the rest of this piece starts a line
        except ProtocolError:  # malformed chunk framing (LineTooLong has closed the stream already)
            self.close()
            raise
        if self._closed:
            return
        self.close()
        if pending and any(p.strip() for p in pending):
            size = sum(len(p) for p in pending)
            raise ProtocolError(
                f"{self._method} {self._path}: the stream ended inside a line "
                f"({size} bytes without a newline were discarded)"
            )
        if body is not None and not body.complete:
            raise self._cut_off()

    def _too_long(self, size: int) -> None:
        self.close()
        raise LineTooLong(
            f"{self._method} {self._path}: a watch line is longer than the limit of "
            f"{self.max_line} bytes (max_line_bytes; {size} bytes read without a "
            "newline): the stream was closed",
            limit=self.max_line,
        )

    def _stalled(self) -> None:
        self.close()
        raise ReadTimeout(
            f"{self._method} {self._path}: no complete line within the read timeout of "
            f"{self.line_timeout:g}s (bytes may still trickle in): the stream was closed"
        )

    def _cut_off(self) -> ProtocolError:
        return ProtocolError(
            f"{self._method} {self._path}: the response body was cut off (the connection ended before the last chunk)"
        )

    def read_all(self, max_bytes: int | None = None) -> bytes:
        """Read the whole remaining body (a LIST read this way can be interrupted by ``close()``).

        With ``max_bytes``, a body longer than that is refused while it is read: a Content-Length
        over it before any byte of the body, any other body as soon as the bytes read pass it.

        Raises:
            ProtocolError: ``close()`` was called before the body was complete, or it broke off.
            BodyTooLarge: the body is longer than ``max_bytes`` (the stream is closed).
        """
        self._take()
        body = self._chunked_body()
        if body is None and self._identity() and self._raw.length_remaining is not None:
            if max_bytes is not None and self._raw.length_remaining > max_bytes:
                self._too_large(self._raw.length_remaining, max_bytes, declared=True)
            # Content-Length: one read of the whole body into one bytes object, with its length
            # checked (http.client's IncompleteRead); the connection goes back to the pool.
            parts: list[bytes | memoryview] = [self._read(functools.partial(self._raw.read, decode_content=True))]
            self._end(None)
        else:
            parts = self._bounded(self._pieces(body), max_bytes)
        return parts[0] if len(parts) == 1 and isinstance(parts[0], bytes) else b"".join(parts)

    def iter_body(self) -> Iterator[bytes | memoryview]:
        """The remaining body piece by piece as it arrives (a LIST decoded while it is read,
        ``_listwatch._split``); each piece stays valid after the next is read. Ends at the end of
        the body; the stream is then closed.

        Raises:
            ProtocolError: ``close()`` was called before the body was complete, or it broke off.
        """
        self._take()
        return self._pieces(self._chunked_body())

    def _take(self) -> None:
        if self._iterated:
            raise RuntimeError("a LineStream can be read only once")
        self._iterated = True

    def _pieces(self, body: ChunkedBody | None) -> Iterator[bytes | memoryview]:
        """The body's pieces (de-chunked here when ``body``, else by urllib3), then ``_end``."""
        try:
            if body is not None:
                for data, start, end in body.pieces():
                    yield memoryview(data)[start:end]
            else:
                for chunk, _start, _end in self._urllib3_pieces():
                    yield chunk
        except ProtocolError:
            self.close()
            raise
        self._end(body)

    def _end(self, body: ChunkedBody | None) -> None:
        """The body was read to its end: close the stream, or raise if it was closed or cut off."""
        if self._closed:
            raise ProtocolError(f"{self._method} {self._path}: closed while the body was read")
        self.close()
        if body is not None and not body.complete:
            raise self._cut_off()

    def _bounded(self, pieces: Iterator[bytes | memoryview], max_bytes: int | None) -> list[bytes | memoryview]:
        if max_bytes is None:
            return list(pieces)
        parts: list[bytes | memoryview] = []
        size = 0
        for piece in pieces:
            size += len(piece)
            if size > max_bytes:
                parts.clear()
                self._too_large(size, max_bytes, declared=False)
            parts.append(piece)
        return parts

    def _too_large(self, size: int, limit: int, *, declared: bool) -> None:
        self.close()
        what = f"declares {size} bytes (Content-Length)" if declared else f"passed {size} bytes while read"
        raise BodyTooLarge(
            f"{self._method} {self._path}: the response body {what}, over the limit of "
            f"{limit} bytes (max_list_bytes): refused, the stream was closed",
            limit=limit,
        )

    def _identity(self) -> bool:
        """The body has no content encoding (``stream()`` asks for identity; a server may differ)."""
        return self.headers.get("Content-Encoding", "identity").strip().lower() in ("", "identity")

    def _chunked_body(self) -> ChunkedBody | None:
        """The body as a ``ChunkedBody`` over big raw socket reads, or None for urllib3 to read it.

        Only when the body is chunked, not encoded, and ``http.client`` has not started reading it
        (its chunk state is still unset): then its buffered reader yields the body's bytes first
        (what it read with the headers) and each ``read1(n)`` is one raw read of up to n bytes.
        """
        fp = getattr(self._raw, "_fp", None)
        if (
            not isinstance(fp, http.client.HTTPResponse)
            or not fp.chunked
            or fp.chunk_left is not None
            or fp.length is not None  # 0: no body at all (HEAD, 204, 304) whatever the headers say
            or getattr(self._raw, "_fp_bytes_read", None) != 0
            or not self._identity()
        ):
            return None
        reader = fp.fp
        if not isinstance(reader, io.BufferedReader):
            return None
        return ChunkedBody(functools.partial(self._read, _burst_reads(reader)), f"{self._method} {self._path}")

    def _urllib3_pieces(self) -> Iterator[Piece]:
        read = functools.partial(self._raw.read1, _READ_SIZE, decode_content=True)
        while True:
            chunk = self._read(read)
            if not chunk:
                return
            yield chunk, 0, len(chunk)

    def _read(self, read: Callable[[], bytes]) -> bytes:
        if self._closed:
            return b""
        try:
            with _error_catcher(self._method, self._path):
                data = read()
        except Exception:
            if self._closed:  # close() from another thread broke the read: a normal end
                return b""
            self.close()
            raise
        # Bytes read once close() has begun are dropped: after a TLS socket's shutdown they may be
        # the raw TLS records (ssl drops its state), never to be parsed as the body.
        return b"" if self._closed else data

    def close(self) -> None:
        """Close the stream; safe from any thread and idempotent (see the class docstring)."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        if self._lease is not None:
            if not self._lease.shutdown(socket.SHUT_RD):  # so that a blocked read returns at once
                # The body was read to its end and urllib3 put the connection back in the pool
                # (another request may hold it now): closing the response would close it.
                return
        else:  # not one of our pools' connections
            with contextlib.suppress(ValueError, RuntimeError, OSError, AttributeError):
                self._raw.shutdown()  # urllib3 >= 2.3: SHUT_RD
        with contextlib.suppress(Exception):
            self._response.close()  # also closes a connection whose body was de-chunked here

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<LineStream {self._method} {self._path} {self.status_code} {state}>"


def _burst_reads(reader: io.BufferedReader) -> Callable[[], bytes]:
    """``reader.read1()`` of ``_RAW_READ_SIZE``, or of ``_READ_SIZE`` after a read that came back full."""
    size = _RAW_READ_SIZE

    def read() -> bytes:
        nonlocal size
        data = reader.read1(size)
        size = _READ_SIZE if len(data) == size else _RAW_READ_SIZE
        return data

    return read


class Transport:
    """HTTP access to one API server; thread-safe, one per Config.

    A pooled ``requests.Session`` (urllib3 beneath) with one ``SSLContext`` built from ``tls``.
    ``credentials.auth_header()`` is set on every request. Error statuses raise the matching
    ``errors.APIError``; a 429 or 5xx with ``Retry-After`` is retried per ``RetryPolicy`` (one
    without it is raised at once, as client-go does), waiting on ``stop_event`` so that setting
    it (or ``close()``) ends the wait; a 401 calls ``credentials.refresh()`` once and retries if it returned True.
    The texts of the server's ``Warning: 299`` headers go to ``warning_handler`` (default: each distinct
    text logged once at WARNING on the ``cloudcoil_cache.warnings`` logger).
    """

    def __init__(
        self,
        server: str,
        *,
        tls: TLSConfig | None = None,
        credentials: Credentials | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 60.0,
        max_retries: int = 5,
        max_retry_wait: float = 60.0,
        user_agent: str = DEFAULT_USER_AGENT,
        stop_event: threading.Event | None = None,
        pool_maxsize: int = 32,
        max_line_bytes: int = MAX_LINE_BYTES,
        warning_handler: WarningHandler | None = None,
    ) -> None:
        self.server = normalise_server(server)
        for name, value in (
            ("connect_timeout", connect_timeout),
            ("read_timeout", read_timeout),
            ("max_retry_wait", max_retry_wait),
        ):
            if not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be an int >= 0, got {max_retries!r}")
        if isinstance(max_line_bytes, bool) or not isinstance(max_line_bytes, int) or max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be a positive int, got {max_line_bytes!r}")
        self.max_line_bytes = max_line_bytes
        self._tls = tls or TLSConfig()
        self._credentials = credentials
        self._cert_source = credentials if isinstance(credentials, ClientCertificateSource) else None
        self._connect_timeout = float(connect_timeout)
        self._read_timeout = float(read_timeout)
        self._retry = RetryPolicy(max_retries=max_retries, max_wait=float(max_retry_wait))
        self._user_agent = user_agent
        self._owns_stop_event = stop_event is None  # close() sets only an event of our own
        self._stop_event = stop_event if stop_event is not None else threading.Event()
        self._pool_maxsize = pool_maxsize
        self._warning_handler: WarningHandler = warning_handler if warning_handler is not None else WarningLog()
        self._lock = threading.Lock()  # guards _session, _client_cert and _closed
        self._closed = False
        self._client_cert: tuple[bytes, bytes] | None = None
        self._session = self._new_session(self._tls)
        if self._tls.insecure_skip_verify:
            _silence_insecure_warning(self.server)
            if self.server.startswith("https:"):
                log.warning(
                    "TLS verification is disabled for %s (insecure-skip-tls-verify): the "
                    "server's identity is not checked and credentials may be sent to an "
                    "impostor",
                    self.server,
                )

    def __repr__(self) -> str:
        return (
            f"Transport({self.server!r}, tls={self._tls!r}, credentials={self._credentials!r}, closed={self._closed})"
        )

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        timeout: float | None = None,
        headers: Mapping[str, str] | None = None,
        stop_event: threading.Event | None = None,
    ) -> Response:
        """Send one request and read the whole response.

        Args:
            method: the HTTP method.
            path: the URL path below ``server`` (starts with ``/``).
            params: query parameters.
            body: the request body; ``content_type`` is its ``Content-Type``.
            timeout: the read timeout for this request (default: the transport's).
            headers: extra headers.
            stop_event: ends a wait between retries early (default: the transport's event).

        Raises:
            APIError: the server answered >= 400 (after any retries), the matching subclass.
            TransportError: no usable response (ConnectError, ReadTimeout, ProtocolError).
            ConfigError: the credentials could not be obtained (e.g. an exec plugin failed).
        """
        extra = dict(headers or {})
        if content_type:
            extra["Content-Type"] = content_type
        stop = stop_event if stop_event is not None else self._stop_event
        attempt = 0
        refreshed = False
        while True:
            generation = self._credentials_generation()  # what the request below is sent with
            resp = self._send(method, path, params=params, body=body, headers=extra, read_timeout=timeout, stream=False)
            with _error_catcher(method, path):
                content = resp.content
            if resp.status_code < 400:
                return Response(resp.status_code, resp.headers, content)
            if resp.status_code == 401 and not refreshed and self._refresh_credentials(generation):
                refreshed = True
                continue
            error = _api_error(resp.status_code, resp.headers, content, resp.reason)
            delay = self._retry.delay(resp.status_code, error.retry_after, attempt)
            if delay is None:
                raise error
            attempt += 1
            log.info(
                "%s %s: %s %s; retry %d/%d in %.1f s",
                method,
                path,
                error.code,
                error.reason or "error",
                attempt,
                self._retry.max_retries,
                delay,
            )
            if stop.wait(delay):
                raise error

    def stream(
        self,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        read_timeout: float | None = None,
        interrupter: Interrupter | None = None,
        line_timeout: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> LineStream:
        """Open a streaming GET (a watch) and return it as an open ``LineStream``.

        ``interrupter.interrupt()`` from another thread aborts the request while it still waits
        for the response headers (``LineStream.close()`` covers the body). ``line_timeout``: the
        longest wait for a complete line (see ``LineStream``; None: only the socket read timeout).
        ``headers``: extra headers (an ``Accept`` of its own: a metadata-only LIST or WATCH).

        Raises:
            APIError: the server answered >= 400 (no retries except one after a 401 refresh).
            TransportError: no usable response.
        """
        refreshed = False
        while True:
            # Without an interrupter of its own, the one active in this thread (if any) applies.
            generation = self._credentials_generation()
            with interruptible(interrupter) if interrupter is not None else contextlib.nullcontext():
                resp = self._send(
                    "GET",
                    path,
                    params=params,
                    headers={**(headers or {}), "Accept-Encoding": "identity"},
                    read_timeout=read_timeout,
                    stream=True,
                )
            if resp.status_code < 400:
                return LineStream(resp, "GET", path, max_line=self.max_line_bytes, line_timeout=line_timeout)
            try:
                with _error_catcher("GET", path):
                    content = resp.content
            finally:
                resp.close()
            if resp.status_code == 401 and not refreshed and self._refresh_credentials(generation):
                refreshed = True
                continue
            raise _api_error(resp.status_code, resp.headers, content, resp.reason)

    def close(self) -> None:
        """Close the connection pools and end any retry wait on the transport's own event; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            session = self._session
        if self._owns_stop_event:
            self._stop_event.set()
        session.close()

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals -------------------------------------------------------------------------------

    def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None,
        headers: Mapping[str, str],
        read_timeout: float | None,
        stream: bool,
        body: bytes | None = None,
    ) -> requests.Response:
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/', got {path!r}")
        bad = [seg for seg in path.split("?", 1)[0].split("/")[1:] if seg in (".", "..")]
        if bad:  # a name or namespace "." / ".." would address another resource (client-go refuses it)
            raise ValueError(
                f"{method} {path.split('?', 1)[0]}: a path segment is {bad[0]!r}: "
                "'.' and '..' are not valid names or namespaces"
            )
        session = self._current_session(method, path)
        all_headers = {"User-Agent": self._user_agent, "Accept": "application/json", **headers}
        auth = self._credentials.auth_header() if self._credentials is not None else None
        if auth:
            all_headers["Authorization"] = auth
        timeout = (self._connect_timeout, read_timeout or self._read_timeout)
        log.debug("%s %s", method, path)
        with _error_catcher(method, path):
            response = session.request(
                method,
                self.server + path,
                params=params,
                data=body,
                headers=all_headers,
                timeout=timeout,
                stream=stream,
                verify=not self._tls.insecure_skip_verify,
                allow_redirects=False,
            )
        warning = response.headers.get("Warning")
        if warning:
            self._warn(method, path, warning)
        return response

    def _warn(self, method: str, path: str, header: str) -> None:
        """Hand each 299 warning of a response to the warning handler (user code: its error is logged)."""
        for text in parse_warnings(header):
            try:
                self._warning_handler(text)
            except Exception:
                log.exception("%s %s: the warning handler raised (the response is used as usual)", method, path)

    def _current_session(self, method: str, path: str) -> requests.Session:
        cert = self._cert_source.client_certificate() if self._cert_source is not None else None
        with self._lock:
            if self._closed:
                raise TransportError(f"{method} {path}: the transport is closed")
            if cert == self._client_cert:
                return self._session
            old = self._session
            tls = self._tls
            if cert is not None:
                tls = attrs.evolve(tls, cert_data=cert[0], key_data=cert[1], cert_file=None, key_file=None)
            self._session = self._new_session(tls)
            self._client_cert = cert
        log.debug("client certificate changed; new connection pool for %s", self.server)
        old.close()
        return self._session

    def _new_session(self, tls: TLSConfig) -> requests.Session:
        session = requests.Session()
        session.trust_env = False  # no .netrc auth, no REQUESTS_CA_BUNDLE overriding the cluster CA
        session.mount(
            "https://",
            TLSAdapter(build_ssl_context(tls), server_hostname=tls.server_name, pool_maxsize=self._pool_maxsize),
        )
        session.mount("http://", PlainAdapter(pool_maxsize=self._pool_maxsize, max_retries=StaleConnectionRetry()))
        return session

    def _credentials_generation(self) -> object:
        """The credentials' generation (read before their header), for a merged refresh after a 401."""
        generation = getattr(self._credentials, "generation", None)
        return generation() if callable(generation) else None

    def _refresh_credentials(self, generation: object) -> bool:
        """After a 401 on a request sent with credentials of ``generation``: refresh them, once for
        all the requests that failed with that generation (see ``_http._auth.MergedRefresh``)."""
        if self._credentials is None:
            return False
        refresh_since = getattr(self._credentials, "refresh_since", None)
        if generation is not None and callable(refresh_since):
            refreshed = bool(refresh_since(generation))
        else:
            refreshed = self._credentials.refresh()
        log.info(
            "401 Unauthorized from %s: credentials reloaded (%s)",
            self.server,
            "retrying" if refreshed else "nothing new",
        )
        return refreshed


def _api_error(code: int, headers: Mapping[str, str], content: bytes, reason: str | None) -> APIError:
    """The ``APIError`` for an error response; a non-Status body becomes a short message."""
    status: Mapping[str, Any] | None = None
    try:
        parsed = _json.loads(content) if content else None
    except DecodeError:
        parsed = None
    if isinstance(parsed, dict) and (parsed.get("kind") == "Status" or "message" in parsed):
        status = parsed
    return api_error_from_status(
        code, status, retry_after=parse_retry_after(headers), fallback_message=_short_text(content) or (reason or "")
    )


def _short_text(content: bytes) -> str:
    text = " ".join(content[: _MESSAGE_LIMIT * 4].decode("utf-8", "replace").split())
    return text if len(text) <= _MESSAGE_LIMIT else text[:_MESSAGE_LIMIT] + "..."


def normalise_server(server: str) -> str:
    """``server`` without a trailing slash, checked to be an http(s) URL without credentials.

    Raises:
        ConfigError: not such a URL (the message never echoes a user name or password).
    """
    if not isinstance(server, str) or not server.strip():
        raise ConfigError(
            f"server must be an http(s) URL, got {type(server).__name__} {server!r}"
            if not isinstance(server, str)
            else "server must be an http(s) URL, got ''"
        )
    try:
        parts = urlsplit(server.strip())
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        raise ConfigError("server must be an http(s) URL like https://host:6443 (bad host or port)") from None
    if parts.username is not None or parts.password is not None:
        raise ConfigError("server URL must not contain a user name or password")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        problem = f"scheme {parts.scheme!r}" if parts.scheme not in ("http", "https") else "no host"
        raise ConfigError(f"server must be an http(s) URL like https://host:6443 ({problem})")
    if parts.query or parts.fragment:
        raise ConfigError("server URL must not have a query or fragment")
    return server.strip().rstrip("/")


def _silence_insecure_warning(server: str) -> None:
    """Hide urllib3's InsecureRequestWarning for this server only (the user asked for it)."""
    host = urlsplit(server).hostname or ""
    warnings.filterwarnings(
        "ignore",
        message=f"Unverified HTTPS request is being made to host '{re.escape(host)}'",
        category=urllib3.exceptions.InsecureRequestWarning,
    )
