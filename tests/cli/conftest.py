"""Helpers for running the command line as a user does: ``python -m cloudcoil_cache ...`` in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
from _cli_support import ROOT


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a user with no cluster configured (no KUBECONFIG, an empty home)."""
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    env["HOME"] = str(tmp_path / "home")
    env["COLUMNS"] = "200"
    return env


@pytest.fixture
def cli(cli_env: dict[str, str]) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``cli("get", "po", "--fake")`` runs the command line to completion and returns the result."""

    def run(*args: str, timeout: float = 60, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cloudcoil_cache", *args],
            cwd=ROOT,
            env=env or cli_env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run
