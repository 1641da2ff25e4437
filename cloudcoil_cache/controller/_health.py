"""The health server of a Manager: /healthz, /readyz and /metrics over HTTP on loopback."""

from __future__ import annotations

import http.server
import logging
import threading
from typing import Any, Callable

from cloudcoil_cache._runnable import RunnableThread

__all__ = ["HealthServer"]

log = logging.getLogger("cloudcoil_cache.controller.health")

Check = Callable[[], "tuple[bool, str]"]
Metrics = Callable[[], "tuple[int, bytes, str]"]


class _Server(http.server.ThreadingHTTPServer):
    """One library thread per request (``RunnableThread``), joined by ``server_close()``."""

    daemon_threads = False
    block_on_close = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._requests: list[RunnableThread] = []
        self._requests_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = RunnableThread(
            f"controller-health-{self.server_address[1]}-request",
            self.process_request_thread,
            request,
            client_address,
            owner="health server",
        )
        with self._requests_lock:
            self._requests = [t for t in self._requests if t.is_alive()]
            self._requests.append(thread)
        thread.start()

    def server_close(self) -> None:
        super().server_close()
        with self._requests_lock:
            requests, self._requests = self._requests, []
        for thread in requests:
            thread.join()


class HealthServer:
    """Serves ``/healthz`` (``healthy()``), ``/readyz`` (``ready()``) and ``/metrics`` on one thread
    (plus one short-lived thread per request, joined on stop). ``port=0`` picks a free port."""

    def __init__(self, host: str, port: int, *, healthy: Check, ready: Check, metrics: Metrics) -> None:
        routes = {"/healthz": healthy, "/readyz": ready}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the http.server API)
                path = self.path.split("?", 1)[0]
                try:
                    if path == "/metrics":
                        code, body, content_type = metrics()
                    elif path in routes:
                        ok, text = routes[path]()
                        code, body, content_type = (200 if ok else 500), text.encode(), "text/plain; charset=utf-8"
                    else:
                        code, body, content_type = 404, b"not found\n", "text/plain; charset=utf-8"
                except Exception as exc:  # a failing check is an unhealthy answer, not a dead server
                    log.exception("health server: %s failed", path)
                    code, body, content_type = 500, f"{type(exc).__name__}: {exc}\n".encode(), "text/plain"
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                log.debug("health server: " + format, *args)

        self._server = _Server((host, port), Handler)
        self.host = host
        self.port: int = self._server.server_address[1]
        self._thread = RunnableThread(
            f"controller-health-{self.port}", self._serve, owner="health server", on_stop=self._server.shutdown
        )

    def _serve(self) -> None:
        self._server.serve_forever(poll_interval=0.5)

    def start(self) -> None:
        self._thread.start()
        log.info("health server on http://%s:%d (/healthz, /readyz, /metrics)", self.host, self.port)

    def stop(self) -> None:
        if self._thread.is_alive():
            self._thread.stop()  # the server's shutdown(): returns once serve_forever has ended
            self._thread.join()
        self._server.server_close()  # joins the request threads

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def ready(self) -> bool:
        return self._thread.is_alive()

    def threads(self) -> list[threading.Thread]:
        return self._thread.threads()

    @property
    def thread(self) -> threading.Thread:
        return self._thread
