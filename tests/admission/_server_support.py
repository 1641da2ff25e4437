"""A small admission Endpoint for the WebhookServer tests, and HTTPS clients that verify the server's CA."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
from typing import Callable

from cloudcoil_cache.admission import Answer, Exchange, WebhookServer

WAIT = 10.0  # seconds any condition in these tests gets (a bound, never a sleep)


class Metrics:
    """Counts what the server reports about its certificate; tests wait on it."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.reads: list[bool] = []
        self.expiries: list[float] = []

    def certificate_read(self, ok: bool) -> None:
        with self.cond:
            self.reads.append(ok)
            self.cond.notify_all()

    def certificate_expiry(self, timestamp: float) -> None:
        with self.cond:
            self.expiries.append(timestamp)
            self.cond.notify_all()

    def wait_reads(self, n: int, timeout: float = WAIT) -> list[bool]:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.reads) >= n, timeout), self.reads
            return list(self.reads)


class Endpoint:
    """Answers ``/echo`` with what it read, ``/block`` once ``release`` is set, ``/watch`` with whether the
    client disconnected, ``/boom`` by raising; anything else 404. ``start`` waits for ``may_start``."""

    def __init__(self, *, max_body_bytes: int = 64 * 1024) -> None:
        self.max_body_bytes = max_body_bytes
        self.metrics = Metrics()
        self.may_start = threading.Event()
        self.may_start.set()
        self.release = threading.Event()
        self.entered = threading.Event()
        self.disconnect_seen = threading.Event()
        self.not_ready: str | None = None
        self.calls: list[str] = []
        self.served_on: list[str] = []  # the thread that answered each call
        self.lock = threading.Lock()
        self.started = 0
        self.stopped = 0

    def start(self, sync_timeout: float) -> None:
        assert self.may_start.wait(WAIT)
        self.started += 1

    def stop(self, timeout: float) -> None:
        self.stopped += 1

    def readiness(self) -> str | None:
        return self.not_ready

    def answer(self, exchange: Exchange, disconnected: threading.Event) -> Answer:
        with self.lock:
            self.calls.append(exchange.path)
            self.served_on.append(threading.current_thread().name)
        if exchange.path == "/echo":
            body = {
                "method": exchange.method,
                "query": dict(exchange.query),
                "type": exchange.headers.get("content-type"),
                "size": len(exchange.body),
            }
            return Answer(200, json.dumps(body).encode())
        if exchange.path == "/block":
            self.entered.set()
            assert self.release.wait(WAIT)
            return Answer(200, b'{"released": true}')
        if exchange.path == "/watch":
            self.entered.set()
            if disconnected.wait(WAIT):
                self.disconnect_seen.set()
            return Answer(200, b"{}")
        if exchange.path == "/boom":
            raise RuntimeError("secret detail")
        return Answer(404, b'{"message": "no such webhook"}')


def client_context(bundle: bytes) -> ssl.SSLContext:
    """A client context that trusts only ``bundle`` and checks the host name."""
    return ssl.create_default_context(cadata=bundle.decode())


def request(
    server: WebhookServer,
    path: str,
    *,
    method: str = "GET",
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    context: ssl.SSLContext | None = None,
) -> tuple[int, bytes]:
    conn = http.client.HTTPSConnection(
        "127.0.0.1", server.port, context=context or client_context(server.ca_bundle), timeout=WAIT
    )
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def peer_certificate(server: WebhookServer, context: ssl.SSLContext) -> bytes:
    """The DER certificate a new connection is served."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


class LoadClient:
    """``threads`` clients sending ``POST /echo`` until stopped, keep-alive with a new connection every
    ``per_connection`` requests. A reused connection that the server closed while idle is retried once on
    a new connection, as Go's transport (kube-apiserver) does; only a failure of that counts."""

    def __init__(
        self, server: WebhookServer, trust: Callable[[], ssl.SSLContext], threads: int = 8, per_connection: int = 10
    ) -> None:
        self.server = server
        self.trust = trust
        self.per_connection = per_connection
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.done = 0
        self.failures: list[str] = []
        self.progress = threading.Condition(self.lock)
        self.threads = [threading.Thread(target=self._run, name=f"load-{i}") for i in range(threads)]

    def __enter__(self) -> LoadClient:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(WAIT * 3)

    def wait_for(self, n: int, timeout: float = 60.0) -> None:
        """Until ``n`` more requests have been answered."""
        with self.progress:
            target = self.done + n
            assert self.progress.wait_for(lambda: self.done >= target or bool(self.failures), timeout), self.done

    def _connect(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", self.server.port, context=self.trust(), timeout=WAIT)

    def _once(self, conn: http.client.HTTPSConnection) -> None:
        conn.request("POST", "/echo?timeout=5s", body=b'{"kind": "AdmissionReview"}')
        response = conn.getresponse()
        data = response.read()
        if response.status != 200 or b'"size": 27' not in data:
            raise AssertionError(f"bad answer {response.status} {data!r}")

    def _run(self) -> None:
        conn, used = self._connect(), 0
        while not self.stop.is_set():
            if used >= self.per_connection:
                conn.close()
                conn, used = self._connect(), 0
            try:
                try:
                    self._once(conn)
                except (http.client.RemoteDisconnected, ConnectionError, ssl.SSLEOFError, BrokenPipeError):
                    if used == 0:
                        raise
                    conn.close()  # the server closed it while idle: retry on a new connection
                    conn, used = self._connect(), 0
                    self._once(conn)
            except Exception as exc:
                with self.lock:
                    self.failures.append(f"{type(exc).__name__}: {exc}")
                    self.progress.notify_all()
                conn.close()
                conn, used = self._connect(), 0
                continue
            used += 1
            with self.lock:
                self.done += 1
                self.progress.notify_all()
        conn.close()
