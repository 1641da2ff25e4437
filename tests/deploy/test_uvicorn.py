"""uvicorn with an ASGI lifespan (issue 33): ``Starlette(lifespan=config.lifespan)`` makes the Config the
process default, so every request task's ``await Pod.async_list(...)`` is served from the cache (before,
``async with config:`` in the lifespan reached no handler: every read went to the API server).

``uvicorn --workers 2`` starts its workers with multiprocessing's spawn: each runs the lifespan, so each
lists once and watches; every worker answers a create, an update and a delete within 2 s; no read is a
GET; SIGTERM ends the server with exit code 0 within 2 s.
"""

from __future__ import annotations

import signal
import sys

import pytest
from _deploy_support import APPS, Served, api_requests, app_env, churn_and_check, every_worker_sees, free_port

pytest.importorskip("uvicorn", reason="the deploy tier needs uvicorn (pip install -e '.[test]')")
pytest.importorskip("starlette", reason="the deploy tier needs starlette (pip install -e '.[test]')")

WORKERS = 2


def test_the_lifespan_serves_every_request_task_from_the_cache(cluster, tmp_path):
    server, kubeconfig = cluster
    port = free_port()
    argv = [
        sys.executable, "-m", "uvicorn", "--host", "127.0.0.1", "--port", str(port), "--workers", str(WORKERS),
        "--no-access-log", "asgi_app:app",
    ]  # fmt: skip
    served = Served(argv, app_env(kubeconfig), APPS, port, tmp_path / "uvicorn.log")
    try:
        served.wait_ready()
        states = every_worker_sees(port, lambda st: st["same_config"], WORKERS, timeout=30.0, path="/status")[1]
        assert len(states) == WORKERS
        churn_and_check(server, port, WORKERS)
        assert api_requests(server, "list") == WORKERS  # one per spawned worker, nothing forks here
        assert api_requests(server, "get") == 0  # every read came from the cache
        assert "has no Config of its own" not in served.output()
        code, seconds = served.stop(signal.SIGTERM)
        assert code == 0, served.output()[-3000:]
        assert seconds < 2.0, f"SIGTERM took {seconds:.1f} s:\n{served.output()[-3000:]}"
        assert "Traceback" not in served.output(), served.output()[-3000:]
    finally:
        served.kill()
