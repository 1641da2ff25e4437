"""The one clock the reflectors, read policy, work queues, rate limiters and leader election run on (injectable)."""

from __future__ import annotations

import threading
import time
from typing import Callable, Protocol, Union, runtime_checkable

__all__ = ["Clock", "ClockLike", "SYSTEM_CLOCK", "SystemClock", "as_clock"]


@runtime_checkable
class Clock(Protocol):
    """Monotonic seconds and a wait that ends early when an event is set.

    Tests inject ``cloudcoil_cache.testing.FakeClock`` to drive backoff, staleness, resync, work-queue
    delays, rate limits and leader election without waiting for wall time.
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

#: What a ``clock=`` parameter accepts: a ``Clock``, or (as before there was one Clock) a function
#: returning monotonic seconds, whose waits are then real time.
ClockLike = Union[Clock, Callable[[], float]]


class _FunctionClock:
    """A ``Clock`` over a function returning seconds; waits are ``Event.wait`` (real time)."""

    def __init__(self, func: Callable[[], float]) -> None:
        self._func = func

    def now(self) -> float:
        return self._func()

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        return event.wait(timeout)

    def __repr__(self) -> str:
        return f"_FunctionClock({self._func!r})"


def as_clock(clock: ClockLike | None) -> Clock:
    """``clock`` as a ``Clock``: None is the system clock, a bare function is wrapped."""
    if clock is None:
        return SYSTEM_CLOCK
    if isinstance(clock, Clock):
        return clock
    if callable(clock):
        return _FunctionClock(clock)
    raise TypeError(
        f"clock= expects a Clock (now() and wait()) or a function returning seconds, got {type(clock).__name__}"
    )
