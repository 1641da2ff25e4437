"""examples/operator.py: a Widget gets its ConfigMap, status and Events, follows an edit, is cleaned up on delete."""

from __future__ import annotations

import os
import subprocess
import sys

from _examples_support import EXAMPLES


def test_the_operator_example_creates_follows_and_cleans_up(load_example):
    result = load_example("operator").main([])
    assert result["created"] == {
        "finalizers": ["example.com/cleanup"],
        "status.size": 2,
        "conditions": {"Synced": "True", "Ready": "True"},
        "configmap": {"size": "2"},
    }
    assert result["changed"]["configmap"] == {"size": "5"} and result["changed"]["status.size"] == 5
    assert result["cleaned up"] == ["demo"]
    assert result["events"] == [
        "Normal ChildApplied: ConfigMap demo has size 2",
        "Normal ChildApplied: ConfigMap demo has size 5",
        "Normal CleanedUp: released the widget's resources",
    ]


def test_the_operator_example_runs_as_a_script():
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "operator.py")],
        env=env,
        cwd=EXAMPLES.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "deleted after cleanup of ['demo']" in done.stdout.splitlines()
