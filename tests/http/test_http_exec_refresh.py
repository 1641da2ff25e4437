"""Exec credential plugin refreshes are serialised and merged (issue 8, §4).

Requests that get a 401 together cause one plugin run, whose token serves them all; requests that
need no run never wait for a run in progress. The plugin is a real script run by the kubeconfig's
exec block; the server a real loopback HTTP server that answers 401 to a stale token.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import pytest
import yaml
from _servers import Exchange, TinyServer

from cloudcoil_cache.client._kubeconfig import build_transport, load_connection

# Appends a line to <state>/runs per run and prints token tok-<run>; on the run numbered
# BLOCK_RUN it first reads <state>/gate (a FIFO), so the test decides when that run ends.
PLUGIN = r"""
import json, os, pathlib, sys
state = pathlib.Path(sys.argv[1])
with open(state / "runs", "a") as f:
    f.write("run\n")
n = len((state / "runs").read_text().splitlines())
if str(n) == os.environ.get("BLOCK_RUN"):
    with open(state / "gate") as gate:
        gate.read()
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {"token": f"tok-{n}"}}))
"""


def plugin_runs(state: Path) -> int:
    path = state / "runs"
    return len(path.read_text().splitlines()) if path.exists() else 0


def exec_kubeconfig(tmp_path: Path, server: str, block_run: int | None = None) -> Path:
    state = tmp_path / "plugin"
    state.mkdir()
    (state / "plugin.py").write_text(PLUGIN)
    env = [{"name": "BLOCK_RUN", "value": str(block_run or 0)}]
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
        "users": [
            {
                "name": "u",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1",
                        "command": sys.executable,
                        "args": [str(state / "plugin.py"), str(state)],
                        "env": env,
                        "interactiveMode": "Never",
                    }
                },
            }
        ],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


class TokenChecker:
    """Answers 200 to the valid token and 401 to any other; stale requests can be held at a barrier."""

    def __init__(self) -> None:
        self.valid = "tok-1"
        self.barrier: threading.Barrier | None = None
        self.lock = threading.Lock()
        self.seen: list[str] = []

    def __call__(self, ex: Exchange) -> None:
        token = (ex.headers.get("Authorization") or "").removeprefix("Bearer ")
        with self.lock:
            self.seen.append(token)
        if token == self.valid:
            ex.reply(200, json.dumps({"token": token}).encode())
            return
        if self.barrier is not None:
            try:  # every stale request is in before any is answered: their 401s come together
                self.barrier.wait(10)
            except threading.BrokenBarrierError:
                pass
        ex.reply(401, b'{"kind":"Status","code":401,"reason":"Unauthorized","message":"Unauthorized"}')


def test_eight_requests_failing_with_401_together_run_the_plugin_once(tmp_path):
    checker = TokenChecker()
    with TinyServer(checker) as tiny:
        kubeconfig = exec_kubeconfig(tmp_path, tiny.url)
        with build_transport(load_connection(kubeconfig=kubeconfig), read_timeout=20) as transport:
            assert transport.request("GET", "/version").json() == {"token": "tok-1"}
            assert plugin_runs(tmp_path / "plugin") == 1

            checker.valid = "tok-2"  # the server rotated: tok-1 is now stale
            checker.barrier = threading.Barrier(8)
            start = threading.Barrier(8)
            results: list[object] = []

            def call() -> None:
                start.wait(10)
                try:
                    results.append(transport.request("GET", "/version").json())
                except Exception as e:  # noqa: BLE001 - reported by the assertion below
                    results.append(e)

            threads = [threading.Thread(target=call, name=f"test-401-{i}") for i in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
    assert results == [{"token": "tok-2"}] * 8
    assert plugin_runs(tmp_path / "plugin") == 2  # the first run, and ONE refresh for all eight
    assert checker.seen.count("tok-1") == 9


def test_a_request_needing_no_refresh_never_waits_for_a_plugin_run(tmp_path):
    checker = TokenChecker()
    with TinyServer(checker) as tiny:
        kubeconfig = exec_kubeconfig(tmp_path, tiny.url, block_run=2)
        os.mkfifo(tmp_path / "plugin" / "gate")
        creds = load_connection(kubeconfig=kubeconfig).credentials
        assert creds is not None
        assert creds.auth_header() == "Bearer tok-1"
        refresher = threading.Thread(target=creds.refresh, name="test-refresh")
        refresher.start()
        try:
            with open(tmp_path / "plugin" / "gate", "w") as gate:  # returns once run 2 waits on it
                headers: list[str | None] = []
                reader = threading.Thread(target=lambda: headers.append(creds.auth_header()), name="test-reader")
                reader.start()
                reader.join(10)
                blocked = reader.is_alive()
                gate.write("go")
        finally:
            refresher.join(30)
            reader.join(30)
        assert not blocked, "auth_header() waited for the plugin run in progress"
        assert headers == ["Bearer tok-1"]  # the cached token, while run 2 was still going
        assert creds.auth_header() == "Bearer tok-2"


def test_a_failed_merged_run_fails_every_waiter_without_running_again(tmp_path):
    from cloudcoil_cache.client._auth import ExecConfig, ExecCredentials
    from cloudcoil_cache.errors import ConfigError

    state = tmp_path / "state"
    state.mkdir()
    script = state / "fail.py"
    script.write_text(
        "import pathlib, sys\n"
        "p = pathlib.Path(sys.argv[1]) / 'runs'\n"
        "p.write_text(p.read_text() + 'run\\n' if p.exists() else 'run\\n')\n"
        "sys.exit(4)\n"
    )
    creds = ExecCredentials(
        ExecConfig(
            command=sys.executable,
            args=(str(script), str(state)),
            api_version="client.authentication.k8s.io/v1",
            interactive_mode="Never",
        )
    )
    generation = creds.generation()
    start = threading.Barrier(6)
    outcomes: list[str] = []

    def refresh() -> None:
        start.wait(10)
        try:
            creds.refresh_since(generation)
            outcomes.append("ok")
        except ConfigError as e:
            outcomes.append(str(e))

    threads = [threading.Thread(target=refresh, name=f"test-fail-{i}") for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(outcomes) == 6 and all("exit status 4" in o for o in outcomes)
    # Waiters that queued behind the failing run share its failure; only threads arriving after
    # it ended may try again, so far fewer runs than callers.
    assert 1 <= plugin_runs(state) < 6


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("FIFOs")
