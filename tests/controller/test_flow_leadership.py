"""LeadershipLost: a reconcile in flight when the Manager's election loses the Lease sees it before writing."""

from __future__ import annotations

import threading

from _controller_support import Calls

from cloudcoil_cache.controller import Controller, LeaderElection, LeadershipLost, Manager
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.testing import FakeClock


def test_a_reconcile_in_flight_when_the_lease_is_lost_is_fenced_from_writing(config, fake_api_server, make_cm):
    make_cm("app")
    clock = FakeClock()
    stepped_down = threading.Event()  # called after the Manager stopped the workers
    election = LeaderElection(
        "fenced",
        namespace="default",
        identity="me",
        lease_duration=15,
        renew_deadline=10,
        retry_period=2,
        clock=clock,
        on_stopped_leading=stepped_down.set,
    )
    ctl = Controller(ConfigMap, config=config, shutdown_timeout=20)
    calls = Calls()

    @ctl.reconcile()
    def reconcile(cm, ctx):
        ctx.check_leadership()  # leading: a write may go ahead
        calls.add(("leading", ctx.leading))
        lost = ctx.wait_leadership_lost(20)
        calls.add(("lost", lost, ctx.leading))
        try:
            ctx.check_leadership()  # what a write helper calls first
        except LeadershipLost as exc:
            calls.add(("fenced", str(exc)))
            raise

    manager = Manager(ctl, config=config, leader_election=election)
    with manager:
        calls.wait(lambda c: ("leading", True) in c)
        assert ctl.status().leading
        fake_api_server.fail_next(100_000, 500, path="/leases/fenced")  # no renewal succeeds from now
        assert clock.wait_for_sleepers(1)
        clock.advance(11)  # past renew_deadline: the election steps down
        assert stepped_down.wait(10)
        status = ctl.status()
        fake_api_server.clear_faults()
    got = calls.snapshot()
    assert got[1] == ("lost", True, False)
    assert got[2][0] == "fenced" and "lost the leader election's Lease" in got[2][1]
    assert (status.leadership_lost, status.errors, status.running, status.leading) == (1, 0, False, False)
    assert status.synced  # a standby keeps its informers synced


def test_without_an_election_the_fence_never_closes(config, make_cm):
    make_cm("solo")
    ctl = Controller(ConfigMap, config=config)
    calls = Calls()

    @ctl.reconcile()
    def reconcile(cm, ctx):
        ctx.check_leadership()
        calls.add((ctx.leading, ctx.wait_leadership_lost(0)))

    with ctl:
        calls.wait(lambda c: len(c) >= 1)
    assert set(calls.snapshot()) == {(True, False)}  # a relist under load may reconcile it again
