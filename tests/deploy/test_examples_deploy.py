"""The examples deploy as they are (issue 33), run from the repository's root as the README says:
``gunicorn examples.flask_app:app`` (with and without ``--preload``), uWSGI (master + 2 processes),
``uvicorn examples.asgi_app:app --workers 2``, ``gunicorn --chdir examples/django_app podsite.wsgi``
(with and without ``--preload``).

For each, against the fake API server of the test process: every worker answers a create, an
update and a delete within 2 s; the only reads the API server saw are the caches' LISTs (one per
process that started a cache: one in all when the workers are forked from a master that loaded the
app), never a GET or LIST for a request; SIGTERM ends the server with exit code 0 within 2 s.
Without ``KUBECONFIG`` (nor ``~/.kube``) the examples start their embedded fake cluster, which a
preloading master shares with its workers. ``manage.py check`` runs without a cluster; the
examples' ``--serve`` scripts exit 0 on SIGTERM with the cache closed.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from _deploy_support import BIN, REPO, Served, app_env, every_worker_sees, free_port, get

from cloudcoil_cache.testing import FakeAPIServer, make_pod

WORKERS = 2
LIST_ALL_PODS = ("list", "/api/v1/pods")  # the examples cache Pods in all namespaces
DJANGO = REPO / "examples" / "django_app"


def _needs(*modules: str) -> None:
    for module in modules:
        pytest.importorskip(module, reason=f"the deploy tier needs {module} (pip install -e '.[test]')")


@pytest.fixture
def cluster_pods() -> int:
    return 3


def _env(kubeconfig: str | None, tmp_path: Path) -> dict[str, str]:
    """The environment of a user's shell at the repository's root (the library installed, nothing on
    PYTHONPATH); without ``kubeconfig`` no KUBECONFIG and a HOME without ``~/.kube``."""
    env = app_env(kubeconfig or "")
    env.pop("PYTHONPATH")
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env["TMPDIR"] = str(tmp_path / "tmp")  # where an embedded fake cluster writes its kubeconfig
    (tmp_path / "tmp").mkdir(exist_ok=True)
    if kubeconfig is None:
        del env["KUBECONFIG"]
        env["HOME"] = str(tmp_path)
    return env


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """``serve(argv, path, kubeconfig)``: run ``argv`` at the repository's root, wait until every worker
    answers ``path``."""
    started: list[Served] = []

    def start(argv: list[str], port: int, path: str, kubeconfig: str | None) -> Served:
        served = Served(argv, _env(kubeconfig, tmp_path), REPO, port, tmp_path / f"server-{len(started)}.log")
        started.append(served)
        served.wait_ready(path)
        every_worker_sees(port, lambda body: True, WORKERS, timeout=30.0, path=path)  # every worker booted
        return served

    yield start
    for served in started:
        served.kill()


def _gunicorn(port: int, *options: str) -> list[str]:
    return [
        sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", str(WORKERS),
        "--no-control-socket", *options,
    ]  # fmt: skip


def _uwsgi(port: int, module: str) -> list[str]:
    return [
        str(BIN / "uwsgi"), "--master", "--processes", str(WORKERS), "--enable-threads",
        "--py-call-uwsgi-fork-hooks", "--die-on-term", "--http-socket", f"127.0.0.1:{port}",
        "--module", module, "--need-app", "--disable-logging",
    ]  # fmt: skip


def _uvicorn(port: int, app: str) -> list[str]:
    return [
        sys.executable, "-m", "uvicorn", "--host", "127.0.0.1", "--port", str(port), "--workers", str(WORKERS),
        "--no-access-log", app,
    ]  # fmt: skip


def _labels_in_default(body: Any) -> dict[str, str]:
    """The examples' ``/api/pods`` answer: pod name -> its label ``v``, in "default"."""
    return {pod["name"]: pod["labels"].get("v", "") for pod in body["namespaces"].get("default", [])}


_churns = iter(range(1_000_000))


def _churn(server: FakeAPIServer, port: int, path: str) -> dict[str, float]:
    """Create, update (a label) and delete a pod; every worker must answer each state within 2 s."""
    name = f"example-{next(_churns)}"
    took: dict[str, float] = {}
    server.create("pods", make_pod(name, "default"), "default")
    took["create"] = every_worker_sees(port, lambda b: name in _labels_in_default(b), WORKERS, path=path)[0]
    server.patch("pods", name, {"metadata": {"labels": {"v": "2"}}}, "default")
    took["update"] = every_worker_sees(port, lambda b: _labels_in_default(b).get(name) == "2", WORKERS, path=path)[0]
    server.delete("pods", name, "default")
    took["delete"] = every_worker_sees(port, lambda b: name not in _labels_in_default(b), WORKERS, path=path)[0]
    return took


def _api_reads(server: FakeAPIServer) -> list[tuple[str, str]]:
    return [(r.verb, r.path) for r in server.requests if r.verb in ("get", "list")]


def _sigterm_exits_cleanly(served: Served) -> None:
    code, seconds = served.stop(signal.SIGTERM)
    assert code == 0, served.output()[-3000:]
    assert seconds < 2.0, f"SIGTERM took {seconds:.1f} s:\n{served.output()[-3000:]}"
    assert "Traceback" not in served.output(), served.output()[-3000:]


FLASK_PATH = "/api/pods?namespace=default"
DJANGO_PATH = "/api/pods/?namespace=default"

# (server command, the readiness/churn path, LISTs in all: one per process that loads the app)
DEPLOYMENTS: dict[str, tuple[Callable[[int], list[str]], str, int, tuple[str, ...]]] = {
    "flask-gunicorn": (lambda port: _gunicorn(port, "examples.flask_app:app"), FLASK_PATH, WORKERS, ("gunicorn",)),
    "flask-gunicorn-preload": (
        lambda port: _gunicorn(port, "--preload", "examples.flask_app:app"),
        FLASK_PATH,
        1,
        ("gunicorn",),
    ),
    "flask-uwsgi": (lambda port: _uwsgi(port, "examples.flask_app:app"), FLASK_PATH, 1, ("pyuwsgi",)),
    "asgi-uvicorn": (
        lambda port: _uvicorn(port, "examples.asgi_app:app"),
        FLASK_PATH,
        WORKERS,
        ("uvicorn", "starlette"),
    ),
    "django-gunicorn": (
        lambda port: _gunicorn(port, "--chdir", str(DJANGO), "podsite.wsgi"),
        DJANGO_PATH,
        WORKERS,
        ("gunicorn", "django"),
    ),
    "django-gunicorn-preload": (
        lambda port: _gunicorn(port, "--preload", "--chdir", str(DJANGO), "podsite.wsgi"),
        DJANGO_PATH,
        1,
        ("gunicorn", "django"),
    ),
}


@pytest.mark.parametrize("deployment", list(DEPLOYMENTS))
def test_each_example_serves_every_change_from_its_cache_and_stops_on_sigterm(cluster, serve, deployment):
    argv, path, lists, needs = DEPLOYMENTS[deployment]
    _needs(*needs)
    server, kubeconfig = cluster
    port = free_port()
    served = serve(argv(port), port, path, kubeconfig)
    took = _churn(server, port, path)
    assert max(took.values()) < 2.0
    # The caches' LISTs, and nothing else: not one request of the run read the API server.
    assert _api_reads(server) == [LIST_ALL_PODS] * lists
    _sigterm_exits_cleanly(served)


@pytest.mark.parametrize("deployment", ["flask-gunicorn-preload", "flask-uwsgi"])
def test_without_kubeconfig_the_workers_share_the_fake_cluster_of_the_master(serve, tmp_path, deployment):
    """The master loaded the app, so started the embedded fake cluster; the forked workers read it and
    leave it alone when they exit (a uWSGI worker that stopped it at its exit, as the finalizer of a
    ``with`` block left open does, waited for the master's server thread for good)."""
    argv, path, _, needs = DEPLOYMENTS[deployment]
    _needs(*needs)
    port = free_port()
    served = serve(argv(port), port, path, None)
    answers = every_worker_sees(port, lambda b: set(_labels_in_default(b)) == {"web-0", "web-1"}, WORKERS, path=path)
    assert len(answers[1]) == WORKERS
    _sigterm_exits_cleanly(served)
    if deployment == "flask-gunicorn-preload":  # (uWSGI's master runs no atexit hook: unbit/uwsgi#2095)
        assert list((tmp_path / "tmp").iterdir()) == []  # the master stopped its fake cluster and removed its files


def test_django_management_commands_run_without_a_cluster(tmp_path):
    """The cache starts in podsite/wsgi.py, not in AppConfig.ready(): ``manage.py check`` needs no
    cluster (before: a ConfigError traceback)."""
    _needs("django")
    env = _env(str(tmp_path / "missing-kubeconfig"), tmp_path)
    env["HOME"] = str(tmp_path)  # no ~/.kube/config either
    done = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=DJANGO, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "System check identified no issues" in done.stdout
    assert "Traceback" not in done.stderr, done.stderr[-3000:]


SCRIPTS = {
    "flask": ("examples/flask_app.py", FLASK_PATH, ("flask", "waitress")),
    "django": ("examples/django_app/run.py", DJANGO_PATH, ("django", "waitress")),
    "asgi": ("examples/asgi_app.py", FLASK_PATH, ("starlette", "uvicorn")),
}


@pytest.mark.parametrize("example", list(SCRIPTS))
def test_the_serve_scripts_exit_0_on_sigterm_with_the_cache_closed(cluster, tmp_path, example):
    """Kubernetes stops a pod with SIGTERM: the scripts stop serving, close the cache, and exit 0 (before:
    exit code 143, the cache never closed)."""
    script, path, needs = SCRIPTS[example]
    _needs(*needs)
    server, kubeconfig = cluster
    port = free_port()
    argv = [sys.executable, script, "--serve", "--port", str(port)]
    served = Served(argv, _env(kubeconfig, tmp_path), REPO, port, tmp_path / "script.log")
    try:
        served.wait_ready(path)
        assert get(port, path)[0] == 200
        _sigterm_exits_cleanly(served)
        assert served.output().splitlines()[-1] == "stopped: cache closed", served.output()[-3000:]
        assert _api_reads(server) == [LIST_ALL_PODS]
    finally:
        served.kill()
