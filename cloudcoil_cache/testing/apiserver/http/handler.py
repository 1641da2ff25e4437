"""The fake server's HTTP request handler: parsing, the request log, injected faults, auth, then the endpoints."""

from __future__ import annotations

import email.utils
import json
import logging
import select
import socket
import ssl
import time
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ..endpoints.context import ServerContext
from ..endpoints.discovery import serve_discovery, serve_openapi
from ..endpoints.partial import wants_partial
from ..endpoints.request import Request
from ..endpoints.resource import serve_resource
from ..endpoints.routing import Route, derive_verb, parse_route
from ..endpoints.tables import wants_table
from ..machinery import status as _status
from ..machinery.status import StatusError
from .request_log import RequestLog

__all__ = ["Handler"]

log = logging.getLogger(__name__)


class Handler(BaseHTTPRequestHandler):
    """One connection's requests (HTTP/1.1 keep-alive), served from ``server.context``."""

    protocol_version = "HTTP/1.1"
    streaming = False  # set once a watch response's headers went out
    table = False  # the request asked for a server-side Table
    warnings: list[str]  # sent as Warning headers with the answer
    server_version = "cloudcoil-fake-apiserver"
    sys_version = ""

    @property
    def ctx(self) -> ServerContext:
        server: Any = self.server  # the fake's HTTP server, which carries its context and log
        context: ServerContext = server.context
        return context

    @property
    def request_log(self) -> RequestLog:
        server: Any = self.server
        log: RequestLog = server.request_log
        return log

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib signature)
        log.debug("%s " + format, self.address_string(), *args)

    def date_time_string(self, timestamp: float | None = None) -> str:
        skewed = (time.time() if timestamp is None else timestamp) + self.ctx.settings.clock_skew
        return email.utils.formatdate(skewed, usegmt=True)

    def do_GET(self) -> None:  # noqa: N802 (stdlib naming)
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._dispatch("PUT")

    def do_PATCH(self) -> None:  # noqa: N802
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch("DELETE")

    # -- responses -----------------------------------------------------------------------------

    def send_bytes(
        self,
        code: int,
        body: bytes,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        self.send_response(code)
        for warning in getattr(self, "warnings", ()):
            quoted = warning.replace("\\", "\\\\").replace('"', '\\"')
            # UTF-8 on the wire, as kube-apiserver sends it (send_header writes Latin-1: one byte per char)
            self.send_header("Warning", ('299 - "' + quoted + '"').encode("utf-8").decode("latin-1"))
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache, private")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def start_stream(self) -> None:
        """The head of a watch response (a chunked JSON stream)."""
        self.streaming = True
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()

    def write_raw(self, data: bytes) -> None:
        self.wfile.write(data)

    def client_gone(self) -> bool:
        """Has the client closed its end of a stream (an abandoned watch)? A client sends nothing
        while it reads one, so over TLS anything readable (its close_notify, its FIN) says so too."""
        conn = self.connection
        try:
            poller = select.poll()  # not select.select: it refuses descriptors >= 1024
            poller.register(conn, select.POLLIN | select.POLLHUP | select.POLLERR)
            if not poller.poll(0):
                return False
            if isinstance(conn, ssl.SSLSocket):
                return True
            return bool(conn.recv(1, socket.MSG_PEEK) == b"")
        except (OSError, ValueError):
            return True

    def abort(self) -> None:
        """Close the connection without ending the response (a cut watch)."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def set_warnings(self, warnings: list[str]) -> None:
        self.warnings = warnings

    def send_obj(self, code: int, obj: Any) -> None:
        self.send_bytes(code, json.dumps(obj, separators=(",", ":")).encode())

    def send_status(self, exc: StatusError) -> None:
        headers = dict(exc.headers)
        if exc.code == 429:
            headers.setdefault("X-Kubernetes-PF-FlowSchema-UID", "fake-flowschema")
            headers.setdefault("X-Kubernetes-PF-PriorityLevel-UID", "fake-prioritylevel")
        self.send_bytes(exc.code, json.dumps(exc.body, separators=(",", ":")).encode(), headers)

    # -- dispatch ------------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():  # trailers
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _dispatch(self, method: str) -> None:
        ctx = self.ctx
        self.streaming = False
        self.table = False
        self.warnings = []
        split = urlsplit(self.path)
        path = unquote(split.path)
        query = {k: v[0] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        route = parse_route(path, ctx.registry)
        verb = derive_verb(method, route, query)
        body = self._read_body()
        user = self._user()
        client = (str(self.client_address[0]), int(self.client_address[1])) if self.client_address else ("", 0)
        recorded = self.request_log.record(
            method, path, query, dict(self.headers.items()), verb, body, user or "", client=client
        )
        try:
            self._serve(method, verb, route, path, query, body, user)
        except StatusError as exc:
            self.send_status(exc)
        except OSError:
            raise  # the connection broke; nothing can be answered
        except Exception as exc:  # a bug in the fake: answer like the real server's panic handler
            log.exception("fake API server: %s %s failed", method, path)
            if self.streaming:
                raise
            self.send_status(
                StatusError(
                    500,
                    _status.status_body(500, "InternalError", f"Internal error occurred: {type(exc).__name__}: {exc}"),
                )
            )
        finally:
            recorded.served.set()  # a write is in the store from here: wait_for_request(served=True)

    def _serve(
        self,
        method: str,
        verb: str,
        route: Route | None,
        path: str,
        query: dict[str, str],
        body: bytes,
        user: str | None,
    ) -> None:
        """Injected delays and failures, authentication, then the endpoint the route names."""
        ctx = self.ctx
        if ctx.faults.delay > 0 and ctx.stopping.wait(ctx.faults.delay):
            self.close_connection = True
            return
        self._check_auth_and_faults(verb, path, route, user)
        if route is None:
            raise StatusError(
                404, _status.status_body(404, "NotFound", "the server could not find the requested resource")
            )
        self.table = wants_table(self.headers.get("Accept", ""))
        partial = wants_partial(self.headers.get("Accept", ""))
        if route.discovery == "openapi":
            serve_openapi(ctx, route.group, self._accepts_json(), self)
            return
        if not self._accepts_json() and not self.table and partial is None:
            raise StatusError(
                406,
                _status.status_body(
                    406, "NotAcceptable", "only the following media types are accepted: application/json"
                ),
            )
        if route.discovery is not None:
            address: Any = self.server.server_address  # (host, port): a TCP server
            port = address[1]
            serve_discovery(ctx, route, f"127.0.0.1:{port}", self)
            return
        request = Request(
            method=method,
            verb=verb,
            route=route,
            query=query,
            body=body,
            content_type=self._content_type(),
            user_agent=self.headers.get("User-Agent") or "",
            user=user,
            table=self.table,
            partial=partial,
        )
        serve_resource(ctx, request, self)

    def _accepts_json(self) -> bool:
        """Whether plain JSON is acceptable. Media types with parameters asking for another shape
        (``;as=APIGroupDiscoveryList`` aggregated discovery, ``;as=Table``) are not plain JSON: a
        client that accepts only those gets 406, as from a server without them, and falls back."""
        accept = self.headers.get("Accept", "")
        if not accept:
            return True
        for media in accept.split(","):
            media = media.strip()
            if "as=" in media:
                continue
            if any(m in media for m in ("json", "*/*", "application/*")):
                return True
        return False

    def _user(self) -> str | None:
        """Who sent the request: the client certificate's CN, else the token's user, else None."""
        ctx = self.ctx
        if ctx.settings.client_ca is not None and isinstance(self.connection, ssl.SSLSocket):
            cert = self.connection.getpeercert()
            if cert:
                subject: Any = cert.get("subject", ())
                for rdn in subject:
                    for key, value in rdn:
                        if key == "commonName":
                            return str(value)
        if ctx.settings.expected_token is not None:
            if self.headers.get("Authorization", "") == f"Bearer {ctx.settings.expected_token}":
                return "token-user"
        return None

    def _check_auth_and_faults(self, verb: str, path: str, route: Route | None, user: str | None) -> None:
        ctx = self.ctx
        if (ctx.settings.expected_token is not None or ctx.settings.client_ca is not None) and user is None:
            raise StatusError(401, _status.status_body(401, "Unauthorized", "Unauthorized"))
        rule = ctx.faults.take_rule(verb, path)
        if rule is not None:
            raise _status.for_code(
                rule.code,
                verb=verb,
                rtype=route.rtype if route else None,
                namespace=route.namespace if route else None,
                message=rule.message,
                retry_after=rule.retry_after,
            )

    def _content_type(self) -> str:
        return (self.headers.get("Content-Type") or "").split(";")[0].strip()
