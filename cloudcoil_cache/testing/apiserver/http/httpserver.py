"""The fake server's listener: a threading HTTP server that names, tracks, cuts and joins connections."""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
import threading
from http.server import ThreadingHTTPServer
from typing import Any, Callable

from ..endpoints.context import ServerContext
from .handler import Handler
from .request_log import RequestLog

__all__ = ["HTTPServer"]

log = logging.getLogger(__name__)

_HANDSHAKE_SECONDS = 5.0


class HTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that names, tracks, and can cut and join its connection threads."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        context: ServerContext,
        request_log: RequestLog,
        on_tls_failure: Callable[[str], None],
    ) -> None:
        self.context = context  # what the handler serves from
        self.request_log = request_log
        self._on_tls_failure = on_tls_failure
        self._conn_lock = threading.Lock()
        self._conns: dict[socket.socket, threading.Thread] = {}
        self._conn_count = 0
        super().__init__(address, Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._conn_lock:
            self._conn_count += 1
            thread = threading.Thread(
                target=self._serve_connection,
                args=(request, client_address),
                name=f"fake-apiserver-conn-{self.server_address[1]}-{self._conn_count}",
                daemon=True,
            )
            self._conns[request] = thread
        thread.start()

    def _serve_connection(self, request: Any, client_address: Any) -> None:
        try:
            if isinstance(request, ssl.SSLSocket):
                request.settimeout(_HANDSHAKE_SECONDS)
                try:
                    request.do_handshake()
                except (ssl.SSLError, OSError) as exc:
                    log.debug("fake API server: TLS handshake with %s failed: %s", client_address, exc)
                    self._on_tls_failure(str(exc))
                    return
                request.settimeout(None)
            self.finish_request(request, client_address)
        except (ConnectionError, OSError):
            pass
        except Exception:  # a handler bug: log it, keep serving other connections
            log.exception("fake API server: request from %s failed", client_address)
        finally:
            self.shutdown_request(request)
            with self._conn_lock:
                self._conns.pop(request, None)

    def cut_connections(self) -> None:
        """Shut down every open connection's socket (handlers blocked on it wake up and end)."""
        with self._conn_lock:
            socks = list(self._conns)
        for sock in socks:
            with contextlib.suppress(OSError):
                # The plain socket's shutdown: SSLSocket.shutdown would drop its SSL object
                # under a handler thread that is reading from it.
                socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def join_connections(self, timeout: float) -> None:
        with self._conn_lock:
            threads = list(self._conns.values())
        for thread in threads:
            thread.join(timeout)
