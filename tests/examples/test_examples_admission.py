"""examples/admission.py: a ConfigMap naming a missing Secret is denied from the cache, then admitted and labelled."""

from __future__ import annotations

import os
import subprocess
import sys

from _examples_support import EXAMPLES

DENIED = (
    '403 Forbidden: admission webhook "validate-0.configmap-secrets.example.com" denied the request: '
    'Secret "app-credentials" referenced by annotation example.com/secret does not exist'
)


def test_the_admission_example_denies_admits_labels_and_warns(load_example):
    result = load_example("admission").main([])
    assert result["denied"] == DENIED
    assert result["admitted labels"] == {"example.com/checked": "true"}
    assert result["plain labels"] == {"example.com/checked": "true"}
    assert result["warnings"] == ["ConfigMap plain names no Secret (annotation example.com/secret)"]
    # the probe and the first create missed, the second create hit: all from the cache, none from the API
    assert result["cached reads"] == {"hit": 1, "miss": 2}
    assert result["secret reads from the API"] == []
    assert result["webhook calls"] >= 6  # mutating + validating for each create (the probe retries, too)


def test_the_admission_example_runs_as_a_script():
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "admission.py")],
        env=env,
        cwd=EXAMPLES.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert f"1. denied: {DENIED}" in lines
    assert "2. admitted once the Secret exists; labels {'example.com/checked': 'true'}" in lines
