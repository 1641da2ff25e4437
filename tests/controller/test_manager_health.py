"""Manager health server: /healthz, /readyz and /metrics (parsed with prometheus_client), leadership in-process."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from typing import Callable

from _controller_support import Calls
from prometheus_client.parser import text_string_to_metric_families

from cloudcoil_cache.controller import Controller, LeaderElection, Manager, TerminalError
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


_WORKED = ("workqueue_work_duration_seconds_count", (("name", "mirror"),))


def _scrape_until(
    port: int, done: Callable[[dict[tuple[str, tuple[tuple[str, str], ...]], float]], bool], timeout: float = 10.0
) -> tuple[int, dict[tuple[str, tuple[tuple[str, str], ...]], float]]:
    """Scrape /metrics until ``done(samples)`` holds (at most ``timeout`` seconds): the last scrape."""
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while True:
        status, text = _get(port, "/metrics")
        samples = _samples(text) if status == 200 else {}
        if done(samples) or time.monotonic() > deadline:
            return status, samples
        tick.wait(0.02)


def test_metrics_are_scraped_and_parsed_with_the_ecosystems_names(config, fake_api_server, make_cm):
    for name in ("ok-1", "ok-2", "bad"):
        make_cm(name)
    ctl = Controller(ConfigMap, config=config, name="mirror", workers=2)
    calls = Calls()

    @ctl.reconcile()
    def reconcile(cm):
        calls.add(cm.name)
        if cm.name == "bad":
            raise TerminalError("cannot")

    election = LeaderElection("metrics-test", identity="only", lease_duration=4, renew_deadline=3, retry_period=0.5)
    with Manager(ctl, config=config, leader_election=election, health_port=0) as manager:
        port = manager.health_port
        calls.wait(lambda c: {"ok-1", "ok-2", "bad"} <= set(c))
        assert _get(port, "/healthz") == (200, "ok\n")
        assert _get(port, "/readyz") == (200, "ok\n")
        assert _get(port, "/nope")[0] == 404
        # A reconcile's call is recorded when it starts; its work is observed once the worker is
        # done with the key: scrape until the three are (under CPU load that comes later).
        status, samples = _scrape_until(port, lambda s: s.get(_WORKED, 0) >= 3)
    assert status == 200

    def value(metric: str, **labels: str) -> float:
        return samples[(metric, tuple(sorted(labels.items())))]

    assert value("workqueue_adds_total", name="mirror") >= 3
    assert value("workqueue_depth", name="mirror") == 0
    assert value("workqueue_retries_total", name="mirror") == 0
    assert value("workqueue_queue_duration_seconds_count", name="mirror") >= 3
    assert value("workqueue_work_duration_seconds_count", name="mirror") >= 3
    assert value("workqueue_unfinished_work_seconds", name="mirror") == 0
    assert value("workqueue_longest_running_processor_seconds", name="mirror") == 0
    assert value("controller_runtime_reconcile_total", controller="mirror", result="success") >= 2
    assert value("controller_runtime_reconcile_total", controller="mirror", result="error") >= 1
    assert value("controller_runtime_reconcile_total", controller="mirror", result="requeue") == 0
    assert value("controller_runtime_reconcile_errors_total", controller="mirror") >= 1
    assert value("controller_runtime_reconcile_time_seconds_count", controller="mirror") >= 3
    assert value("controller_runtime_max_concurrent_reconciles", controller="mirror") == 2
    assert value("leader_election_master_status", name="metrics-test") == 1
    informer = {"kind": "ConfigMap", "namespace": "default", "label_selector": ""}
    assert value("cloudcoil_cache_informer_objects", **informer) == 3
    assert value("cloudcoil_cache_informer_synced", **informer) == 1
    assert value("cloudcoil_cache_informer_relists_total", **informer) >= 1
    assert value("cloudcoil_cache_informer_staleness_seconds", **informer) >= 0
    assert value("cloudcoil_cache_informer_last_sync_timestamp_seconds", **informer) > 0

    lease = fake_api_server.get("leases.coordination.k8s.io", "metrics-test", "default")["spec"]
    assert lease["holderIdentity"] in ("", None)  # released on stop
    assert lease["leaseDurationSeconds"] == 1


def test_two_managers_in_one_process_one_leads_the_standby_is_warm_and_ready(config, make_cm):
    make_cm("one")
    calls = Calls()
    managers = []
    for identity in ("a", "b"):
        ctl = Controller(ConfigMap, config=config)
        ctl.reconcile(lambda cm, ctx, identity=identity: calls.add(identity))
        election = LeaderElection(
            "two-managers", identity=identity, lease_duration=4, renew_deadline=3, retry_period=0.2
        )
        managers.append(Manager(ctl, config=config, leader_election=election, health_port=0))
    started = threading.Event()
    managers[0].leader_election.on_started_leading = started.set
    try:
        managers[0].start()
        assert started.wait(10)
        learned = Calls()
        managers[1].leader_election.on_new_leader = learned.add
        managers[1].start()
        calls.wait(lambda c: "a" in c)
        learned.wait(lambda leaders: leaders == ["a"])
        standby = managers[1]
        assert _get(standby.health_port, "/readyz") == (200, "ok\n")  # synced while not leading
        assert standby.controllers[0].cached(ConfigMap).get("one") is not None  # warm
        assert not standby.controllers[0].running and standby.leader_election.leader == "a"
        took_over = threading.Event()
        standby.leader_election.on_started_leading = took_over.set
        managers[0].stop()  # releases the Lease
        assert took_over.wait(10)
        calls.wait(lambda c: "b" in c)  # the new leader queues every object when it starts
    finally:
        for manager in managers:
            manager.stop()
    assert all(not t.is_alive() for m in managers for t in m.threads())


def test_metrics_without_a_health_port_cost_nothing_and_run_blocks_until_stop(config, make_cm):
    make_cm("x")
    ctl = Controller(ConfigMap, config=config)
    calls = Calls()
    ctl.reconcile(lambda cm: calls.add(cm.name))
    manager = Manager(ctl, config=config)
    stop = threading.Event()
    runner = threading.Thread(target=manager.run, args=(stop,))  # not the main thread: no signal handlers
    runner.start()
    try:
        calls.wait(lambda c: "x" in c)
        assert manager.metrics is None and manager.health_port is None
    finally:
        stop.set()
        runner.join(10)
    assert not runner.is_alive() and manager.threads() == []


def test_a_manager_can_be_started_again_after_a_stop_and_ctx_logger_names_the_key(config, make_cm, caplog):
    import logging

    make_cm("again")
    ctl = Controller(ConfigMap, config=config)
    calls = Calls()

    @ctl.reconcile()
    def reconcile(cm, ctx):
        ctx.logger.warning("reconciling %s", cm.name)
        calls.add(cm.name)

    election = LeaderElection("restart", identity="r", lease_duration=4, renew_deadline=3, retry_period=0.2)
    manager = Manager(ctl, config=config, leader_election=election, health_port=0)
    with caplog.at_level(logging.WARNING, logger="cloudcoil_cache.controller"):
        for run in (1, 2):
            with manager:
                calls.wait(lambda c, run=run: len(c) >= run)
            assert manager.threads() == [] and not ctl.running
    assert "configmap default/again: reconciling again" in caplog.text
