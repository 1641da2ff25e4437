"""Helpers for the controller tests: a call recorder, kubeconfig-backed configs."""

from __future__ import annotations

import threading
from typing import Any, Callable


class Calls:
    """Thread-safe record of reconcile calls; ``wait(pred)`` blocks on a Condition until it holds."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._cond = threading.Condition()

    def add(self, item: Any) -> None:
        with self._cond:
            self.items.append(item)
            self._cond.notify_all()

    def wait(self, pred: Callable[[list[Any]], bool], timeout: float = 10.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: pred(self.items), timeout):
                raise AssertionError(f"condition not met within {timeout}s; calls: {self.items[-30:]}")

    def snapshot(self) -> list[Any]:
        with self._cond:
            return list(self.items)
