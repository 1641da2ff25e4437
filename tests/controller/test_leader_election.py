"""Leader election with three manager processes against one fake API server.

Timings are reported (``-s`` shows them) and bounded generously; they are measured for real in the
failover figures of the report, never tuned here.
"""

from __future__ import annotations

import datetime
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from cloudcoil_cache.controller import LeaderElection
from cloudcoil_cache.controller._leader import JITTER
from cloudcoil_cache.testing import FakeClock

REPLICA = Path(__file__).with_name("_replica.py")
LEASE, RENEW, RETRY = 2.0, 1.5, 0.3
#: CPU contention (two cores, three interpreters, a server, the tests) delays any one step by this much.
MARGIN = 1.5


class Replica:
    """A replica process; a thread reads its JSON-lines events into a shared log."""

    def __init__(self, identity: str, kubeconfig: str, log: EventLog, stderr_path: Path) -> None:
        self.identity = identity
        self._stderr = open(stderr_path, "w")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        self.proc = subprocess.Popen(
            [sys.executable, str(REPLICA), kubeconfig, identity, str(LEASE), str(RENEW), str(RETRY)],
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
        )
        self._reader = threading.Thread(target=self._read, args=(log,), name=f"reader-{identity}")
        self._reader.start()

    def _read(self, log: EventLog) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            log.add(json.loads(line))

    def signal(self, signum: int) -> float:
        self.proc.send_signal(signum)
        return time.monotonic()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self._reader.join(10)
        self._stderr.close()


class EventLog:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._cond = threading.Condition()

    def add(self, event: dict[str, Any]) -> None:
        with self._cond:
            self.events.append(event)
            self._cond.notify_all()

    def wait_for(
        self, pred: Callable[[dict[str, Any]], bool], timeout: float = 30.0, after: float = 0.0
    ) -> dict[str, Any]:
        """The first event (at or after monotonic time ``after``) matching ``pred``."""

        def find() -> dict[str, Any] | None:
            return next((e for e in self.events if e["t"] >= after and pred(e)), None)

        with self._cond:
            if not self._cond.wait_for(lambda: find() is not None, timeout):
                raise AssertionError(f"no matching event within {timeout}s; events: {self.events[-20:]}")
            found = find()
            assert found is not None
            return found

    def of(self, event: str, identity: str | None = None) -> list[dict[str, Any]]:
        with self._cond:
            return [e for e in self.events if e["event"] == event and identity in (None, e["id"])]


@pytest.fixture
def replicas(fake_api_server, fake_kubeconfig, tmp_path):
    log = EventLog()
    started: list[Replica] = []

    def start(*identities: str) -> list[Replica]:
        new = [Replica(i, str(fake_kubeconfig), log, tmp_path / f"{i}.stderr") for i in identities]
        started.extend(new)
        return new

    yield start, log
    for replica in started:
        replica.close()


def _leader_started(log: EventLog, after: float = 0.0, exclude: str | None = None) -> dict[str, Any]:
    return log.wait_for(lambda e: e["event"] == "started_leading" and e["id"] != exclude, after=after)


def test_three_replicas_exactly_one_reconciles_and_sigkill_fails_over_within_the_lease(replicas, fake_api_server):
    start, log = replicas
    fake_api_server.create("configmaps", {"metadata": {"name": "before"}}, "default")
    procs = {r.identity: r for r in start("r1", "r2", "r3")}
    for identity in procs:
        log.wait_for(lambda e, i=identity: e["event"] == "ready" and e["id"] == i)
    first = _leader_started(log)
    leader = first["id"]
    log.wait_for(lambda e: e["event"] == "reconcile" and e["id"] == leader and e["key"] == "default/before")
    fake_api_server.create("configmaps", {"metadata": {"name": "during"}}, "default")
    log.wait_for(lambda e: e["event"] == "reconcile" and e["key"] == "default/during")
    for identity in procs:  # every replica learns who leads (the followers from the Lease)
        log.wait_for(lambda e, i=identity: e["event"] == "new_leader" and e["id"] == i and e["leader"] == leader)
    assert {e["id"] for e in log.of("reconcile")} == {leader}
    assert {e["id"] for e in log.of("started_leading")} == {leader}  # (it may step down and back if starved)

    killed_at = procs[leader].signal(signal.SIGKILL)
    second = _leader_started(log, after=killed_at, exclude=leader)
    failover = second["t"] - killed_at
    print(f"\nSIGKILL failover: {failover:.2f}s (lease {LEASE}s, retry {RETRY}s)")
    assert failover <= LEASE + 2 * RETRY * (1 + JITTER) + MARGIN
    fake_api_server.create("configmaps", {"metadata": {"name": "after-kill"}}, "default")
    log.wait_for(lambda e: e["event"] == "reconcile" and e["key"] == "default/after-kill")
    assert {e["id"] for e in log.of("reconcile") if e["t"] > killed_at} == {second["id"]}


def test_sigterm_releases_the_lease_and_a_standby_takes_over_in_about_a_retry_period(replicas, fake_api_server):
    start, log = replicas
    procs = {r.identity: r for r in start("g1", "g2", "g3")}
    for identity in procs:
        log.wait_for(lambda e, i=identity: e["event"] == "ready" and e["id"] == i)
    leader = _leader_started(log)["id"]
    termed_at = procs[leader].signal(signal.SIGTERM)
    stopped = log.wait_for(lambda e: e["event"] == "stopped_leading" and e["id"] == leader, after=termed_at)
    exited = log.wait_for(lambda e: e["event"] == "exit" and e["id"] == leader, after=termed_at)
    assert procs[leader].proc.wait(10) == 0
    second = _leader_started(log, after=termed_at, exclude=leader)
    print(
        f"\nSIGTERM failover: {second['t'] - termed_at:.2f}s after the signal, {second['t'] - stopped['t']:.2f}s "
        f"after the release (retry {RETRY}s; the old leader exited {exited['t'] - termed_at:.2f}s after it)"
    )
    assert second["t"] - stopped["t"] <= RETRY * (1 + JITTER) + MARGIN
    assert second["t"] - termed_at < LEASE  # faster than waiting out the lease: it was released
    lease = fake_api_server.get("leases.coordination.k8s.io", "replica-test", "default")
    assert lease["spec"]["holderIdentity"] == second["id"]
    assert lease["spec"]["leaseTransitions"] == 1


def test_a_leader_that_cannot_renew_steps_down_after_renew_deadline_and_campaigns_again(replicas, fake_api_server):
    start, log = replicas
    procs = {r.identity: r for r in start("f1", "f2", "f3")}
    for identity in procs:
        log.wait_for(lambda e, i=identity: e["event"] == "ready" and e["id"] == i)
    leader = _leader_started(log)["id"]
    broken_at = time.monotonic()
    fake_api_server.fail_next(100_000, 500, path="/leases/replica-test")
    last_renew = datetime.datetime.fromisoformat(
        fake_api_server.get("leases.coordination.k8s.io", "replica-test", "default")["spec"]["renewTime"].replace(
            "Z", "+00:00"
        )
    ).timestamp()
    down = log.wait_for(lambda e: e["event"] == "stopped_leading" and e["id"] == leader, after=broken_at)
    print(f"\nstep-down {down['wall'] - last_renew:.2f}s after the last renewal (renew deadline {RENEW}s)")
    # (a renewal counts from the start of its attempt: under CPU contention it may step down earlier)
    assert down["wall"] - last_renew <= RENEW + MARGIN
    assert not [e for e in log.of("started_leading") if e["t"] > broken_at]  # nobody can take it meanwhile
    fake_api_server.clear_faults()
    again = _leader_started(log, after=down["t"])
    print(f"re-elected {again['id']} {again['t'] - down['t']:.2f}s after the step-down")
    # leadership intervals never overlap
    intervals = []
    for identity in procs:
        starts = [e["t"] for e in log.of("started_leading", identity)]
        stops = [e["t"] for e in log.of("stopped_leading", identity)] + [float("inf")] * len(starts)
        intervals += list(zip(starts, stops))
    intervals.sort()
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(intervals, intervals[1:])), intervals


def test_leader_election_arguments_are_checked():
    with pytest.raises(ValueError, match="lease_duration"):
        LeaderElection("x", lease_duration=5, renew_deadline=5)
    with pytest.raises(ValueError, match="renew_deadline"):
        LeaderElection("x", renew_deadline=1, retry_period=1)
    with pytest.raises(ValueError, match="name"):
        LeaderElection("")
    assert LeaderElection("x").identity  # a unique default identity


def test_the_shipped_fake_clock_drives_the_campaign(config, fake_api_server):
    clock = FakeClock()
    started = threading.Event()
    election = LeaderElection(
        "fake-clock",
        namespace="default",
        identity="me",
        lease_duration=15,
        renew_deadline=10,
        retry_period=2,
        clock=clock,
        on_started_leading=started.set,
    )
    election._start(config)
    try:
        assert started.wait(10)  # the first attempt does not wait
        assert clock.wait_for_sleepers(1)  # then the campaign waits a retry period on the fake clock
        fake_api_server.clear_requests()
        clock.advance(2 * (1 + JITTER))  # the wait after an acquisition is jittered
        renewal = fake_api_server.wait_for_request(lambda r: r.verb == "update")
        assert renewal.path.endswith("/leases/fake-clock")
        assert election.is_leader()
    finally:
        election._stop()
    assert not election.is_leader()
