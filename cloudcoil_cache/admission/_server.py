"""WebhookServer: the threaded HTTPS/1.1 server in front of an admission ``Endpoint`` (lifecycle, workers, health)."""

from __future__ import annotations

import logging
import os
import select
import socket
import ssl
import threading
import time
from typing import Callable

from cloudcoil_cache._clock import SYSTEM_CLOCK, ClockLike, as_clock
from cloudcoil_cache._runnable import RunnableThread, deadline_after, remaining
from cloudcoil_cache.admission._certs import SelfSignedCertificates
from cloudcoil_cache.admission._exchange import Answer, Endpoint, Exchange
from cloudcoil_cache.admission._handoff import Handoff
from cloudcoil_cache.admission._http1 import Closed, Connection, Refused, plain
from cloudcoil_cache.admission._loop import AcceptLoop
from cloudcoil_cache.admission._pki import covers
from cloudcoil_cache.admission._tls import ServingTLS
from cloudcoil_cache.errors import ConfigError

__all__ = ["WebhookServer"]

log = logging.getLogger("cloudcoil_cache.admission.server")

_READ_TIMEOUT = 30.0  # seconds between the bytes of one request
_IDLE_GRACE = 1.0  # seconds stop() keeps answering requests on idle and new connections (Connection: close)
_JOIN_GRACE = 5.0  # seconds stop() waits for its threads at least, even with shutdown_timeout=0
_HEALTH = ("/healthz", "/readyz")


def _check_number(name: str, value: object, *, minimum: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= minimum:
        raise ConfigError(f"WebhookServer({name}=...) must be a number >= {minimum:g}, got {value!r}")
    return float(value)


class WebhookServer:
    """Serves an admission ``Endpoint`` over HTTPS/1.1 with keep-alive, on threads.

    ``start()`` (or ``with``): load the certificate, ``endpoint.start(sync_timeout)`` (the port stays
    closed until the admission informers are synced), listen, start the accept loop, ``max_concurrency``
    worker threads (they run the TLS handshakes, never the accept loop) and the certificate thread.
    ``GET /healthz`` (200 while running) and ``GET /readyz`` (200 when listening and the endpoint is
    ready, else 500 with why) are answered here; every other request goes to ``endpoint.answer``.

    Certificates: ``certfile``/``keyfile`` are read again every ``cert_check_interval`` seconds; a change
    is used by new handshakes, and a connection made under the old one gets its next answer with
    ``Connection: close`` (the client re-handshakes). Idle connections are not closed then: a client may be
    sending its next request on one at that moment, which kube-apiserver reports as a failed call ("EOF");
    files that cannot be loaded keep the old certificate (``metrics.certificate_read(False)``). Without
    them, ``certificates`` (default ``SelfSignedCertificates(hostnames + (host,))``) makes and renews one
    (its names must cover ``host``: else ``ConfigError``); its CA
    bundle is ``ca_bundle`` and ``add_ca_bundle_listener(fn)`` hears of its changes.

    ``stop()``: close the listener; for up to a second, answer requests arriving on idle keep-alive and
    just-accepted connections (``Connection: close``) before closing the idle ones; let requests in flight
    finish (up to ``shutdown_timeout``), ``endpoint.stop``, join every thread. A stopped server can be
    started again.
    ``service_port`` and ``tls_secret`` are kept from cloudcoil 0.8's ``WebhookServer`` (for manifests).
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        host: str = "127.0.0.1",
        port: int = 9443,
        certfile: str | os.PathLike[str] | None = None,
        keyfile: str | os.PathLike[str] | None = None,
        client_ca: str | os.PathLike[str] | None = None,
        hostnames: tuple[str, ...] | list[str] = ("127.0.0.1", "localhost"),
        certificates: SelfSignedCertificates | None = None,
        cert_check_interval: float = 10.0,
        max_concurrency: int = 64,
        sync_timeout: float = 30.0,
        shutdown_timeout: float = 10.0,
        startup_timeout: float = 30.0,
        ca_bundle: bytes = b"",
        service_port: int = 443,
        tls_secret: str | None = None,
        clock: ClockLike | None = None,
    ) -> None:
        if not hasattr(select, "poll"):
            raise ConfigError("WebhookServer needs select.poll (Linux, macOS, BSD); this platform has none")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ConfigError(f"WebhookServer(port=...) must be a port number (0: any free one), got {port!r}")
        if not isinstance(host, str) or not host:
            raise ConfigError(f"WebhookServer(host=...) must be a host name or address, got {host!r}")
        if (certfile is None) != (keyfile is None):
            raise ConfigError("WebhookServer: give both certfile= and keyfile=, or neither (self-signed)")
        if certfile is not None and certificates is not None:
            raise ConfigError("WebhookServer: give certfile=/keyfile= or certificates=, not both")
        if certificates is not None and not isinstance(certificates, SelfSignedCertificates):
            raise ConfigError(f"WebhookServer(certificates=...) expects SelfSignedCertificates, got {certificates!r}")
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or max_concurrency < 1:
            raise ConfigError(f"WebhookServer(max_concurrency=...) must be an int >= 1, got {max_concurrency!r}")
        if not isinstance(ca_bundle, bytes):
            raise ConfigError(f"WebhookServer(ca_bundle=...) must be PEM bytes, got {type(ca_bundle).__name__}")
        self.endpoint = endpoint
        self.host = host
        self.service_port = service_port
        self.tls_secret = tls_secret
        self.cert_check_interval = _check_number("cert_check_interval", cert_check_interval, minimum=0.001)
        self.sync_timeout = _check_number("sync_timeout", sync_timeout)
        self.shutdown_timeout = _check_number("shutdown_timeout", shutdown_timeout)
        self.startup_timeout = _check_number("startup_timeout", startup_timeout)
        self.max_concurrency = max_concurrency
        self._configured_port = port
        self._clock = as_clock(clock)
        if certfile is None and certificates is None:
            names = (hostnames,) if isinstance(hostnames, str) else tuple(hostnames)
            if not covers(names, host):
                names += (host,)  # the certificate made here names the host listened on, too
            certificates = SelfSignedCertificates(names, clock=self._clock)
        if certificates is not None and not covers(certificates.hostnames, host):
            raise ConfigError(
                f"WebhookServer: the certificate's host names {list(certificates.hostnames)} do not cover "
                f"host {host!r}; add it to hostnames="
            )
        self.certificates = certificates
        self._tls = ServingTLS(
            certfile=os.fspath(certfile) if certfile is not None else None,
            keyfile=os.fspath(keyfile) if keyfile is not None else None,
            client_ca=os.fspath(client_ca) if client_ca is not None else None,
            certificates=certificates,
            ca_bundle=ca_bundle,
            metrics=lambda: self.endpoint.metrics,
        )
        self._lock = threading.Lock()  # the lifecycle and the in-flight count
        self._drained = threading.Condition(self._lock)
        self._running = False
        self._closing = False
        self._port: int | None = None
        self._loop: AcceptLoop | None = None
        self._work: Handoff[Connection | None] = Handoff()  # the most recently idle worker first
        self._threads: list[threading.Thread] = []
        self._in_flight: set[Connection] = set()
        self._open: set[Connection] = set()  # accepted and not closed yet
        self._stop_certs = threading.Event()

    def __repr__(self) -> str:
        return f"<WebhookServer {self.url if self._port else self.host} running={self._running}>"

    # ------------------------------------------------------------- addresses
    @property
    def port(self) -> int:
        """The port listened on (the one picked when ``port=0``, known after ``start()``)."""
        return self._port if self._port is not None else self._configured_port

    @property
    def url(self) -> str:
        """``https://host:port``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"https://{host}:{self.port}"

    @property
    def ca_bundle(self) -> bytes:
        """PEM of the CAs to register as the webhook's caBundle (old+new during a CA rotation)."""
        return self._tls.ca_bundle

    def add_ca_bundle_listener(self, listener: Callable[[bytes], None]) -> None:
        """Call ``listener(bundle)`` (on the certificate thread) whenever ``ca_bundle`` changes."""
        self._tls.add_listener(listener)

    @property
    def running(self) -> bool:
        with self._lock:
            return self._running

    def readiness(self) -> str | None:
        """None when listening and the endpoint is ready; else why not (``/readyz`` says it)."""
        with self._lock:
            listening = self._loop is not None and not self._closing
        if not listening:
            return "webhook server not listening"
        return self.endpoint.readiness()

    def threads(self) -> list[threading.Thread]:
        """Every thread the server runs now (accept loop, workers, certificate thread)."""
        with self._lock:
            return list(self._threads)

    def ready(self) -> bool:
        """Listening, and its endpoint ready (``readiness()`` says why not)."""
        return self.running and self.readiness() is None

    def join(self, timeout: float | None = None) -> None:
        """Wait up to ``timeout`` for the threads of a ``stop()`` under way in another thread (``stop()``
        itself joins them)."""
        deadline = deadline_after(timeout)
        for thread in self.threads():
            thread.join(remaining(deadline))

    # ------------------------------------------------------------- lifecycle
    def start(self) -> WebhookServer:
        with self._lock:
            if self._running:
                raise RuntimeError("WebhookServer.start(): already started (stop() it first)")
            self._running = True
            self._closing = False
        try:
            self._tls.load()
            self.endpoint.start(min(self.sync_timeout, self.startup_timeout))
        except BaseException:
            with self._lock:
                self._running = False
            raise
        try:
            self._listen()
        except BaseException:
            with self._lock:
                self._running = False
            self.endpoint.stop(self.shutdown_timeout)
            raise
        log.info("webhook server listening on %s", self.url)
        return self

    def _listen(self) -> None:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((self.host, self._configured_port))
            listener.listen(128)
            listener.setblocking(False)
        except OSError as exc:
            listener.close()
            raise ConfigError(f"WebhookServer: cannot listen on {self.host}:{self._configured_port}: {exc}") from exc
        self._port = listener.getsockname()[1]
        self._stop_certs.clear()
        self._work = Handoff()
        # Socket deadlines are real time, as the sockets' own timeouts: never the injected clock.
        loop = AcceptLoop(listener, self._dispatch, SYSTEM_CLOCK)
        owner = f"webhook server {self._port}"
        threads: list[threading.Thread] = [RunnableThread(f"webhook-{self._port}-accept", loop.run, owner=owner)]
        threads += [
            RunnableThread(f"webhook-{self._port}-worker-{i}", self._worker, owner=owner)
            for i in range(self.max_concurrency)
        ]
        threads.append(
            RunnableThread(
                f"webhook-{self._port}-certs", self._watch_certificates, owner=owner, stopping=self._stop_certs
            )
        )
        with self._lock:
            self._threads = threads
            self._loop = loop
        for thread in threads:
            thread.start()

    def stop(self) -> None:
        """Close the listener, drain requests in flight (``shutdown_timeout``), stop the endpoint, join threads."""
        with self._lock:
            if not self._running or self._closing:
                return
            loop, threads = self._loop, list(self._threads)
            if loop is None:
                raise RuntimeError("WebhookServer.stop(): start() has not finished yet")
            self._closing = True
        loop.command("unlisten")
        loop.listener_closed.wait(self.shutdown_timeout)
        # A request already sent on an idle keep-alive (or just accepted, or queued) connection is answered, with
        # ``Connection: close``, for up to _IDLE_GRACE: closing them at once fails a client sending on one
        # (kube-apiserver: "use of closed network connection").
        with self._lock:
            # none in flight, queued, or open: parked idle, accepted and not answered yet, or just
            # answered and on its way to be parked (the loop parks it after this check would see it
            # neither in flight nor parked, and close_idle would then close it under its next request)
            self._drained.wait_for(
                # (a connection handed to a worker not awake yet is out of _work but still in _open)
                lambda: not self._in_flight and self._work.empty() and not self._open,
                min(_IDLE_GRACE, self.shutdown_timeout),
            )
        loop.command("close_idle")
        loop.idle_closed.wait(self.shutdown_timeout)
        with self._lock:
            drained = self._drained.wait_for(lambda: not self._in_flight, self.shutdown_timeout)
            stuck = list(self._in_flight)
        if not drained:
            log.warning(
                "webhook server: %d request(s) still in flight after %.1fs: closing them",
                len(stuck),
                self.shutdown_timeout,
            )
            for conn in stuck:
                conn.disconnected.set()
                conn.shutdown()
        for _ in range(self.max_concurrency):
            self._work.put(None)
        self._stop_certs.set()
        deadline = time.monotonic() + max(self.shutdown_timeout, _JOIN_GRACE)
        for thread in threads:
            if not thread.name.endswith("-accept"):  # the loop last: the workers' commands reach it
                thread.join(max(0.0, deadline - time.monotonic()))
        loop.command("exit")
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._close_queued()
        try:
            self.endpoint.stop(self.shutdown_timeout)
        finally:
            alive = [t.name for t in threads if t.is_alive()]
            if alive:
                log.warning("webhook server: threads still running after stop: %s", alive)
            with self._lock:
                self._running = False
                self._closing = False
                self._threads = []
                self._loop = None

    def _close_queued(self) -> None:
        for conn in self._work.take_all():
            if conn is not None:
                conn.close()

    def __enter__(self) -> WebhookServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # ---------------------------------------------------------------- threads
    def _watch_certificates(self) -> None:
        while not self._clock.wait(self._stop_certs, self.cert_check_interval):
            try:
                changed = self._tls.poll()
            except Exception:
                log.exception("webhook server: checking the certificate failed")
                continue
            if changed:  # connections made under the old one close after their next answer (_one_request)
                log.info("webhook server: serving a new certificate")

    def _dispatch(self, conn: Connection) -> None:
        """The accept loop hands a connection to the workers (new, or woken from the loop's poll)."""
        if conn.on_close is None:
            with self._lock:
                self._open.add(conn)
            conn.on_close = self._closed
        self._work.put(conn)

    def _closed(self, conn: Connection) -> None:
        with self._lock:
            self._open.discard(conn)
            self._drained.notify_all()

    def _worker(self) -> None:
        while True:
            conn = self._work.get()
            if conn is None:
                return
            try:
                self._serve(conn)
            except Exception:
                log.exception("webhook server: serving %s failed", conn.peer)
                conn.close()

    def _serve(self, conn: Connection) -> None:
        loop = self._loop
        if not conn.tls:
            # While stopping, a connection accepted before the listener closed is still served
            # (its answer says Connection: close); only once stopped is it closed unanswered.
            if loop is None:
                conn.close()
                return
            try:  # one step, never blocking: a client that stalls its handshake holds no worker
                conn.wants = conn.handshake_step(self._tls.context, self._tls.generation)
            except (OSError, ssl.SSLError, ValueError) as exc:
                log.debug("webhook server: TLS handshake with %s failed: %s", conn.peer, type(exc).__name__)
                conn.close()
                return
            if conn.wants or not conn.buffered():
                conn.wants = conn.wants or select.POLLIN
                loop.command("park", conn)  # the handshake's next bytes, or the first request, wake a worker
                return
        # A keep-alive answer is kept to even when a stop begins right after it (the client may
        # send its next request at once): the connection is parked as an idle one, whose next
        # request the stop answers with Connection: close (or closes it after _IDLE_GRACE).
        while self._one_request(conn, loop):
            if loop is None:
                break
            if not conn.buffered():
                conn.wants = select.POLLIN
                loop.command("park", conn)  # wait for the next request without holding a worker
                return
        conn.close()

    def _is_closing(self) -> bool:
        with self._lock:
            return self._closing

    def _one_request(self, conn: Connection, loop: AcceptLoop | None) -> bool:
        """Read, answer and write one request; whether the connection stays open."""
        with self._lock:
            self._in_flight.add(conn)
        try:
            try:
                exchange, keep_alive = conn.read_request(self.endpoint.max_body_bytes, _READ_TIMEOUT)
            except Closed:
                return False
            except Refused as refused:
                conn.send(refused.answer, keep_alive=False)
                return False
            answer = self._answer(exchange, conn, loop)
            keep_alive = keep_alive and not self._is_closing() and conn.generation == self._tls.generation
            sent = conn.send(answer, keep_alive=keep_alive, head_only=exchange.method == "HEAD")
            return sent and keep_alive
        finally:
            with self._lock:
                self._in_flight.discard(conn)
                self._drained.notify_all()

    def _answer(self, exchange: Exchange, conn: Connection, loop: AcceptLoop | None) -> Answer:
        if exchange.path in _HEALTH and exchange.method in ("GET", "HEAD"):
            return self._health(exchange.path)
        disconnected = conn.disconnected = threading.Event()  # one per request: a handler may keep it
        if loop is not None:
            loop.command("watch", conn)
        try:
            return self.endpoint.answer(exchange, disconnected)
        except Exception as exc:
            log.exception("webhook server: the endpoint failed on %s %s", exchange.method, exchange.path)
            return Answer(500, b'{"message": "Admission webhook failed: ' + type(exc).__name__.encode() + b'"}')
        finally:
            if loop is not None:
                loop.command("unwatch", conn)

    def _health(self, path: str) -> Answer:
        if path == "/healthz":
            return plain(200, "ok\n")
        try:
            why = self.readiness()
        except Exception as exc:
            log.exception("webhook server: readiness failed")
            why = f"readiness failed: {type(exc).__name__}"
        return plain(200, "ok\n") if why is None else plain(500, why.rstrip("\n") + "\n")
