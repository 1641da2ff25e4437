"""``demo``: an embedded fake cluster with churn and injected faults, an informer cache on it, and a live view."""

from __future__ import annotations

import collections
import json
import random
import sys
import threading
import time
from typing import Any, Callable, Deque, TextIO

from cloudcoil_cache._runnable import RunnableThread
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.cli._cluster import FAKE_NAMESPACES, fake_cluster
from cloudcoil_cache.cli._console import interactive, rich_available
from cloudcoil_cache.cli._flags import check_count, check_rate, check_seconds
from cloudcoil_cache.cli._signals import stop_on_signals
from cloudcoil_cache.cli._snapshot import Snapshot
from cloudcoil_cache.cli._status import informer_state
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod

__all__ = ["DemoState", "Snapshot", "run_demo"]

_FRAME = 0.25  # seconds between two frames of the live view
_WINDOW = 3.0  # seconds over which events/s is averaged
_RECOVERY_WAIT = 20.0  # at the end, the longest wait for a fault in progress to recover before the final check


class DemoState:
    """What the handlers, the churn and the fault threads report; every method is thread-safe."""

    def __init__(self, seeded: set[str]) -> None:
        self._lock = threading.Lock()
        self._seeded = seeded
        self.counts = {"initial": 0, "added": 0, "modified": 0, "deleted": 0}
        self._times: Deque[float] = collections.deque()
        self.recent: Deque[tuple[float, str, str, str]] = collections.deque(maxlen=200)
        self.notes: Deque[tuple[float, str, str, str]] = collections.deque(maxlen=50)
        self.faults = 0

    def event(self, kind: str, pod: Any, detail: str = "") -> None:
        key = f"{pod.namespace}/{pod.name}"
        now = time.monotonic()
        with self._lock:
            if kind == "added" and key in self._seeded:
                self._seeded.discard(key)  # the initial list, delivered once: counted, not streamed
                self.counts["initial"] += 1
                return
            self.counts[kind] += 1
            self._times.append(now)
            self.recent.append((now, kind.upper(), key, detail))

    def note(self, kind: str, text: str) -> None:
        with self._lock:
            if kind == "FAULT":
                self.faults += 1
            self.notes.append((time.monotonic(), kind, "", text))

    def rate(self) -> float:
        now = time.monotonic()
        with self._lock:
            while self._times and self._times[0] < now - _WINDOW:
                self._times.popleft()
            return len(self._times) / _WINDOW

    def snapshot_events(
        self, n: int
    ) -> tuple[dict[str, int], list[tuple[float, str, str, str]], list[tuple[float, str, str, str]], int]:
        with self._lock:
            return dict(self.counts), list(self.recent)[-n:], list(self.notes), self.faults


def _update_detail(old: Any, new: Any) -> str:
    old_phase, new_phase = old.status.phase, new.status.phase
    if old_phase != new_phase:
        return f"phase {old_phase} → {new_phase}"
    old_labels, new_labels = dict(old.metadata.labels or {}), dict(new.metadata.labels or {})
    changed = sorted(k for k in set(old_labels) | set(new_labels) if old_labels.get(k) != new_labels.get(k))
    if changed:
        return "labels " + ", ".join(f"{k}={new_labels.get(k, '-')}" for k in changed)
    if old.resource_version == new.resource_version:
        return "resync (same object re-delivered)"
    return f"status written (phase {new_phase})"


class Churn(RunnableThread):
    """Creates, updates and deletes pods on the server at ``rate`` changes per second until stopped."""

    def __init__(self, server: FakeAPIServer, keys: list[str], rate: float, stop: threading.Event) -> None:
        super().__init__("cloudcoil-demo-churn", owner="demo", stopping=stop)
        self._server = server
        self._alive: list[tuple[str, str]] = []
        for key in keys:
            namespace, _, name = key.partition("/")
            self._alive.append((namespace, name))
        self.population = len(self._alive)  # pods on the server (read by the view)
        self._rate = rate
        self._stop_event = stop
        self._random = random.Random(7)
        self._created = 0
        self.error: BaseException | None = None

    def run_body(self) -> None:
        if self._rate <= 0:
            return
        period = 0.05
        due = 0.0
        try:
            while not self._stop_event.wait(period):
                due += self._rate * period
                while due >= 1 and not self._stop_event.is_set():
                    due -= 1
                    self._change()
        except BaseException as exc:  # reported by the view; the demo goes on without churn
            self.error = exc

    def _change(self) -> None:
        roll = self._random.random()
        if roll < 0.3 or len(self._alive) < 10:
            self._created += 1
            namespace = FAKE_NAMESPACES[self._created % len(FAKE_NAMESPACES)]
            name = f"demo-{self._created:05d}"
            self._server.create(
                "pods", make_pod(name, namespace, index=50_000 + self._created, phase="Pending"), namespace
            )
            self._alive.append((namespace, name))
            self.population = len(self._alive)
        elif roll < 0.7:
            namespace, name = self._random.choice(self._alive)
            if self._random.random() < 0.5:
                phase = self._random.choice(("Running", "Pending", "Succeeded", "Failed"))
                self._server.patch("pods", name, {"status": {"phase": phase}}, namespace, subresource="status")
            else:
                self._server.patch(
                    "pods", name, {"metadata": {"labels": {"demo/revision": str(self._created)}}}, namespace
                )
        else:
            index = self._random.randrange(len(self._alive))
            namespace, name = self._alive[index]
            self._alive[index] = self._alive[-1]
            self._alive.pop()
            self._server.delete("pods", name, namespace)
            self.population = len(self._alive)


class Faults(RunnableThread):
    """Every ``every`` seconds: drop the watch, force a 410 relist, or fail rewatches with 503s; reports recovery.

    ``ends_at``: when the demo ends (``time.monotonic()``; None: at Ctrl-C); no fault is injected
    that could not recover by then, so the demo never ends on one. ``idle`` is set while no fault
    waits for its recovery.
    """

    def __init__(
        self,
        server: FakeAPIServer,
        config: Config,
        state: DemoState,
        every: float,
        stop: threading.Event,
        ends_at: float | None = None,
    ) -> None:
        super().__init__("cloudcoil-demo-faults", owner="demo")
        self._server = server
        self._config = config
        self._state = state
        self._every = every
        self._stop_event = stop
        self._ends_at = ends_at
        self.idle = threading.Event()
        self.idle.set()

    def _informer(self) -> Any:
        assert self._config.cache is not None
        infos = self._config.cache.status().informers
        return infos[0] if infos else None

    def run_body(self) -> None:
        if self._every <= 0:
            return
        # (what, how, the seconds its recovery may take: backoff steps of 0.8 and 1.6 s, jitter [d, 2d))
        faults: list[tuple[str, Callable[[], None], float]] = [
            ("watch connection dropped", self._drop, 1.0),
            (
                "watch stalled, history compacted, watch dropped: the rewatch gets 410 Gone, the informer relists",
                self._gone,
                2.5,
            ),
            ("watch dropped and the next 2 watch requests answered 503: retries with backoff", self._unavailable, 5.5),
        ]
        index = 0
        while not self._stop_event.wait(min(self._every, threading.TIMEOUT_MAX)):  # --fault-every
            what, inject, needs = faults[index % len(faults)]
            if self._ends_at is not None and time.monotonic() + needs > self._ends_at:
                return  # too near the end to see it recover: the demo ends on a recovered informer
            index += 1
            before = self._informer()
            watches = self._watch_requests()
            started = time.monotonic()
            self.idle.clear()
            try:
                inject()
                self._state.note("FAULT", what)
                self._await_recovery(started, before.relist_count if before else 0, watches)
            finally:
                self.idle.set()

    def _drop(self) -> None:
        self._server.drop_watches()

    def _gone(self) -> None:
        # Changes made while the watch is stalled never reach the informer; compacting them away makes
        # its resume point too old: the rewatch is answered 410 Gone and the informer lists again.
        self._server.stall_watches()
        self._stop_event.wait(0.5)
        self._server.compact()
        self._server.drop_watches()
        self._server.resume_watches()

    def _unavailable(self) -> None:
        self._server.fail_next(2, 503, verb="watch")
        self._server.drop_watches()

    def _watch_requests(self) -> int:
        return sum(1 for r in self._server.requests if r.verb == "watch")

    def _await_recovery(self, started: float, relists_before: int, watches_before: int) -> None:
        """Note the recovery (when the informer is current on a new watch) or, while it is slow, that it is."""
        slow = False
        while not self._stop_event.wait(0.05):
            info = self._informer()
            if info is None:
                return
            rewatched = self._watch_requests() > watches_before and self._server.active_watches >= 1
            if rewatched and informer_state(info) == "current" and info.synced:
                relisted = info.relist_count - relists_before
                self._state.note(
                    "RECOVERED",
                    f"watching again after {(time.monotonic() - started) * 1000:.0f} ms"
                    + (f" ({relisted} relist)" if relisted else " (no relist needed)"),
                )
                return
            if not slow and time.monotonic() - started > max(self._every, 5.0):
                slow = True  # said once; the recovery is still noted when it comes
                self._state.note(
                    "WAITING", "the informer has not recovered yet; reads stay served while within max_staleness"
                )


class _Reads:
    """Times a cached ``Pod.list`` per frame: the reads a web app would make, served from memory."""

    def __init__(self) -> None:
        self.micros = 0.0
        self.count = 0

    def measure(self) -> None:
        t0 = time.perf_counter()
        found = Pod.list(namespace="team-a")
        self.micros = (time.perf_counter() - t0) * 1e6
        self.count = len(found.items)


def _stop_threads(stop: threading.Event, threads: list[threading.Thread]) -> None:
    stop.set()
    for thread in threads:
        thread.join(10)


def _wait_until(stop_after: float, pred: Callable[[], bool]) -> bool:
    waiter = threading.Event()
    deadline = time.monotonic() + stop_after
    while not pred():
        if time.monotonic() > deadline:
            return False
        waiter.wait(0.05)
    return True


def run_demo(args: Any, out: TextIO | None = None) -> int:
    """Run the demo; returns 0 when the cache matched the server at the end and every thread was joined."""
    out = out or sys.stdout
    check_count("--pods", args.pods)
    check_seconds("--duration", args.duration, zero=True)
    check_rate("--rate", args.rate)
    check_seconds("--fault-every", args.fault_every, zero=True)
    live = interactive(out) and not args.plain
    if live and not rich_available():
        print(
            "note: install the 'cli' extra (pip install 'cloudcoil_cache[cli]') for the live view; "
            "plain output follows",
            file=sys.stderr,
        )
        live = False
    from cloudcoil_cache.cli._live import LiveView, PlainView

    before_threads = set(threading.enumerate())
    stop = threading.Event()
    finished = threading.Event()
    with stop_on_signals(finished), fake_cluster(args.pods, bookmark_interval=1.0) as (server, kubeconfig):
        seeded = {f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in server.list("pods")}
        total_bytes = sum(len(json.dumps(p, separators=(",", ":"))) for p in server.list("pods"))
        state = DemoState(set(seeded))
        config = Config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod], wait_for_sync=False, resync_period=None))
        assert config.cache is not None
        informer = config.cache.get_informer(Pod, sync=True)
        assert informer is not None  # None only for a disabled cache
        informer.on_add(lambda pod: state.event("added", pod))
        informer.on_update(lambda old, new: state.event("modified", new, _update_detail(old, new)))
        informer.on_delete(lambda pod: state.event("deleted", pod))
        view = LiveView(out, server.url, args) if live else PlainView(out, server.url, args)
        churn = Churn(server, sorted(seeded), args.rate, stop)
        reads = _Reads()
        started = time.monotonic()
        faults = Faults(
            server, config, state, args.fault_every, stop, started + args.duration if args.duration else None
        )
        waited_note = False
        load_seconds: float | None = None
        lists_at_sync = 0
        try:
            with view, config:  # wait_for_sync=False: the scope starts the informer; the view shows the list
                while True:
                    elapsed = time.monotonic() - started
                    synced = informer.has_synced()
                    lists = sum(1 for r in server.requests if r.verb == "list")
                    if synced and load_seconds is None:
                        load_seconds = elapsed
                        lists_at_sync = lists
                        churn.start()
                        faults.start()
                    if synced:
                        reads.measure()
                    over = bool(args.duration) and elapsed >= args.duration
                    # Time is up: the last screen shows the recovery of a fault still in progress (bounded).
                    done = finished.is_set() or (
                        over and (faults.idle.is_set() or elapsed >= args.duration + _RECOVERY_WAIT)
                    )
                    if over and not done and not waited_note:
                        waited_note = True
                        state.note("WAITING", "time is up: waiting for the informer to recover before the final check")
                    snap = _snapshot(
                        elapsed,
                        args.duration,
                        synced,
                        lists,
                        lists_at_sync,
                        load_seconds,
                        churn.population,
                        config,
                        state,
                        reads,
                        len(seeded),
                        total_bytes,
                        view.event_lines,
                        final=done,
                    )
                    view.frame(snap)
                    if done:
                        break
                    finished.wait(_FRAME)
                _stop_threads(stop, [t for t in (churn, faults) if t.ident is not None])
                agreed = _wait_until(10, lambda: _names(server) == {f"{p.namespace}/{p.name}" for p in informer.list()})
                final = (len(informer.list()), str(config.cache.status().informers[0].resource_version))
            view.finish(agreed, final[0], final[1], dict(state.counts), churn.error)
        finally:
            _stop_threads(stop, [t for t in (churn, faults) if t.ident is not None])
            config.close()
    for thread in [t for t in threading.enumerate() if t not in before_threads]:
        thread.join(5)
    left = [t.name for t in threading.enumerate() if t not in before_threads and t.is_alive()]
    if left:
        print(f"threads still running: {', '.join(left)}", file=out)
        return 1
    print("stopped: the cache, the fake API server and every thread were shut down and joined", file=out)
    out.flush()
    return 0 if agreed else 1


def _names(server: FakeAPIServer) -> set[str]:
    return {f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in server.list("pods")}


def _snapshot(
    elapsed: float,
    duration: float,
    synced: bool,
    lists: int,
    lists_at_sync: int,
    load_seconds: float | None,
    population: int,
    config: Config,
    state: DemoState,
    reads: _Reads,
    total: int,
    total_bytes: int,
    event_lines: int,
    *,
    final: bool = False,
) -> Snapshot:
    assert config.cache is not None
    infos = config.cache.status().informers
    info = infos[0] if infos else None
    page = 250  # the informer lists in pages of this many objects
    loaded = total if synced else min(total, max(0, lists - 1) * page)
    counts, recent, notes, faults = state.snapshot_events(event_lines)
    return Snapshot(
        elapsed=elapsed,
        remaining=max(0.0, duration - elapsed) if duration else None,
        loading=not synced,
        loaded_objects=loaded,
        total_objects=total,
        loaded_bytes=total_bytes * loaded / total if total else 0.0,
        total_bytes=total_bytes,
        load_seconds=load_seconds,
        server_objects=population,
        cache_objects=info.object_count if info else 0,
        resource_version=str(info.resource_version or "-") if info else "-",
        state=informer_state(info) if info else "starting",
        seconds_since_current=getattr(info, "seconds_since_current", None),
        events_per_second=state.rate(),
        backlog=sum(info.handler_backlogs.values()) if info else 0,
        relists=info.relist_count if info else 0,
        last_error=info.last_error if info else None,
        counts=counts,
        read_micros=reads.micros,
        read_count=reads.count,
        lists_since_sync=max(0, lists - lists_at_sync) if synced else 0,
        faults=faults,
        recent=recent,
        notes=notes,
        final=final,
    )
