"""Ctrl-C and SIGTERM as a stop Event, so commands end cleanly (threads joined, exit status 0)."""

from __future__ import annotations

import contextlib
import signal
import threading
from types import FrameType
from typing import Any, Iterator

__all__ = ["stop_on_signals"]


@contextlib.contextmanager
def stop_on_signals(stop: threading.Event) -> Iterator[threading.Event]:
    """Inside the block SIGINT and SIGTERM set ``stop`` instead of raising; the old handlers come back after.

    Off the main thread (where handlers cannot be installed) this does nothing but yield ``stop``.
    """
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous: dict[signal.Signals, Any] = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, handler)
    try:
        yield stop
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
