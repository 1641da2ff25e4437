"""Fixtures for informer tests: a fake API server on loopback and Configs with fast reflector timing."""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator

import pytest

from cloudcoil_cache.caching import Backoff, Cache, Tuning
from cloudcoil_cache.client import Config
from cloudcoil_cache.testing import FakeAPIServer, make_pod

#: Reflector timing for tests: quick backoff, short read timeout; the semantics are unchanged.
FAST = Tuning(backoff=Backoff(initial=0.05, cap=0.4), watch_timeout=30.0, read_timeout=5.0,
              page_size=500, min_watch_duration=0.0)


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


def seed(server: FakeAPIServer, n: int, namespace: str = "default", prefix: str = "pod",
         **labels: str) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        pod = make_pod(f"{prefix}-{i}", namespace, index=i, labels=dict(labels) or None)
        out.append(server.create("pods", pod, namespace))
    return out


class Recorder:
    """Collects handler calls; ``wait(pred)`` blocks on a Condition until ``pred(events)`` holds."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []
        self._cond = threading.Condition()

    def add(self, kind: str, value: Any) -> None:
        with self._cond:
            self.events.append((kind, value))
            self._cond.notify_all()

    def wait(self, pred: Callable[[list[tuple[str, Any]]], bool], timeout: float = 10.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: pred(self.events), timeout):
                raise AssertionError(f"condition not met within {timeout}s; events: "
                                     f"{[(k, _name(v)) for k, v in self.events][-20:]}")

    def names(self, kind: str) -> list[str]:
        with self._cond:
            return [_name(v) for k, v in self.events if k == kind]

    def hook(self, informer: Any) -> None:
        informer.on_add(lambda o: self.add("add", o))
        informer.on_update(lambda old, new: self.add("update", (old, new)))
        informer.on_delete(lambda o: self.add("delete", o))


def _name(value: Any) -> str:
    obj = value[1] if isinstance(value, tuple) else value
    return obj.metadata.name
