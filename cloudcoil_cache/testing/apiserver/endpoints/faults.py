"""Injected failures for the fake server: "fail the next N requests" rules and stream settings."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Pattern

__all__ = ["FailRule", "FaultState", "VERBS"]

VERBS = frozenset({"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"})


@dataclass
class FailRule:
    """Answer the next ``remaining`` requests matching ``verb`` and ``path`` with ``code``."""

    remaining: int
    code: int
    verb: str | None
    path: str | Pattern[str] | None
    retry_after: float | None
    message: str | None

    def matches(self, verb: str, path: str) -> bool:
        if self.verb is not None and self.verb != verb:
            return False
        if self.path is None:
            return True
        if isinstance(self.path, str):
            return self.path in path
        return self.path.search(path) is not None


class FaultState:
    """Mutable fault settings shared by every connection thread (guarded by one lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rules: list[FailRule] = []
        self.delay = 0.0
        self.split_bytes: int | None = None
        self.split_pause = 0.0
        self.stalled = False

    def add_rule(
        self,
        n: int,
        code: int,
        verb: str | None,
        path: str | Pattern[str] | None,
        retry_after: float | None,
        message: str | None,
    ) -> None:
        if n < 1:
            raise ValueError(f"fail_next: n must be >= 1, got {n}")
        if not 400 <= code <= 599:
            raise ValueError(f"fail_next: code must be an HTTP error code (400-599), got {code}")
        if verb is not None and verb not in VERBS:
            raise ValueError(f"fail_next: unknown verb {verb!r}; expected one of {sorted(VERBS)}")
        if isinstance(path, str) and path.startswith("re:"):
            path = re.compile(path[3:])
        with self.lock:
            self.rules.append(FailRule(n, code, verb, path, retry_after, message))

    def take_rule(self, verb: str, path: str) -> FailRule | None:
        """Consume one use of the first rule matching this request, if any."""
        with self.lock:
            for rule in self.rules:
                if rule.matches(verb, path):
                    rule.remaining -= 1
                    if rule.remaining <= 0:
                        self.rules.remove(rule)
                    return rule
        return None

    def clear(self) -> None:
        with self.lock:
            self.rules.clear()
            self.delay = 0.0
            self.split_bytes = None
            self.split_pause = 0.0
            self.stalled = False
