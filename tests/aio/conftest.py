"""Fixtures for the asyncio tests (server, kubeconfig and make_config come from tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from cloudcoil_cache.client import Config
from cloudcoil_cache.testing import FakeAPIServer, make_pod


@pytest.fixture
def seeded(server: FakeAPIServer) -> list[str]:
    """Three pods in ``default`` and one in ``other``; returns the names in ``default``."""
    names = ["web-0", "web-1", "web-2"]
    for index, name in enumerate(names):
        server.create("pods", make_pod(name, "default", index=index, labels={"app": "web"}), "default")
    server.create("pods", make_pod("db-0", "other", labels={"app": "db"}), "other")
    return names


@pytest.fixture
def found_at_first_use(kubeconfig: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Config]:
    """``found_at_first_use(**Config arguments)``: a Config made while no kubeconfig can be found, whose
    discovery (at first use, as for in-cluster credentials) then finds ``kubeconfig`` through
    ``KUBECONFIG``: a Config whose first use reads a file (closed at teardown by the caller's scope)."""
    home = tmp_path / "empty-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)

    def make(**kwargs: Any) -> Config:
        config = Config(**kwargs)  # nothing to read yet: construction checks nothing
        monkeypatch.setenv("KUBECONFIG", kubeconfig)
        return config

    return make
