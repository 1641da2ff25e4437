"""Controller.status() (cloudcoil 0.8's ControllerStatus, as far as it maps) and wait_ready(timeout)."""

from __future__ import annotations

import threading

from _controller_support import Calls

from cloudcoil_cache.controller import Controller, ControllerStatus, TerminalError, Wait
from cloudcoil_cache.controller._observe import ControllerObserver
from cloudcoil_cache.controller._status_report import MAX_ERROR_KEYS, ReconcileCounts
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap


class Results(ControllerObserver):
    def __init__(self) -> None:
        self.calls = Calls()

    def reconciled(self, result: str, seconds: float) -> None:
        self.calls.add(result)


def test_wait_ready_is_false_until_the_informers_synced_and_after_stop(config, make_cm):
    make_cm("one")
    ctl = Controller(ConfigMap, config=config)
    ctl.reconcile()(lambda cm: None)
    assert ctl.wait_ready(0) is False
    before = ctl.status()
    assert isinstance(before, ControllerStatus)
    assert (before.ready, before.synced, before.running, before.leading, before.queued) == (False,) * 4 + (0,)
    waited: list[bool] = []
    waiter = threading.Thread(target=lambda: waited.append(ctl.wait_ready(10)), name="test-wait-ready")
    waiter.start()
    with ctl:
        waiter.join(10)
        assert waited == [True]
        assert ctl.wait_ready(0) is True
        status = ctl.status()
        assert (status.ready, status.synced, status.running, status.leading) == (True,) * 4
        assert ctl.ready
    assert ctl.wait_ready(0) is False
    assert not ctl.status().synced and not ctl.ready


def test_status_counts_outcomes_and_keeps_the_last_error_per_key(config, make_cm):
    make_cm("ok")
    make_cm("waits")
    make_cm("terminal")
    make_cm("fails")
    ctl = Controller(ConfigMap, config=config)
    ctl.observer = results = Results()

    @ctl.reconcile()
    def reconcile(cm):
        if cm.name == "waits":
            raise Wait("later", after=60)
        if cm.name == "terminal":
            raise TerminalError("bad spec")
        if cm.name == "fails":
            raise RuntimeError("flaky backend")

    with ctl:
        results.calls.wait(lambda r: r.count("error") >= 3 and "success" in r and "requeue_after" in r)
        status = ctl.status()
    # (the initial list and the watch may queue a key twice: at least one pass each)
    assert status.successes >= 2 and status.terminal_errors >= 1 and status.errors >= 1
    assert status.last_errors["default/terminal"] == "TerminalError: bad spec"
    assert status.last_errors["default/fails"] == "RuntimeError: flaky backend"
    assert set(status.last_errors) == {"default/terminal", "default/fails"}
    assert status.name == "configmap" and status.timeouts == status.cancellations == status.leadership_lost == 0


def test_the_last_errors_kept_are_bounded_and_cleared_by_a_success():
    counts = ReconcileCounts()
    for i in range(MAX_ERROR_KEYS + 5):
        counts.ended(f"ns/k{i}", RuntimeError("x" * 1000))
    totals, last = counts.snapshot()
    assert totals == {"error": MAX_ERROR_KEYS + 5} and len(last) == MAX_ERROR_KEYS
    assert "ns/k0" not in last and len(last["ns/k5"]) == 500  # the oldest dropped, the text cut
    counts.ended("ns/k5", None)
    assert "ns/k5" not in counts.snapshot()[1]
