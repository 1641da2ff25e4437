"""Fixtures of the hostile-server table: a scripted server, a fake clock, and a cached Config on both;
every module runs with busy processes beside it (``cpu_load``, ``tests/cpu_load.py``)."""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest
from _hostile_server import HostileServer, Script
from cpu_load import BusyLoad

from cloudcoil_cache.caching import Backoff, Cache, Tuning
from cloudcoil_cache.client import Config
from cloudcoil_cache.testing import FakeClock


@pytest.fixture(scope="module", autouse=True)
def _under_cpu_load(cpu_load: BusyLoad) -> BusyLoad:
    return cpu_load


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def tuned(clock: FakeClock) -> Callable[..., Tuning]:
    """``tuned(**overrides)`` → backoff 1 s doubling to 8 s with a fixed jitter draw (x1.5), every
    wait on ``clock``; the socket read timeout is real time (0.5 s)."""

    def make(**overrides: Any) -> Tuning:
        values: dict[str, Any] = dict(
            backoff=Backoff(initial=1.0, cap=8.0),
            watch_timeout=30.0,
            read_timeout=0.5,
            min_watch_duration=1.0,
            freeze_gc=False,
            clock=clock,
            rng=lambda: 0.5,
        )
        values.update(overrides)
        return Tuning(**values)

    return make


@pytest.fixture
def hostile() -> Iterator[Callable[[Script, Script], HostileServer]]:
    """``hostile(on_list, on_watch)`` → a started ``HostileServer`` (stopped at teardown)."""
    started: list[HostileServer] = []

    def start(on_list: Script, on_watch: Script) -> HostileServer:
        server = HostileServer(on_list, on_watch).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def cached() -> Iterator[Callable[..., Config]]:
    """``cached(server, tuning, **cache_options)`` → a Config caching Pods from the hostile server
    (strict reads, ``max_staleness=5`` unless given); closed at teardown."""
    from cloudcoil_cache.models.kubernetes.core.v1 import Pod

    made: list[Config] = []

    def make(server: HostileServer, tuning: Tuning, **options: Any) -> Config:
        options.setdefault("max_staleness", 5)
        options.setdefault("mode", "strict")
        config = Config(server=server.url, namespace="default", cache=Cache(resources=[Pod], tuning=tuning, **options))
        made.append(config)
        return config

    yield make
    for config in made:
        config.close()
