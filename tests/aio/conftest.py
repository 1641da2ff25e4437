"""Fixtures for the asyncio tests (server, kubeconfig and make_config come from tests/conftest.py)."""

from __future__ import annotations

import pytest

from cloudcoil_cache.testing import FakeAPIServer, make_pod


@pytest.fixture
def seeded(server: FakeAPIServer) -> list[str]:
    """Three pods in ``default`` and one in ``other``; returns the names in ``default``."""
    names = ["web-0", "web-1", "web-2"]
    for index, name in enumerate(names):
        server.create("pods", make_pod(name, "default", index=index, labels={"app": "web"}), "default")
    server.create("pods", make_pod("db-0", "other", labels={"app": "db"}), "other")
    return names
