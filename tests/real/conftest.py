"""Fixtures of the real tier: one RealAPIServer per session, a fresh namespace per test, Configs."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from cluster_support import FAST

from cloudcoil_cache.caching import Cache, Tuning
from cloudcoil_cache.client import Config
from cloudcoil_cache.testing import RealAPIServer

_namespaces = itertools.count()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.real)


@pytest.fixture
def real(real_api_server: RealAPIServer) -> RealAPIServer:
    return real_api_server


@pytest.fixture
def namespace(real: RealAPIServer) -> str:
    """A namespace of its own for each test (the server is shared by the session)."""
    name = f"test-{next(_namespaces)}"
    status, body = real.request(
        "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    assert status == 201, body
    return name


@pytest.fixture
def kubeconfig(real: RealAPIServer, namespace: str, tmp_path: Path) -> str:
    """The admin kubeconfig, its context's namespace the test's own."""
    return real.write_kubeconfig(tmp_path / "kubeconfig", namespace=namespace)


@pytest.fixture
def make_config(kubeconfig: str) -> Iterator[Callable[..., Config]]:
    """``make_config(tuning=FAST, kubeconfig=None, **cache options)`` → a cached Config (closed at teardown);
    ``cache=False`` gives an uncached one."""
    made: list[Config] = []

    def make(tuning: Tuning = FAST, kubeconfig_path: str | None = None, cache: bool = True, **options: Any) -> Config:
        config = Config(
            kubeconfig=kubeconfig_path or kubeconfig, cache=Cache(tuning=tuning, **options) if cache else False
        )
        made.append(config)
        return config

    yield make
    for config in made:
        config.close()


@pytest.fixture
def live(make_config: Callable[..., Config]) -> Config:
    """An uncached admin Config (writes and server-side reads)."""
    return make_config(cache=False)
