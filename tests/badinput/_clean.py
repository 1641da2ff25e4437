"""The check every bad-input row ends with: a typed error naming the problem, and nothing left running."""

from __future__ import annotations

import threading
from typing import Any, Callable

import pytest


def fails_cleanly(action: Callable[[], Any], error: type[BaseException], match: str) -> BaseException:
    """Run ``action``; it must raise ``error`` whose message matches ``match``, and every thread it
    started must end (joined, never slept for)."""
    before = set(threading.enumerate())
    with pytest.raises(error, match=match) as info:
        action()
    started = [
        t for t in threading.enumerate() if t not in before and not t.name.startswith(("tiny-server", "fake-apiserver"))
    ]  # the test server
    for t in started:
        t.join(5)
    assert [t.name for t in started if t.is_alive()] == [], "a failed call left threads running"
    return info.value
