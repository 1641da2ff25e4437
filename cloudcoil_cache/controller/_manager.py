"""Manager: runs controllers (warm informers, workers while leading), webhooks, leader election, health, signals."""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any, Callable

from cloudcoil_cache._runnable import Group, RunnableThread, Step
from cloudcoil_cache.admission import AdmissionMetrics, WebhookServer
from cloudcoil_cache.caching import InformerState
from cloudcoil_cache.client import Config, current_config
from cloudcoil_cache.controller._controller import Controller
from cloudcoil_cache.controller._health import HealthServer
from cloudcoil_cache.controller._leader import LeaderElection
from cloudcoil_cache.controller._metrics import ManagerMetrics, metrics_available
from cloudcoil_cache.controller._sharding import Ring

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
    release the Lease, stop the health server; every thread is joined. The Manager is a run group
    (``cloudcoil_cache._runnable.Group``): its members start in that order's reverse and stop against
    one deadline, ``stop_timeout`` (None: each step's own bound). ``run(stop=None)`` = start, wait for ``stop`` (a
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
        stop_timeout: float | None = None,
        sharding: Ring | None = None,
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
        self.sharding: Ring | None = _ring_of(controllers, sharding, leader_election)
        self.controllers = list(controllers)
        self.webhooks = webhooks
        self.config = config
        self.leader_election = leader_election
        self.health_host = health_host
        self._health_port = health_port
        self.sync_timeout = sync_timeout
        self.stop_timeout = stop_timeout
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
        self._run_group: Group | None = None  # what start() started, stopped in reverse by stop()

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
                config = self.config or current_config()
                self.config = config
                group = self._group(config)
                with self._lock:
                    self._run_group = group
                group.start()  # a member that fails: those before it are stopped, in reverse
            except BaseException:
                with self._lock:
                    self._run_group = None
                    self._started = False
                raise
        return self

    def _group(self, config: Config) -> Group:
        """The manager's run group, in start order: the health server first (``/healthz`` answers and
        ``/readyz`` says what is not ready yet while the informers sync), the Lease's release, every
        controller's informers (synced), the webhooks, then leadership (the workers while leading).
        Stopped in reverse: no new leadership and the workers drained, the webhooks drained, the
        informers stopped, the Lease released, the health server stopped."""
        group = Group("manager")
        if self._health_port is not None:
            group.add(
                Step("health server", start=self._start_health, stop=self._stop_health, threads=self._health_threads)
            )
        ring = self.sharding
        election: LeaderElection | None = ring.lease if ring is not None else self.leader_election
        if election is not None:
            group.add(
                Step(
                    f"lease {election.name}",
                    stop=lambda: election._stop(release=True) if election.threads() else None,
                    threads=election.threads,
                )
            )
        for controller in self.controllers:
            group.add(
                Step(
                    f"controller {controller.name} informers",
                    start=self._unless_closing(self._informers_starter(controller, config)),
                    stop=controller.run.stop_informers,
                    ready=controller.run.synced.is_set,
                )
            )
        if ring is not None:  # its members and the sharder (after the informers: their namespaces are known)
            group.add(
                Step(
                    f"ring {ring.name}",
                    start=self._unless_closing(lambda: ring._start(config, self._stop_requested, self.sync_timeout)),
                    stop=ring._stop,
                    threads=ring.threads,
                )
            )
        webhooks = self.webhooks
        if webhooks is not None:
            group.add(
                Step(
                    "webhooks",
                    start=self._unless_closing(webhooks.start),
                    stop=webhooks.stop,
                    ready=lambda: webhooks.readiness() is None,
                    threads=webhooks.threads,
                )
            )
        if election is not None:
            lead = lambda: election._start(config, started=self._lead, stopped=self._step_down)  # noqa: E731
            step_down: Callable[[], object] = election._begin_shutdown
        else:
            lead, step_down = self._lead, lambda: None
        group.add(
            Step(
                "leadership",
                start=self._unless_closing(lead),
                stop=step_down,
                join=self._stop_workers,
                threads=lambda: [t for c in self.controllers for t in c.threads()],
            )
        )
        return group

    def _informers_starter(self, controller: Controller, config: Config) -> Callable[[], None]:
        def start() -> None:
            controller.run.start_informers(config, sync_timeout=self.sync_timeout, cancel=self._stop_requested)

        return start

    def _unless_closing(self, start: Callable[[], object]) -> Callable[[], None]:
        """``start``, unless a ``stop()`` from another thread came meanwhile (it stops what was started)."""

        def step() -> None:
            if not self._closing:
                start()

        return step

    def _start_health(self) -> None:
        assert self._health_port is not None
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

    def _stop_health(self) -> None:
        if self._health is not None:
            self._health.stop()
            self._health = None

    def _health_threads(self) -> list[threading.Thread]:
        health = self._health
        return health.threads() if health is not None else []

    def stop(self, timeout: float | None = None) -> None:
        """Stop everything in order (see the class docstring); idempotent, from any thread. When it
        returns everything is stopped and joined (a stop already under way in another thread, or a
        start in progress, is waited for), and ``run()`` returns.

        ``timeout`` (default: the Manager's ``stop_timeout``; None: no limit but each controller's
        ``shutdown_timeout``) is the one deadline of the whole stop: each step in turn gets what
        is left of it (a controller's workers at most their ``shutdown_timeout``)."""
        with self._lock:
            run_stop = self._run_stop
            if self._started:
                self._closing = True  # a start in progress gives up at its next step
                self._stop_requested.set()  # or while it waits for the informers' sync
        if run_stop is not None:
            run_stop.set()  # run() returns (after its own stop() finds everything stopped)
        with self._lifecycle:
            self._shutdown_locked(self.stop_timeout if timeout is None else timeout)

    def _shutdown_locked(self, timeout: float | None) -> None:
        """Stop what runs (under ``_lifecycle``): the group in reverse, against one deadline."""
        with self._lock:
            if not self._started:
                return
            self._closing = True
            group, self._run_group = self._run_group, None
        if group is not None:
            group.close(timeout)
        with self._lock:
            self._started = False

    def _lead(self) -> None:
        """Leadership gained (or no election): start every controller's workers."""
        with self._lock:
            if self._closing:
                return
            for controller in self.controllers:
                try:
                    controller.run.start_workers()
                except Exception:
                    log.exception("Manager: starting the workers of controller %r failed", controller.name)

    def _step_down(self) -> None:
        """Leadership lost: fence the reconciles in flight (their writes raise ``LeadershipLost``), then
        stop the workers (bounded by each controller's shutdown_timeout)."""
        for controller in self.controllers:
            controller.run.leadership_lost()
        self._stop_workers()

    def _stop_workers(self, timeout: float | None = None) -> None:
        """Every controller's workers, in parallel (each waits for its own reconciles in flight), each
        within its ``shutdown_timeout`` and ``timeout``."""
        with self._lock:
            controllers = [c for c in self.controllers if c.running]
            threads = [
                RunnableThread(
                    f"controller-{c.name}-stop",
                    c.run.stop_workers,
                    c.shutdown_timeout if timeout is None else min(c.shutdown_timeout, timeout),
                    owner="manager",
                )
                for c in controllers
            ]
            for thread in threads:
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
        if self.sharding is not None:
            threads += self.sharding.lease.threads() + self.sharding.threads()
        threads += self._health_threads()
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


def _ring_of(controllers: tuple[Controller, ...], sharding: Any, leader_election: Any) -> Ring | None:
    """The one ring the Manager's controllers are sharded by (``sharding`` applied to all of them), else None."""
    if sharding is not None and not isinstance(sharding, Ring):
        raise TypeError(f"Manager(sharding=...) expects a Ring, got {type(sharding).__name__}")
    if sharding is not None:
        for c in controllers:
            c._set_sharding(sharding)
    rings = list(dict.fromkeys(c.sharding for c in controllers if c.sharding is not None))
    if len(rings) > 1:
        raise ValueError(
            f"Manager(): its controllers are sharded by several rings ({[r.name for r in rings]}): one ring per "
            "Manager (each replica holds one shard Lease)"
        )
    if rings and leader_election is not None:
        raise ValueError(
            "Manager(): sharding (active-active replicas) and leader_election (one active replica) exclude each "
            "other: give one"
        )
    unsharded = [c.name for c in controllers if c.sharding is None]
    if rings and unsharded:
        raise ValueError(
            f"Manager(): controllers {unsharded} are not sharded while others are (their workers would run only "
            "while this replica holds its shard Lease): give Manager(sharding=ring)"
        )
    return rings[0] if rings else None
