"""The deploy tier's harness: real servers (gunicorn, uWSGI, uvicorn, Celery) in their own processes, in
front of the shipped fake API server running in the test process.

``start(argv, ...)`` runs a server in a process group of its own (killed whole at teardown, whatever
happened), waits until it answers, and ``stop()`` sends the signal Kubernetes sends (SIGTERM) and
measures how long the server takes to exit and with which code. The fake API server's request log
tells the LISTs and WATCHes apart (``api_requests``). ``every_worker_sees`` asks ``/pods`` over new
connections until each worker process (by its ``X-Pid``) answers what the test expects.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from cloudcoil_cache.testing import FakeAPIServer

REPO = Path(__file__).resolve().parents[2]
APPS = Path(__file__).resolve().parent / "apps"
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def app_env(kubeconfig: str, *extra_paths: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        KUBECONFIG=kubeconfig,
        PYTHONPATH=os.pathsep.join(str(p) for p in (*extra_paths, APPS, REPO)),
        PYTHONUNBUFFERED="1",
        PYTHONFAULTHANDLER="1",
    )
    env.pop("PYTEST_XDIST_WORKER", None)
    return env


def get(port: int, path: str, timeout: float = 5.0) -> tuple[int, str, Any]:
    """``(status, X-Pid, JSON body)`` of one GET over a new connection."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Connection": "close"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.headers.get("X-Pid", ""), json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("X-Pid", ""), exc.read().decode(errors="replace")


class Served:
    """One server process group; ``stop()`` it, or the fixture kills it."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, port: int, log: Path) -> None:
        self.argv = argv
        self.port = port
        self.log = log
        self._out = open(log, "wb")  # noqa: SIM115 - closed in stop()/kill()
        self.proc = subprocess.Popen(
            argv, env=env, cwd=cwd, stdout=self._out, stderr=subprocess.STDOUT, start_new_session=True
        )

    def output(self) -> str:
        if not self._out.closed:
            self._out.flush()
        return self.log.read_text(errors="replace")

    def wait_ready(self, path: str = "/status", timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        tick = threading.Event()
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.argv[:3]} exited with {self.proc.returncode}:\n{self.output()[-4000:]}")
            try:
                if get(self.port, path, timeout=5.0)[0] == 200:
                    return
            except OSError:
                pass  # not listening yet
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.argv[:3]} did not answer {path} in {timeout} s:\n{self.output()[-4000:]}")
            tick.wait(0.1)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> tuple[int | None, float]:
        """Send ``sig`` to the server's main process; ``(exit code, seconds it took)`` (None: killed)."""
        t0 = time.monotonic()
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code: int | None = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            code = None
        seconds = time.monotonic() - t0
        self.kill()
        return code, seconds

    def kill(self) -> None:
        if self._out.closed:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the workers too, whatever state they are in
        except ProcessLookupError:
            pass
        self.proc.wait()
        self._out.close()


def every_worker_sees(
    port: int, expect: Callable[[Any], bool], workers: int, timeout: float = 2.0, path: str = "/pods"
) -> tuple[float, dict[str, Any]]:
    """Ask ``path`` over new connections until ``workers`` distinct processes answered what ``expect``
    accepts; ``(seconds it took, last answer by pid)``. AssertionError past ``timeout``."""
    t0 = time.monotonic()
    answers: dict[str, Any] = {}
    good: set[str] = set()
    tick = threading.Event()
    asked = f"{path}{'&' if '?' in path else '?'}hold=0.02"
    with ThreadPoolExecutor(workers + 2, thread_name_prefix="deploy-ask") as pool:
        while True:
            # several at once, each holding its worker a moment: a server whose idle worker takes
            # every request in turn (uWSGI) reaches them all
            for status, pid, body in pool.map(lambda _: _ask(port, asked), range(workers + 2)):
                if status == 200 and pid:
                    answers[pid] = body
                    if expect(body):
                        good.add(pid)
                    else:
                        good.discard(pid)
            if len(good) >= workers:
                return time.monotonic() - t0, answers
            if time.monotonic() - t0 > timeout:
                raise AssertionError(
                    f"after {timeout} s only {len(good)} of {workers} workers answered as expected: {answers}"
                )
            tick.wait(0.01)


def _ask(port: int, path: str) -> tuple[int, str, Any]:
    try:
        return get(port, path)
    except OSError:
        return 0, "", None


def api_requests(server: FakeAPIServer, verb: str, path: str = "/api/v1/namespaces/default/pods") -> int:
    """How many ``verb`` requests (list, watch, get) the fake served on ``path`` so far."""
    return sum(1 for r in server.requests if r.verb == verb and r.path == path)


_churns = iter(range(1_000_000))


def churn_and_check(server: FakeAPIServer, port: int, workers: int, path: str = "/pods") -> dict[str, float]:
    """Create, update (a label) and delete a pod on the server; every worker must answer each new
    state (``/pods``: name -> label ``v``) within 2 s. The seconds each took."""
    from cloudcoil_cache.testing import make_pod

    name = f"deploy-{next(_churns)}"
    took: dict[str, float] = {}
    server.create("pods", make_pod(name, "default"), "default")
    took["create"] = every_worker_sees(port, lambda pods: name in pods, workers, path=path)[0]
    server.patch("pods", name, {"metadata": {"labels": {"v": "2"}}}, "default")
    took["update"] = every_worker_sees(port, lambda pods: pods.get(name) == "2", workers, path=path)[0]
    server.delete("pods", name, "default")
    took["delete"] = every_worker_sees(port, lambda pods: name not in pods, workers, path=path)[0]
    return took
