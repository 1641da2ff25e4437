"""The plain-script examples run as written: imported (checked in detail) and as ``python examples/X.py``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from _examples_support import EXAMPLES


def test_cached_reads_serve_list_and_get_from_memory(load_example, capsys):
    result = load_example("cached_reads").main()
    assert result["default"] == ["web-0", "web-1"]
    assert result["all"] == ["default/web-0", "default/web-1", "other/web-0"]
    assert result["web-0 phase"] == "Running" and result["other/web-0 uid differs"] is True
    assert 'pods "missing" not found' in str(result["missing"])
    assert result["copy edited"] == "yes"
    assert result["api reads"] == []  # every read after the sync came from memory
    assert "api reads: []" in capsys.readouterr().out.splitlines()


@pytest.mark.parametrize(
    "script, expected_line",
    [
        ("cached_reads", "api reads: []"),
        ("flask_app", "api reads -> []"),
    ],
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


def test_the_asgi_app_serves_its_async_handlers_from_the_cache_under_uvicorn(load_example, capsys):
    """``config.lifespan``: the handlers' ``await Pod.async_list/async_get`` read the cache the
    lifespan started (request tasks do not inherit the lifespan's context)."""
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    answers = load_example("asgi_app").main()
    listed = answers["/api/pods?namespace=default"]["namespaces"]
    assert {ns: [p["name"] for p in pods] for ns, pods in listed.items()} == {"default": ["web-0", "web-1"]}
    assert answers["/pods/other/web-0"]["name"] == "web-0" and answers["/pods/other/web-0"]["phase"] == "Running"
    assert answers["/pods/default/nope"][0] == 404
    assert 'pods "nope" not found in cache' in answers["/pods/default/nope"][1]["error"]
    assert answers["api reads"] == ["list /api/v1/pods"]  # the cache's LIST at start-up, and nothing else
    assert "api reads -> ['list /api/v1/pods']" in capsys.readouterr().out.splitlines()


def test_the_asgi_app_runs_as_a_script():
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "asgi_app.py")],
        env=env,
        cwd=EXAMPLES.parent,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "api reads -> ['list /api/v1/pods']" in done.stdout.splitlines()
