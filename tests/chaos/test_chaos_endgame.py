"""Issue 32's chaos endgame as a deterministic scenario: churn at 150 changes/s, a restart that rewinds the
resourceVersion by 1,000,000 (an etcd restore), one garbled event line, and a watch the client re-opens that
stays silent with its headers sent and the connection held open.

Where the garbled line lands is the timing that CPU load decides: on the watch the client re-opened after
the restart (idle: the client is back before the next fault), or on no open watch at all (loaded: the old
watch is closed and the client's new one is not registered yet). Both orders are played here on purpose.
The re-opened watch is silent either because the fake server is told to stall every watch, or because the
client resumes from its pre-restart resourceVersion and the server, like kube-apiserver 1.33 (measured),
accepts a watch from a resourceVersion it is behind and sends nothing until it gets there
(``future_watch_mode="silent"``; the fake's default answers 504 "Too large resource version" instead).

The contract (docs/contract.md): the cache converges with the server, and silence is never counted as
progress for longer than ``max_staleness``. This module runs under CPU load (``tests/chaos/conftest.py``).
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any, Iterator

import pytest

from cloudcoil_cache.caching import Backoff, Cache, Tuning
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod

NAMESPACES = ("endgame-a", "endgame-b")
REWIND = 1_000_000
RATE = 150.0  # changes per second
MAX_STALENESS = 4.0  # watches of 1.5-3 s and a grace of 1 s (watch_window)
TUNING = Tuning(backoff=Backoff(initial=0.05, cap=0.4), watch_timeout=30.0, read_timeout=5.0, min_watch_duration=0.2)
CONVERGE_S = 30.0


class Churn:
    """Seeded creates, updates and deletes through the server's object API at ``RATE`` per second, in a
    thread of its own (named, stoppable, joined)."""

    def __init__(self, server: FakeAPIServer, seed: int) -> None:
        self.server = server
        self.rng = random.Random(seed)
        self.live: list[tuple[str, str]] = []
        self.serial = 0
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, name="test-endgame-churn")

    def step(self) -> None:
        rng, server = self.rng, self.server
        self.serial += 1
        if len(self.live) < 40 or rng.random() < 0.3:
            namespace, name = rng.choice(NAMESPACES), f"pod-{self.serial}"
            server.create("pods", make_pod(name, namespace, index=self.serial), namespace)
            self.live.append((namespace, name))
        elif rng.random() < 0.65:
            namespace, name = rng.choice(self.live)
            server.patch("pods", name, {"metadata": {"annotations": {"serial": str(self.serial)}}}, namespace)
        else:
            namespace, name = self.live.pop(rng.randrange(len(self.live)))
            server.delete("pods", name, namespace, grace_period_seconds=0)

    def _run(self) -> None:
        while not self.stop_event.wait(1.0 / RATE):
            self.step()

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(10)


def server_state(server: FakeAPIServer) -> dict[tuple[str, str], tuple[str, str]]:
    return {
        (o["metadata"]["namespace"], o["metadata"]["name"]): (o["metadata"]["uid"], o["metadata"]["resourceVersion"])
        for o in server.list("pods")
    }


def cache_state(informer: Any) -> dict[tuple[str, str], tuple[str, str]]:
    return {
        (p.metadata.namespace, p.metadata.name): (p.metadata.uid, p.metadata.resource_version) for p in informer.list()
    }


def wait_for(predicate: Any, timeout: float, tick: float = 0.02) -> bool:
    """Re-check ``predicate`` every ``tick`` (a wait on an Event) until it holds or ``timeout`` passed."""
    ticker = threading.Event()
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        ticker.wait(tick)
    return True


def describe(server: FakeAPIServer, informer: Any, since: float) -> str:
    want, have = server_state(server), cache_state(informer)
    stale = [k for k in set(want) & set(have) if want[k] != have[k]]
    status = informer.status()
    requests = [
        f"{r.time - since:+.2f}s {r.verb} rv={r.query.get('resourceVersion', '')}"
        for r in server.requests
        if r.time >= since and r.verb in ("list", "watch")
    ]
    return (
        f"{len(set(want) - set(have))} missing, {len(set(have) - set(want))} deleted still served, "
        f"{len(stale)} at old versions; status {status.state} rv={status.resource_version} "
        f"(server {server.revision}) last_error={status.last_error}; open watches {server.active_watches}; "
        f"requests since the restart: {requests[:12]}"
    )


@pytest.fixture
def endgame(tmp_path: Any, request: pytest.FixtureRequest) -> Iterator[tuple[FakeAPIServer, Any, Churn]]:
    """A server far enough past revision 1,000,000 to be rewound by it, 60 pods, a Pod informer
    (``max_staleness=4``) in sync, and churn running; everything stopped at teardown."""
    mode = getattr(request, "param", "too_large")
    server = FakeAPIServer(bookmark_interval=0.5, future_watch_mode=mode).start()
    churn = Churn(server, seed=32)
    try:
        server.restart(revision=3 * REWIND)
        for namespace in NAMESPACES:
            server.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        for _ in range(60):
            churn.step()
        cache = Cache(resources=[Pod], tuning=TUNING, max_staleness=MAX_STALENESS, resync_period=None)
        config = Config(kubeconfig=server.write_kubeconfig(tmp_path / "kubeconfig"), cache=cache)
        with config:
            informer = cache.get_informer(Pod)
            assert informer.wait_for_sync(10)
            server.wait_for_watches(1)
            churn.start()
            start = server.revision
            assert wait_for(lambda: server.revision >= start + 100, 10)  # churn under way, watched
            yield server, informer, churn
    finally:
        churn.stop()
        server.stop()


def restart_rewound(server: FakeAPIServer) -> float:
    """The endgame's restart: every connection cut, the revision rewound by 1,000,000; when it happened."""
    at = time.monotonic()
    server.restart(revision=server.revision - REWIND)
    return at


def reopened_watch_live(server: FakeAPIServer, since: float) -> bool:
    """The client's newest watch (its last WATCH request after ``since``) is registered and streaming.

    Not merely "a watch is open": under load the fake still holds watches the client has given up on
    (a silent one is noticed only at its end or at the fake's next check that its client is there)."""
    asked = [r.time for r in server.requests if r.verb == "watch" and r.time > since]
    return bool(asked) and any(
        w.started_at is not None and w.started_at >= asked[-1] for w in server.context.watches.snapshot()
    )


def converge(server: FakeAPIServer, informer: Any, churn: Churn, since: float) -> None:
    """Let the churn run a second more, stop it, and wait for the cache to equal the server and say current.

    Fails at once when the informer says ``current`` about a cache that differs from the server for longer
    than ``max_staleness`` (+2 s for the events in flight): the bounded staleness the contract promises."""
    churn.stop_event.wait(1.0)
    churn.stop()
    truth = server_state(server)
    claimed: list[float] = []  # since when ``current`` was said of a cache that differs

    def settled() -> bool:
        current = informer.status().state == "current"
        if cache_state(informer) == truth:
            return current
        if not current:
            claimed.clear()
        elif not claimed:
            claimed.append(time.monotonic())
        elif time.monotonic() - claimed[0] > MAX_STALENESS + 2.0:
            raise AssertionError(f"current for {MAX_STALENESS + 2.0}s but stale: {describe(server, informer, since)}")
        return False

    done = wait_for(settled, CONVERGE_S)
    assert done, f"not converged {CONVERGE_S}s after the churn stopped: {describe(server, informer, since)}"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("endgame", ["too_large", "silent"], indirect=True, ids=["fake-504", "kube-silent"])
def test_the_garbled_line_on_the_watch_reopened_after_the_rewind_is_recovered_from(endgame):
    """The idle machine's order: the client is back on a watch before the garbled line is sent."""
    server, informer, churn = endgame
    restarted = restart_rewound(server)
    assert wait_for(lambda: reopened_watch_live(server, restarted), 10), describe(server, informer, restarted)
    assert server.send_malformed_line() >= 1  # the client's watch, and any it gave up on that lingers
    converge(server, informer, churn, restarted)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("endgame", ["too_large", "silent"], indirect=True, ids=["fake-504", "kube-silent"])
def test_the_garbled_line_sent_before_the_client_is_back_is_lost_and_the_cache_still_converges(endgame):
    """The loaded machine's order: the old watch is closed, the client's re-opened one not registered yet:
    the garbled line reaches no watch, and nothing knocks a silent re-opened watch off its resourceVersion.

    kube-silent is the chaos run's failure under load: kube-apiserver (as the fake in this mode) accepts
    the watch from a resourceVersion it is behind after the rewind and sends nothing, ending each watch on
    time. The reflector asks where the server is after a watch that carried no line at all
    (``Reflector._check_not_rewound``: a LIST of one object) and relists when it is behind."""
    server, informer, churn = endgame
    restarted = restart_rewound(server)
    # The old watch is closed. A watch registered since (a re-watch that raced the restart: the client's
    # watches end every 1-2 s here, run 1 of benchmarks/under_load.py met one) would take the line; then it
    # is not sent at all, which is the same to the client: no garbled line reaches a watch it reads.
    if not any(w.started_at is not None and w.started_at >= restarted for w in server.context.watches.snapshot()):
        server.send_malformed_line()
    converge(server, informer, churn, restarted)


@pytest.mark.timeout(120)
def test_a_reopened_watch_silent_after_its_headers_leaves_current_within_max_staleness_then_converges(endgame):
    """The issue's words: the re-opened watch sends its headers and nothing more, the connection held open
    (the fake's stall: no bytes, no bookmarks, no end). It is a stall before the informer would turn
    stale; once the server talks again the cache converges."""
    server, informer, churn = endgame
    restarted = restart_rewound(server)
    assert wait_for(lambda: reopened_watch_live(server, restarted), 10), describe(server, informer, restarted)
    assert server.send_malformed_line() >= 1
    relisted = server.wait_for_request(lambda r: r.verb == "list" and r.time > restarted, timeout=10)
    server.stall_watches()  # from here every watch is silent, the one the client re-opens after the relist too
    stalled = time.monotonic()
    server.wait_for_request(lambda r: r.verb == "watch" and r.time > relisted.time, timeout=10)
    left = wait_for(lambda: informer.status().state != "current", MAX_STALENESS + 2.0)
    silent_for = time.monotonic() - stalled
    assert left, f"still current {silent_for:.1f}s into the silence: {describe(server, informer, stalled)}"
    assert time.monotonic() - stalled <= MAX_STALENESS + 2.0
    server.resume_watches()
    converge(server, informer, churn, restarted)
