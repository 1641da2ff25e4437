"""Fixtures for running the examples of examples/ as their users would."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterator

import pytest
from _examples_support import ARTIFACTS, EXAMPLES


@pytest.fixture
def load_example(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], ModuleType]]:
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


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / ".gitignore").write_text("*\n")  # outputs of test runs, never committed
    return ARTIFACTS
