"""``mypy --strict`` on the package (configuration in pyproject.toml: strict, generated models included)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Checked on their own first, so a regression there is named even when the whole-package test fails.
CLEAN = ("cloudcoil_cache/cli/", "cloudcoil_cache/__main__.py")


@pytest.fixture(scope="module")
def mypy_errors() -> list[str]:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (it comes with the test extra)")
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    errors = [line for line in done.stdout.splitlines() if re.match(r"^\S+\.py:\d+: error:", line)]
    assert errors or done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]  # mypy itself failed
    return errors


def test_the_command_line_is_strictly_typed(mypy_errors: list[str]):
    mine = [line for line in mypy_errors if line.startswith(CLEAN)]
    assert not mine, "\n".join(mine)


def test_mypy_strict_passes_on_the_whole_package(mypy_errors: list[str]):
    assert not mypy_errors, f"{len(mypy_errors)} mypy errors:\n" + "\n".join(mypy_errors[:50])
