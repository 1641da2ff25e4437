"""Fixtures for informer tests: a fake API server on loopback and Configs with fast reflector timing."""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest

from cloudcoil_cache.caching import Cache, Tuning
from cloudcoil_cache.client import Config
from cloudcoil_cache.testing import FakeAPIServer

from _informer_helpers import FAST


@pytest.fixture
def server() -> Iterator[FakeAPIServer]:
    with FakeAPIServer(bookmark_interval=0.5) as srv:
        yield srv


@pytest.fixture
def kubeconfig(server: FakeAPIServer, tmp_path: Any) -> str:
    return str(server.write_kubeconfig(tmp_path / "kubeconfig"))


@pytest.fixture
def make_config(kubeconfig: str) -> Callable[..., Config]:
    """``make_config(resources=[Pod], tuning=..., **cache_options)`` → a cached Config for the server."""
    made: list[Config] = []

    def make(tuning: Tuning = FAST, namespace: str | None = None, **options: Any) -> Config:
        config = Config(kubeconfig=kubeconfig, namespace=namespace, cache=Cache(tuning=tuning, **options))
        made.append(config)
        return config

    yield make  # type: ignore[misc]
    for config in made:
        config.close()


