"""Application.run() on a thread ends when Application.stop() is called from another thread."""

from __future__ import annotations

import threading
from typing import Any

from cloudcoil_cache.application import Application
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, LeaderElection
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.testing import FakeAPIServer


def test_stop_from_another_thread_ends_run_with_everything_stopped(
    fake_api_server: FakeAPIServer, config: Config
) -> None:
    fake_api_server.create("configmaps", {"metadata": {"name": "a"}, "data": {}}, "default")
    reconciled = threading.Event()
    ctl = Controller(ConfigMap, config=config, shutdown_timeout=1)

    @ctl.reconcile()
    def reconcile(cm: Any) -> None:
        reconciled.set()

    election = LeaderElection("app-stop", namespace="default", identity="me", retry_period=0.2)
    app = Application("stopper", ctl, config=config, leader_election=election, health_port=0, module="stopper")
    errors: list[BaseException] = []

    def run() -> None:
        try:
            app.run()
        except BaseException as exc:  # reported below
            errors.append(exc)

    runner = threading.Thread(target=run, name="test-application-run", daemon=True)
    runner.start()
    assert reconciled.wait(10)
    threads = [*ctl.threads(), *election.threads()]
    assert threads and all(t.is_alive() for t in threads)

    app.stop()  # from the test thread

    assert not any(t.is_alive() for t in threads)  # stop() returned: everything it started is joined
    runner.join(10)
    assert not runner.is_alive(), "Application.run() still blocked after Application.stop() from another thread"
    assert errors == []
    app.stop()  # not running any more: nothing to do
