"""Fixtures for the asyncio tests: a fake API server on loopback and cached Configs for it."""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest

from cloudcoil_cache.caching import Cache, Tuning
from cloudcoil_cache.client import Config
from cloudcoil_cache.testing import FakeAPIServer, make_pod

from _aio_support import FAST


@pytest.fixture
def server() -> Iterator[FakeAPIServer]:
    with FakeAPIServer(bookmark_interval=0.5) as srv:
        yield srv


@pytest.fixture
def kubeconfig(server: FakeAPIServer, tmp_path: Any) -> str:
    return str(server.write_kubeconfig(tmp_path / "kubeconfig"))


@pytest.fixture
def make_config(kubeconfig: str) -> Iterator[Callable[..., Config]]:
    """``make_config(resources=[Pod], namespace=None, tuning=FAST, **cache_options)`` → a cached Config."""
    made: list[Config] = []

    def make(tuning: Tuning = FAST, namespace: str | None = None, **options: Any) -> Config:
        config = Config(kubeconfig=kubeconfig, namespace=namespace, cache=Cache(tuning=tuning, **options))
        made.append(config)
        return config

    yield make
    for config in made:
        config.close()


@pytest.fixture
def seeded(server: FakeAPIServer) -> list[str]:
    """Three pods in ``default`` and one in ``other``; returns the names in ``default``."""
    names = ["web-0", "web-1", "web-2"]
    for index, name in enumerate(names):
        server.create("pods", make_pod(name, "default", index=index, labels={"app": "web"}), "default")
    server.create("pods", make_pod("db-0", "other", labels={"app": "db"}), "other")
    return names
