"""gunicorn, as web apps deploy with it (issue 33): sync and gthread workers, each with and without
``--preload``, and ``--max-requests`` recycling under load. The app makes its Config the default at
import (``apps/wsgi_app.py``); with ``--preload`` that is in the master, and the workers are forks.

For each: every worker answers a create, an update and a delete within 2 s; the API requests per
process (one LIST for all preloaded workers, one WATCH each); SIGTERM ends the server with exit code
0 within 2 s.
"""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest
from _deploy_support import APPS, Served, api_requests, app_env, churn_and_check, every_worker_sees, free_port, get

from cloudcoil_cache.testing import FakeAPIServer

pytest.importorskip("gunicorn", reason="the deploy tier needs gunicorn (pip install -e '.[test]')")

WORKERS = 2


@pytest.fixture
def gunicorn(cluster: tuple[FakeAPIServer, str], tmp_path: Path) -> Iterator[Any]:
    started: list[Served] = []

    def start(*options: str) -> Served:
        port = free_port()
        argv = [
            sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", str(WORKERS),
            "--graceful-timeout", "30", "--no-control-socket", *options, "wsgi_app:app",
        ]  # fmt: skip
        served = Served(argv, app_env(cluster[1]), APPS, port, tmp_path / f"gunicorn-{len(started)}.log")
        started.append(served)
        served.wait_ready("/pods")  # a list is the first use: it must resume the copy
        every_worker_sees(port, lambda pods: True, WORKERS, timeout=30.0)  # every worker booted
        return served

    yield start
    for served in started:
        served.kill()


def _sigterm_exits_cleanly(served: Served) -> None:
    code, seconds = served.stop(signal.SIGTERM)
    assert code == 0, served.output()[-3000:]
    assert seconds < 2.0, f"SIGTERM took {seconds:.1f} s:\n{served.output()[-3000:]}"
    assert "SIGKILL" not in served.output() and "Traceback" not in served.output(), served.output()[-3000:]


@pytest.mark.parametrize("worker_class", ["sync", "gthread"])
def test_without_preload_each_worker_lists_and_watches_for_itself(cluster, gunicorn, worker_class):
    server, _ = cluster
    served = gunicorn("--worker-class", worker_class, "--threads", "4" if worker_class == "gthread" else "1")
    churn_and_check(server, served.port, WORKERS)
    assert api_requests(server, "list") == WORKERS
    _sigterm_exits_cleanly(served)


@pytest.mark.parametrize("worker_class", ["sync", "gthread"])
def test_preloaded_workers_share_one_list_and_resume_the_watch(cluster, gunicorn, worker_class):
    server, _ = cluster
    served = gunicorn(
        "--preload", "--worker-class", worker_class, "--threads", "4" if worker_class == "gthread" else "1"
    )
    # The master listed once at import; each worker resumed the inherited copy with a WATCH.
    churn_and_check(server, served.port, WORKERS)
    assert api_requests(server, "list") == 1
    assert server.active_watches >= WORKERS + 1  # the master's, still open, and each worker's
    states = every_worker_sees(served.port, lambda st: st["state"] == "current", WORKERS, path="/status")[1]
    assert all(st["relists"] == 0 and "cloudcoil-reflector-pods@default" in st["threads"] for st in states.values())
    _sigterm_exits_cleanly(served)


def test_recycled_preloaded_workers_never_list_and_never_fail_a_request(cluster, gunicorn):
    """--max-requests under a steady load: every replacement worker is forked from the master again
    and resumes from its copy (no LIST, no request failed, no request slower than 2 s)."""
    server, _ = cluster
    served = gunicorn("--preload", "--max-requests", "20", "--max-requests-jitter", "10")
    results: list[tuple[int, float]] = []
    stop = threading.Event()

    def load() -> None:
        import time

        while not stop.is_set():
            t0 = time.monotonic()
            try:
                status = get(served.port, "/pods", timeout=5.0)[0]
            except OSError:
                status = 0
            results.append((status, time.monotonic() - t0))

    threads = [threading.Thread(target=load, name=f"deploy-load-{i}") for i in range(4)]
    for t in threads:
        t.start()
    try:
        pids = set()
        for _ in range(3):  # changes while workers come and go
            churn_and_check(server, served.port, WORKERS)
        while len(pids) < 2 * WORKERS + 2 and len(results) < 3000:
            pids.add(get(served.port, "/status")[1])
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert len(pids) > WORKERS, "no worker was recycled"
    failed = [r for r in results if r[0] != 200]
    assert not failed, f"{len(failed)} of {len(results)} requests failed"
    assert max(seconds for _, seconds in results) < 2.0
    assert api_requests(server, "list") == 1
    _sigterm_exits_cleanly(served)
