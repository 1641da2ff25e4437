"""A Celery prefork worker with a real broker (issue 33): the cache starts in the MainProcess
(``worker_init``), the pool forks its children from it, and ``--max-tasks-per-child`` replaces them
all the time. Every child answers a create, an update and a delete within 2 s, the whole worker
lists once (every child, and every replacement, resumes the MainProcess's copy), and SIGTERM (a
warm shutdown) ends it with exit code 0 (in Celery's own time: 5-6 s with this broker, measured
the same without a cache).

The broker is kombu's ``filesystem://`` transport (a real broker, queues in files: no server to run),
the results go to files; the fake API server runs in the test process.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from _deploy_support import APPS, Served, api_requests, app_env
from cluster_support import seed

from cloudcoil_cache.testing import FakeAPIServer, make_pod

pytest.importorskip("celery", reason="the deploy tier needs celery (pip install -e '.[test]')")

CHILDREN = 2


def every_child_sees(app: Any, expect: Callable[[dict[str, str]], bool], timeout: float = 2.0) -> set[int]:
    """Send tasks (a few at once, each holding its child a moment) until ``CHILDREN`` distinct live
    children answered what ``expect`` accepts, and none answered otherwise since; their pids."""
    t0 = time.monotonic()
    good: set[int] = set()
    answers: dict[int, Any] = {}
    while True:
        results = [app.send_task("celery_app.pods", kwargs={"hold": 0.05}) for _ in range(CHILDREN + 1)]
        for result in results:
            out = result.get(timeout=10, interval=0.01)  # the file backend is polled: often
            answers[out["pid"]] = out["pods"]
            (good.add if expect(out["pods"]) else good.discard)(out["pid"])
        if len(good) >= CHILDREN:
            return good
        assert time.monotonic() - t0 < timeout, (
            f"after {timeout} s, {len(good)} children answered as expected: {answers}"
        )


def test_prefork_children_resume_the_main_process_cache_through_respawns(tmp_path: Path) -> None:
    from apps import celery_app

    folder = tmp_path / "celery"
    client = celery_app.make_app(str(folder))  # the sending side: same broker folders, no cache here
    with FakeAPIServer() as server:
        seed(server, 10)
        env = app_env(str(server.write_kubeconfig(tmp_path / "kubeconfig")))
        env["DEPLOY_CELERY_DIR"] = str(folder)
        argv = [
            sys.executable, "-m", "celery", "-A", "celery_app", "worker", "-P", "prefork", "-c", str(CHILDREN),
            "--max-tasks-per-child", "6", "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "info",
        ]  # fmt: skip
        served = Served(argv, env, APPS, 0, tmp_path / "celery.log")
        try:
            client.send_task("celery_app.pods").get(timeout=60)  # the worker is up
            # The cache must be fresh within 2 s; the tasks that look add the broker's own latency
            # (files polled every 50 ms, then a result file polled): measured once, and allowed for.
            t0 = time.monotonic()
            every_child_sees(client, lambda pods: True, timeout=60)
            within = 2.0 + 2 * (time.monotonic() - t0)
            seen: set[int] = set()
            for step in range(3):  # changes while the children come and go
                name = f"task-pod-{step}"
                server.create("pods", make_pod(name, "default"), "default")
                seen |= every_child_sees(client, lambda pods, n=name: n in pods, within)
                server.patch("pods", name, {"metadata": {"labels": {"v": "2"}}}, "default")
                seen |= every_child_sees(client, lambda pods, n=name: pods.get(n) == "2", within)
                server.delete("pods", name, "default")
                seen |= every_child_sees(client, lambda pods, n=name: n not in pods, within)
            assert len(seen) > CHILDREN, "no child was replaced"
            assert api_requests(server, "list") == 1  # the MainProcess's: every child resumed its copy
            code, seconds = served.stop(signal.SIGTERM)
            assert code == 0, served.output()[-3000:]
            # Celery's own warm shutdown with this broker takes 5-6 s, with or without a cache (measured)
            assert seconds < 10.0, f"the warm shutdown took {seconds:.1f} s:\n{served.output()[-3000:]}"
            assert "Traceback" not in served.output(), served.output()[-3000:]
        finally:
            served.kill()
