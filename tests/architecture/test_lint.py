"""The code base passes ruff (pyflakes, pycodestyle, import order, complexity) and is as ``ruff format`` writes it
(configuration in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (it comes with the test extra)")
    result = subprocess.run(
        [ruff, "check", "cloudcoil_cache", "tests", "benchmarks", "examples", "tools"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_tree_is_formatted_by_ruff_format():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (it comes with the test extra)")
    result = subprocess.run(
        [ruff, "format", "--check", "cloudcoil_cache", "tests", "benchmarks", "examples", "tools"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, "run `ruff format` on:\n" + result.stdout + result.stderr
