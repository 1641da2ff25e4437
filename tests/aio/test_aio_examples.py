"""The reference examples of docs/contract.md, in examples/ run as written, against the fake API server."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable

import pytest

from cloudcoil_cache.testing import make_pod

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def load_example(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], ModuleType]:
    """Import ``examples/<name>.py`` as a fresh module, with no KUBECONFIG (so it starts a fake server)."""
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.syspath_prepend(str(EXAMPLES))

    def load(name: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    yield load
    assert "KUBECONFIG" not in os.environ  # the example restored the environment


def test_async_cached_reads_lists_the_default_namespace_in_async_and_sync_forms(load_example, capsys):
    result = load_example("async_cached_reads").main()
    assert result == {"async": ["web-0", "web-1"], "sync": ["web-0", "web-1"]}
    assert capsys.readouterr().out.splitlines() == ["async: web-0 web-1", "sync: web-0 web-1"]


def test_async_subscriptions_prints_the_initial_objects_then_adds_updates_and_deletes(load_example, capsys):
    lines = load_example("async_subscriptions").main()
    initial = ["added default web-0", "added default web-1", "added other web-0"]
    live = ["added default web-2", "changed default web-0", "removed default web-1"]
    assert sorted(lines) == sorted(["3", *initial, *live])  # "3": the local read inside the scope
    for first in initial:
        assert lines.index(first) < lines.index("added default web-2")
    assert lines.index("added default web-1") < lines.index("removed default web-1")
    assert capsys.readouterr().out.splitlines() == lines


def test_threaded_handlers_run_the_update_handler_on_its_own_thread(load_example, capsys):
    threads = load_example("threaded_handlers").main()
    assert len(threads) == 1 and threads[0].startswith("cloudcoil-handler")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "cached pods: 3"
    assert out[1].startswith("changed default web-0 labels {") and "'tier': 'edge'" in out[1]
    assert out[1].endswith("on a handler thread")


def test_temporary_policies_send_only_the_paused_and_fallback_reads_to_the_api(load_example, capsys):
    reads = load_example("temporary_policies").main()
    assert reads == ["list /api/v1/namespaces/default/pods", "get /api/v1/namespaces/other/pods/web-0"]
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("CacheStatus(enabled=True, started=True, ready=True, mode='strict'")
    assert out[-1].startswith(
        "strict mode: cannot serve get Pod other/web-0 from the cache: namespace outside the cache"
    )


def test_examples_use_the_cluster_named_by_kubeconfig(load_example, monkeypatch, server, seeded, kubeconfig):
    server.create("pods", make_pod("web-0", "other"), "other")
    module = load_example("temporary_policies")
    monkeypatch.setenv("KUBECONFIG", kubeconfig)
    try:
        assert module.main() == []  # the example started no server of its own...
        reads = [(r.verb, r.path) for r in server.requests if r.verb in ("get", "list")]
        # ...the test's server saw the informer's LIST, the paused LIST, the fallback GET, and the
        # informer's LIST of the script's second scope (its strict read made no request)
        pods = "/api/v1/namespaces/default/pods"
        assert reads == [("list", pods), ("list", pods), ("get", "/api/v1/namespaces/other/pods/web-0"), ("list", pods)]
        assert load_example("async_cached_reads").main() == {"async": seeded, "sync": seeded}
    finally:
        monkeypatch.delenv("KUBECONFIG")


def test_flask_app_answers_requests_from_the_cache_on_any_thread(load_example, capsys):
    answers = load_example("flask_app").main()
    assert answers == {
        "/pods": ["web-0", "web-1"],
        "/pods/other/web-0": {"name": "web-0", "namespace": "other", "phase": "Running"},
        "/pods/default/nope": (
            404,
            {
                "error": '404 NotFound: pods "nope" not found in cache in namespace "default" '
                "(the cache watches Pod in all namespaces)"
            },
        ),
        "worker /pods?namespace=other": ["web-0"],
        "api reads": [],
    }
    assert capsys.readouterr().out.splitlines()[0] == "/pods -> ['web-0', 'web-1']"


@pytest.mark.parametrize(
    "script, expected_line",
    [
        ("async_cached_reads", "async: web-0 web-1"),
        ("async_subscriptions", "removed default web-1"),
        ("threaded_handlers", "cached pods: 3"),
        ("temporary_policies", "read from the API server: get /api/v1/namespaces/other/pods/web-0"),
        ("flask_app", "api reads -> []"),
    ],
    ids=lambda v: v if "/" not in v and " " not in v else "",
)
def test_each_example_runs_as_a_script(script: str, expected_line: str):
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{script}.py")],
        env=env,
        cwd=EXAMPLES.parent,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert expected_line in done.stdout.splitlines()
