"""Fixtures for cache tests: a fake API server on loopback and cached Configs with fast reflector timing."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from cloudcoil_cache.caching import Cache, Tuning
from cloudcoil_cache.client import Config
from cloudcoil_cache.testing import FakeAPIServer

from _cache_helpers import FAST


@pytest.fixture
def server() -> Iterator[FakeAPIServer]:
    with FakeAPIServer(bookmark_interval=0.5) as srv:
        yield srv


@pytest.fixture
def kubeconfig(server: FakeAPIServer, tmp_path: Path) -> str:
    return str(server.write_kubeconfig(tmp_path / "kubeconfig"))


@pytest.fixture
def make_config(kubeconfig: str) -> Iterator[Callable[..., Config]]:
    """``make_config(resources=[Pod], tuning=..., **cache_options)`` → a cached Config for the server.

    Every Config made is closed at teardown (tests unwind their own scopes with ``with``/``finally``).
    """
    made: list[Config] = []

    def make(tuning: Tuning = FAST, namespace: str | None = None, **options: Any) -> Config:
        config = Config(kubeconfig=kubeconfig, namespace=namespace, cache=Cache(tuning=tuning, **options))
        made.append(config)
        return config

    yield make
    for config in made:
        config.close()
