"""The clock the reflectors and the read policy run on: monotonic time and interruptible waits (injectable)."""

from __future__ import annotations

import threading
import time
from typing import Protocol

__all__ = ["Clock", "SYSTEM_CLOCK", "SystemClock"]


class Clock(Protocol):
    """Monotonic seconds and a wait that ends early when an event is set.

    Tests inject ``cloudcoil_cache.testing.FakeClock`` to drive backoff, staleness and resync
    without waiting for wall time.
    """

    def now(self) -> float: ...

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        """Wait until ``event`` is set (True) or ``timeout`` seconds pass on this clock (False)."""
        ...


class SystemClock:
    """``time.monotonic`` and ``Event.wait``."""

    def now(self) -> float:
        return time.monotonic()

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        return event.wait(timeout)

    def __repr__(self) -> str:
        return "SystemClock()"


SYSTEM_CLOCK = SystemClock()
