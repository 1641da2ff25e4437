"""Manager.stop() from another thread ends Manager.run(): after the start, during it, and twice at once."""

from __future__ import annotations

import threading
from typing import Any

from _controller_support import Calls

from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, LeaderElection, Manager
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.testing import FakeAPIServer

#: What a run may take to return after stop(): the controllers' shutdown_timeout (1 s) and a margin.
RETURN_WITHIN = 10.0


class Runner:
    """``manager.run()`` on a thread of its own; what it raised, if anything."""

    def __init__(self, manager: Manager) -> None:
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(manager,), name="test-manager-run", daemon=True)

    def _run(self, manager: Manager) -> None:
        try:
            manager.run()
        except BaseException as exc:  # reported by the test
            self.error = exc

    def start(self) -> Runner:
        self.thread.start()
        return self

    def returned(self, timeout: float = RETURN_WITHIN) -> bool:
        self.thread.join(timeout)
        return not self.thread.is_alive()


def _mirror(config: Config, calls: Calls) -> Controller:
    ctl = Controller(ConfigMap, config=config, shutdown_timeout=1)

    @ctl.reconcile()
    def reconcile(cm: Any) -> None:
        calls.add(cm.name)

    return ctl


def test_stop_from_another_thread_ends_run_with_everything_stopped_and_joined(config, make_cm):
    make_cm("a")
    calls = Calls()
    election = LeaderElection("stop-run", namespace="default", identity="me", retry_period=0.2)
    manager = Manager(_mirror(config, calls), config=config, leader_election=election, health_port=0)
    runner = Runner(manager).start()
    calls.wait(lambda names: "a" in names)  # started, leading, reconciling
    threads = manager.threads()
    assert threads and all(t.is_alive() for t in threads)  # workers, election, health server

    manager.stop()  # from the test thread, not the one running run()

    assert not any(t.is_alive() for t in threads)  # stop() returned: everything is joined
    assert runner.returned(), "run() still blocked after Manager.stop() from another thread"
    assert runner.error is None and manager.threads() == []
    assert not election.threads()


def test_stop_from_another_thread_while_run_waits_for_the_sync_ends_run_at_once(config, fake_api_server: FakeAPIServer):
    # Every LIST fails (500, retried with backoff): the start waits for a sync that does not come, for
    # up to sync_timeout (60 s); the stop must not wait for that.
    fake_api_server.fail_next(100_000, 500, verb="list", path="configmaps")
    calls = Calls()
    manager = Manager(_mirror(config, calls), config=config, sync_timeout=60)
    runner = Runner(manager).start()
    fake_api_server.wait_for_request(lambda r: r.verb == "list" and r.path.endswith("/configmaps"))

    manager.stop()

    assert runner.returned(), "run() still blocked after a stop() that came while its informers were syncing"
    assert runner.error is None and manager.threads() == [] and calls.snapshot() == []
    assert not manager.controllers[0].running and manager.controllers[0].sources == {}


def test_a_stop_during_a_start_that_then_syncs_still_ends_run(config, fake_api_server: FakeAPIServer, make_cm):
    # The first LISTs fail a few times: stop() comes while the start is still in progress.
    make_cm("a")
    fake_api_server.fail_next(3, 500, verb="list", path="configmaps")
    calls = Calls()
    manager = Manager(_mirror(config, calls), config=config, sync_timeout=30)
    runner = Runner(manager).start()
    fake_api_server.wait_for_request(lambda r: r.verb == "list" and r.path.endswith("/configmaps"))

    manager.stop()

    assert runner.returned(), "run() still blocked after a stop() that came during its start"
    assert runner.error is None and manager.threads() == []
    assert not manager.controllers[0].running and manager.controllers[0].sources == {}


def test_two_stops_from_two_threads_both_return_once_everything_is_stopped(config, make_cm):
    make_cm("a")
    calls = Calls()
    manager = Manager(_mirror(config, calls), config=config, health_port=0)
    runner = Runner(manager).start()
    calls.wait(lambda names: "a" in names)
    threads = manager.threads()
    other = threading.Thread(target=manager.stop, name="test-second-stop", daemon=True)
    other.start()
    manager.stop()
    other.join(RETURN_WITHIN)
    assert not other.is_alive()
    assert not any(t.is_alive() for t in threads)
    assert runner.returned() and runner.error is None


def test_run_with_a_stop_event_still_ends_when_the_event_is_set_and_stop_sets_it(config, make_cm):
    make_cm("a")
    calls = Calls()
    manager = Manager(_mirror(config, calls), config=config)
    stop = threading.Event()
    thread = threading.Thread(target=manager.run, args=(stop,), name="test-manager-run-event", daemon=True)
    thread.start()
    calls.wait(lambda names: "a" in names)
    stop.set()  # the caller's own event, as before
    thread.join(RETURN_WITHIN)
    assert not thread.is_alive() and manager.threads() == []

    # a second run with the same event cleared: stop() sets it (run() waits on it)
    stop.clear()
    thread = threading.Thread(target=manager.run, args=(stop,), name="test-manager-run-again", daemon=True)
    thread.start()
    calls.wait(lambda names: names.count("a") >= 2)
    manager.stop()
    thread.join(RETURN_WITHIN)
    assert not thread.is_alive() and stop.is_set()
