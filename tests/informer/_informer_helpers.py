"""Helpers for informer tests: fast reflector timing, seeding, and a Condition-based event recorder."""

from __future__ import annotations

import threading
from typing import Any, Callable

from cloudcoil_cache.caching import Backoff, Tuning
from cloudcoil_cache.testing import FakeAPIServer, make_pod

#: Reflector timing for tests: quick backoff, short read timeout; the semantics are unchanged.
FAST = Tuning(backoff=Backoff(initial=0.05, cap=0.4), watch_timeout=30.0, read_timeout=5.0,
              page_size=500, min_watch_duration=0.0)


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
