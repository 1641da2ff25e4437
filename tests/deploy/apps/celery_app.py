"""The deploy tier's Celery app: a prefork worker whose tasks read pods from the cache.

The cache starts in the worker's MainProcess (``worker_init``: before the pool forks its children),
so every child, and every child ``--max-tasks-per-child`` respawns, resumes the MainProcess's copy
(no LIST). The broker is kombu's ``filesystem://`` transport and the results go to files: a real
broker without a server (folders from ``$DEPLOY_CELERY_DIR``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from celery import Celery
from celery.signals import worker_init

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod


def make_app(folder: str) -> Celery:
    base = Path(folder)
    for sub in ("queue", "processed", "results", "control"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    app = Celery("celery_app", broker="filesystem://", backend=f"file://{base / 'results'}")
    app.conf.broker_transport_options = {
        "data_folder_in": str(base / "queue"),
        "data_folder_out": str(base / "queue"),
        "processed_folder": str(base / "processed"),
        "control_folder": str(base / "control"),  # else "control/" in the working directory
        "polling_interval": 0.05,
    }
    app.conf.broker_connection_retry_on_startup = True
    app.conf.worker_prefetch_multiplier = 1
    return app


app = make_app(os.environ.get("DEPLOY_CELERY_DIR", "/tmp/cloudcoil-celery"))
config = Config(cache=Cache(resources=[Pod], namespaces=["default"]))


@worker_init.connect
def start_cache(**_: Any) -> None:
    if not os.environ.get("DEPLOY_NO_CACHE"):
        config.set_default()  # in the MainProcess, before the pool forks


@app.task(name="celery_app.pods")
def pods(hold: float = 0.0) -> dict[str, Any]:
    if hold:
        time.sleep(min(hold, 0.5))  # keep this child busy, so that the next task goes to another
    listed = Pod.list(namespace="default")
    return {"pid": os.getpid(), "pods": {p.name: (p.metadata.labels or {}).get("v", "") for p in listed}}


@app.task(name="celery_app.status")
def status() -> dict[str, Any]:
    import threading

    assert config.cache is not None
    (informer,) = config.cache.status().informers
    return {
        "pid": os.getpid(),
        "state": informer.state,
        "error": informer.last_error,
        "threads": sorted(t.name for t in threading.enumerate()),
    }
