"""Manager: runs controllers (warm informers, workers while leading), webhooks, leader election, health, signals."""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any

from cloudcoil_cache.admission import AdmissionMetrics, WebhookServer
from cloudcoil_cache.caching import InformerState
from cloudcoil_cache.client import Config, current_config
from cloudcoil_cache.controller._controller import Controller
from cloudcoil_cache.controller._health import HealthServer
from cloudcoil_cache.controller._leader import LeaderElection
from cloudcoil_cache.controller._metrics import ManagerMetrics, metrics_available

__all__ = ["Manager"]

log = logging.getLogger("cloudcoil_cache.controller.manager")


class Manager:
    """Runs controllers and admission webhooks in one process.

    ``start()``: start the health server (``/readyz`` false until everything below is ready), start every
    controller's informers and wait for their sync (a failure stops what was started and raises), start
    ``webhooks`` (a ``WebhookServer``: its admission informers synced, then it listens), then start the
    workers - at once, or while this replica holds the Lease of ``leader_election``. Standby replicas keep
    their informers synced, so a takeover reconciles at once; a replica that loses the Lease stops its
    workers and campaigns again. Webhooks serve on every replica, leader or not, and losing the Lease does
    not stop them; a Manager may have webhooks and no controllers. ``/readyz`` includes the webhook's
    readiness, never the leadership.

    ``stop()``, in order: no new leadership, stop taking keys and let reconciles in flight finish (up to
    each controller's ``shutdown_timeout``), close the webhook server (drained), stop the informers,
    release the Lease, stop the health server; every thread is joined. ``run(stop=None)`` = start, wait for ``stop`` (a
    ``threading.Event``) or SIGTERM/SIGINT (handlers installed only in the main thread, restored after),
    stop. Also a context manager.

    ``health_port`` (0 picks a free one; see ``health_port`` after start) serves ``/healthz``,
    ``/readyz`` and ``/metrics`` on ``health_host`` (loopback by default); metrics need the
    ``metrics`` extra (``prometheus_client``).
    """

    def __init__(
        self,
        *controllers: Controller,
        webhooks: WebhookServer | None = None,
        config: Config | None = None,
        leader_election: LeaderElection | None = None,
        health_port: int | None = None,
        health_host: str = "127.0.0.1",
        sync_timeout: float = 30.0,
    ) -> None:
        if webhooks is not None and not isinstance(webhooks, WebhookServer):
            raise TypeError(f"Manager(webhooks=...) expects a WebhookServer, got {type(webhooks).__name__}")
        if not controllers and webhooks is None:
            raise ValueError("Manager() needs at least one Controller or webhooks=WebhookServer(...)")
        names = [c.name for c in controllers]
        for c in controllers:
            if not isinstance(c, Controller):
                raise TypeError(f"Manager() takes Controllers, got {type(c).__name__}")
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(
                f"Manager(): controller names must be unique; repeated: {duplicates} (give Controller(name=...))"
            )
        if leader_election is not None and not isinstance(leader_election, LeaderElection):
            raise TypeError(
                f"Manager(leader_election=...) expects a LeaderElection, got {type(leader_election).__name__}"
            )
        if health_port is not None and (
            isinstance(health_port, bool) or not isinstance(health_port, int) or not 0 <= health_port <= 65535
        ):
            raise ValueError(f"Manager(health_port=...) must be a port number (0: any free one), got {health_port!r}")
        self.controllers = list(controllers)
        self.webhooks = webhooks
        self.config = config
        self.leader_election = leader_election
        self.health_host = health_host
        self._health_port = health_port
        self.sync_timeout = sync_timeout
        self.metrics: ManagerMetrics | None = None
        self._health: HealthServer | None = None
        self._lock = threading.Lock()  # orders start/stop and leadership changes of the workers
        # held by a start and by a stop for their whole length: a stop from another thread waits for a
        # start in progress (which gives up at its next step) and for another stop, then finds all stopped
        self._lifecycle = threading.Lock()
        self._started = False
        self._closing = False
        self._run_stop: threading.Event | None = None  # the event run() waits on; stop() sets it
        self._stop_requested = threading.Event()  # set by stop(): a start waiting for a sync gives up

    def __repr__(self) -> str:
        webhooks = f" webhooks={self.webhooks.url}" if self.webhooks is not None else ""
        return f"<Manager {[c.name for c in self.controllers]}{webhooks} started={self._started}>"

    @property
    def health_port(self) -> int | None:
        """The port the health server listens on (known after ``start()`` when 0 was given)."""
        return self._health.port if self._health is not None else self._health_port

    # ------------------------------------------------------------ lifecycle
    def start(self) -> Manager:
        """Start everything in order (see the class docstring). A ``stop()`` from another thread while
        it runs makes it give up at its next step, or while it waits for the informers' sync (what it
        started is stopped by that ``stop()``)."""
        with self._lock:
            if self._started:
                raise RuntimeError("Manager.start(): already started")
            self._started = True
            self._closing = False
            self._stop_requested.clear()
        with self._lifecycle:
            with self._lock:
                if not self._started:
                    return self  # a stop() from another thread came first: nothing is started
            try:
                self._start_steps()
            except BaseException:
                self._shutdown_locked()
                raise
        return self

    def _start_steps(self) -> None:
        config = self.config or current_config()
        self.config = config
        if self._health_port is not None:
            if metrics_available():
                self.metrics = ManagerMetrics(self)
            else:
                log.warning("Manager: /metrics needs prometheus_client: pip install 'cloudcoil_cache[metrics]'")
            self._health = HealthServer(
                self.health_host,
                self._health_port,
                healthy=self.healthy,
                ready=self.ready,
                metrics=self._render_metrics,
            )
            self._health.start()
        # the health server first: /healthz answers (a liveness probe passes) and /readyz says what
        # is not ready yet while the informers sync
        for controller in self.controllers:
            if self._closing:
                return  # stop() was called meanwhile: it stops what was started
            controller._start_informers(config, sync_timeout=self.sync_timeout, cancel=self._stop_requested)
        if self._closing:
            return
        if self.webhooks is not None:
            self.webhooks.start()
        if self._closing:
            return
        if self.leader_election is not None:
            self.leader_election._start(config, started=self._lead, stopped=self._step_down)
        else:
            self._lead()

    def stop(self) -> None:
        """Stop everything in order (see the class docstring); idempotent, from any thread. When it
        returns everything is stopped and joined (a stop already under way in another thread, or a
        start in progress, is waited for), and ``run()`` returns."""
        with self._lock:
            run_stop = self._run_stop
            if self._started:
                self._closing = True  # a start in progress gives up at its next step
                self._stop_requested.set()  # or while it waits for the informers' sync
        if run_stop is not None:
            run_stop.set()  # run() returns (after its own stop() finds everything stopped)
        with self._lifecycle:
            self._shutdown_locked()

    def _shutdown_locked(self) -> None:
        """Stop what runs (under ``_lifecycle``); nothing when nothing was started."""
        with self._lock:
            if not self._started:
                return
            self._closing = True
        election = self.leader_election
        if election is not None:
            election._begin_shutdown()
        self._stop_workers()
        if self.webhooks is not None:
            self.webhooks.stop()
        for controller in self.controllers:
            controller._stop_informers()
        if election is not None and election.threads():
            election._stop(release=True)
        if self._health is not None:
            self._health.stop()
            self._health = None
        with self._lock:
            self._started = False

    def _lead(self) -> None:
        """Leadership gained (or no election): start every controller's workers."""
        with self._lock:
            if self._closing:
                return
            for controller in self.controllers:
                try:
                    controller._start_workers()
                except Exception:
                    log.exception("Manager: starting the workers of controller %r failed", controller.name)

    def _step_down(self) -> None:
        """Leadership lost: fence the reconciles in flight (their writes raise ``LeadershipLost``), then
        stop the workers (bounded by each controller's shutdown_timeout)."""
        for controller in self.controllers:
            controller._leadership_lost()
        self._stop_workers()

    def _stop_workers(self) -> None:
        with self._lock:
            controllers = list(self.controllers)
            threads = [
                threading.Thread(target=c._stop_workers, name=f"controller-{c.name}-stop", daemon=True)
                for c in controllers
                if c.running
            ]
            for thread in threads:  # in parallel: each waits for its own reconciles in flight
                thread.start()
            for thread in threads:
                thread.join()

    def __enter__(self) -> Manager:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def run(self, stop: threading.Event | None = None) -> None:
        """Start, block until ``stop`` is set, ``stop()`` is called (from any thread: it also sets
        ``stop``) or SIGTERM/SIGINT arrives, then stop gracefully; returns once everything is stopped."""
        stop_event = stop if stop is not None else threading.Event()
        with self._lock:
            if self._run_stop is not None:
                raise RuntimeError("Manager.run(): already running")
            self._run_stop = stop_event
        signalled = threading.Event()
        previous: dict[int, Any] = {}
        try:
            if threading.current_thread() is threading.main_thread():

                def on_signal(signum: int, frame: Any) -> None:
                    log.info("Manager: %s received: shutting down", signal.Signals(signum).name)
                    signalled.set()
                    stop_event.set()

                for sig in (signal.SIGTERM, signal.SIGINT):
                    previous[sig] = signal.signal(sig, on_signal)
            self.start()
            try:
                stop_event.wait()  # interrupted by signals: their handlers run in this (main) thread
            finally:
                self.stop()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            with self._lock:
                self._run_stop = None

    # -------------------------------------------------------------- health
    def threads(self) -> list[threading.Thread]:
        """Every thread the manager runs now (workers, loops, election, health server)."""
        threads = [t for c in self.controllers for t in c.threads()]
        if self.webhooks is not None:
            threads += self.webhooks.threads()
        if self.leader_election is not None:
            threads += self.leader_election.threads()
        if self._health is not None:
            threads.append(self._health.thread)
        return threads

    def healthy(self) -> tuple[bool, str]:
        """/healthz: every thread that should run is alive."""
        dead = [t.name for t in self.threads() if t.ident is not None and not t.is_alive()]  # (started ones)
        if dead:
            return False, "dead threads: " + ", ".join(dead) + "\n"
        return True, "ok\n"

    def ready(self) -> tuple[bool, str]:
        """/readyz: every informer synced and servable, the webhooks listening and ready (a standby replica
        is ready: leadership is never part of it)."""
        problems = []
        if self.webhooks is not None:
            why = self.webhooks.readiness()
            if why is not None:
                problems.append(f"webhooks: {why.rstrip()}")
        for controller in self.controllers:
            sources = controller.sources
            if not sources:
                problems.append(f"{controller.name}: not started")
            for source in sources.values():
                status = source.view.status()
                state = getattr(status, "state", None)
                if not status.synced:
                    problems.append(f"{controller.name}: {source.scope.describe()} not synced")
                elif state in (InformerState.STALE, InformerState.FAILING):
                    problems.append(f"{controller.name}: {source.scope.describe()} {state}: {status.last_error}")
        if problems:
            return False, "\n".join(problems) + "\n"
        return True, "ok\n"

    def informer_statuses(self) -> list[Any]:
        """The status of every informer the controllers read (each informer once)."""
        seen: set[tuple[Any, ...]] = set()
        statuses = []
        for controller in self.controllers:
            for source in controller.sources.values():
                status = source.view.status()
                key = (id(source.config.cache), status.kind, status.namespace, status.label_selector)
                if key not in seen:
                    seen.add(key)
                    statuses.append(status)
        return statuses

    def _render_metrics(self) -> tuple[int, bytes, str]:
        if self.metrics is None:
            return 501, b"metrics need prometheus_client: pip install 'cloudcoil_cache[metrics]'\n", "text/plain"
        body, content_type = self.metrics.render()
        webhook_metrics = self.webhooks.endpoint.metrics if self.webhooks is not None else None
        if isinstance(webhook_metrics, AdmissionMetrics):  # the webhooks' series on the same /metrics
            more, _ = webhook_metrics.render()
            body += more
        return 200, body, content_type
