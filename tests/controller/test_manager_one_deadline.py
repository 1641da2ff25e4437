"""Manager.stop(timeout): one deadline for the whole ordered stop, each step given what is left of it."""

from __future__ import annotations

import threading
import time
from typing import Any

from cloudcoil_cache.controller import Controller, LeaderElection, Manager
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap

WAIT = 10.0


def test_a_stop_ends_within_its_one_deadline_whatever_each_controllers_shutdown_timeout(config, make_cm) -> None:
    make_cm("stuck")
    entered = threading.Event()
    release = threading.Event()
    controllers = []
    for name in ("first", "second"):
        ctl = Controller(ConfigMap, config=config, name=name, shutdown_timeout=30)

        @ctl.reconcile()
        def reconcile(cm: Any) -> None:
            entered.set()
            release.wait(WAIT * 3)  # a reconcile that does not end by itself

        controllers.append(ctl)
    election = LeaderElection("one-deadline", namespace="default", identity="me", retry_period=0.2)
    manager = Manager(*controllers, config=config, leader_election=election, health_port=0)
    manager.start()
    try:
        assert entered.wait(WAIT)
        began = time.monotonic()
        manager.stop(timeout=0.5)
        took = time.monotonic() - began
        # the workers got 0.5 s (not their 30 s); what came after them (informers, the Lease's
        # release, the health server) ran with nothing left of the deadline and stopped all the same
        assert took < 5.0, took
        assert not election.threads() and manager.health_port is not None
        assert not controllers[0].sources and not controllers[1].sources
    finally:
        release.set()
        for ctl in controllers:
            for thread in ctl.threads():
                thread.join(WAIT)
    stuck = [t for c in controllers for t in c.threads() if t.is_alive()]
    assert not stuck


def test_without_a_timeout_a_stop_waits_for_reconciles_in_flight(config, make_cm) -> None:
    make_cm("slow")
    entered = threading.Event()
    release = threading.Event()
    finished = threading.Event()
    ctl = Controller(ConfigMap, config=config, shutdown_timeout=30)

    @ctl.reconcile()
    def reconcile(cm: Any) -> None:
        entered.set()
        release.wait(WAIT)
        finished.set()

    manager = Manager(ctl, config=config)
    manager.start()
    assert entered.wait(WAIT)
    stopper = threading.Timer(0.2, release.set)  # the reconcile ends while the stop waits for it
    stopper.start()
    manager.stop()
    stopper.join()
    assert finished.is_set() and ctl.status().ready is False
