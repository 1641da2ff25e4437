"""reconcile_timeout: a sync reconcile past it is abandoned as failed (its key stays busy until its thread
ends; bounded), a coroutine reconcile is cancelled; both are retried with backoff and counted."""

from __future__ import annotations

import asyncio
import threading

import pytest
from _controller_support import Calls

from cloudcoil_cache.controller import Controller
from cloudcoil_cache.controller._observe import ControllerObserver
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap


class Results(ControllerObserver):
    """Records each reconcile's result label (the metrics seam), to wait on."""

    def __init__(self) -> None:
        self.calls = Calls()

    def reconciled(self, result: str, seconds: float) -> None:
        self.calls.add(result)


def test_a_sync_reconcile_past_the_timeout_is_abandoned_its_key_kept_busy_and_retried(config, make_cm):
    make_cm("slow")
    ctl = Controller(ConfigMap, config=config, reconcile_timeout=0.2, workers=2)
    ctl.observer = results = Results()
    gate = threading.Event()
    calls = Calls()

    @ctl.reconcile()
    def reconcile(cm, ctx):
        calls.add(cm.name)
        if cm.name == "slow" and calls.snapshot().count("slow") == 1:
            assert gate.wait(20)  # far past the timeout
        ctx.logger.info("done")

    with ctl:
        try:
            results.calls.wait(lambda r: r == ["error"])  # the timeout
            status = ctl.status()
            assert status.abandoned == 1 and status.errors == 1
            assert status.last_errors["default/slow"].startswith("ReconcileTimeout: controller 'configmap': ")
            assert "ran past reconcile_timeout (0.2s); abandoned" in status.last_errors["default/slow"]
            # the worker goes on with other keys, while "slow" (requeued with backoff) stays busy
            make_cm("fast")
            calls.wait(lambda c: "fast" in c)
            assert calls.snapshot().count("slow") == 1
            assert any(t.name.startswith("controller-configmap-reconcile-") for t in ctl.threads())
        finally:
            gate.set()
        # the abandoned reconcile ends: its key is free, and the retry runs and succeeds
        calls.wait(lambda c: c.count("slow") >= 2)
        results.calls.wait(lambda r: r.count("success") >= 2)  # more if a relist under load re-delivers one
        status = ctl.status()
        assert status.successes >= 2 and (status.abandoned, status.last_errors) == (0, {})
    assert not [t for t in threading.enumerate() if t.name.startswith("controller-configmap")]


def test_abandoned_reconciles_are_bounded_by_the_worker_count(config, make_cm):
    make_cm("a")
    make_cm("b")
    ctl = Controller(ConfigMap, config=config, reconcile_timeout=0.1, workers=1)
    ctl.observer = results = Results()
    gate = threading.Event()
    calls = Calls()

    @ctl.reconcile()
    def reconcile(cm):
        calls.add(cm.name)
        if len(calls.snapshot()) == 1:
            assert gate.wait(20)

    with ctl:
        try:
            results.calls.wait(lambda r: r == ["error"])
            assert ctl.status().abandoned == 1
            # one abandoned call is the limit with one worker: the next key waits for it to end
            assert len(calls.snapshot()) == 1
            assert ctl.status().processing == 2  # the abandoned key (busy) and the one waiting for room
        finally:
            gate.set()
        calls.wait(lambda c: {"a", "b"} <= set(c))


def test_a_coroutine_reconcile_past_the_timeout_is_cancelled_and_retried(config, make_cm):
    make_cm("co")
    ctl = Controller(ConfigMap, config=config, reconcile_timeout=0.2)
    calls = Calls()

    @ctl.reconcile()
    async def reconcile(cm, ctx):
        calls.add(("start", ctx.retries))
        if ctx.retries == 0:
            try:
                await asyncio.Event().wait()  # never set
            except asyncio.CancelledError:
                calls.add(("cancelled", 0))
                raise

    with ctl:
        calls.wait(lambda c: ("start", 1) in c)
        status = ctl.status()
    assert calls.snapshot()[:3] == [("start", 0), ("cancelled", 0), ("start", 1)]
    assert status.timeouts == 1 and "cancelled" in status.last_errors.get("default/co", "cancelled")


@pytest.mark.parametrize("bad", [0, -1, True, "5", float("inf"), float("nan")])
def test_reconcile_timeout_is_checked(bad):
    with pytest.raises(ValueError, match="reconcile_timeout=...\\) must be a number of seconds > 0"):
        Controller(ConfigMap, reconcile_timeout=bad)


def test_helper_threads_are_reused_and_joined_at_stop(config, make_cm):
    for i in range(20):
        make_cm(f"k{i}")
    ctl = Controller(ConfigMap, config=config, reconcile_timeout=30, workers=2)
    calls = Calls()

    @ctl.reconcile()
    def reconcile(cm, ctx):
        calls.add((cm.name, threading.current_thread().name, ctx.config is not None))

    with ctl:
        calls.wait(lambda c: len({name for name, _, _ in c}) == 20)
        helpers = [t for t in ctl.threads() if t.name.startswith("controller-configmap-reconcile-")]
    threads_used = {thread for _, thread, _ in calls.snapshot()}
    assert len(helpers) <= 2 and threads_used <= {t.name for t in helpers}  # at most one per worker
    assert all(ok for _, _, ok in calls.snapshot())
    assert not any(t.is_alive() for t in helpers)
