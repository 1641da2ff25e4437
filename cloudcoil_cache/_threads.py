"""The library's own executor for blocking work called from asyncio (discovery, sync waits, stop/join)."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, TypeVar

__all__ = ["hold_executor", "release_executor", "run_blocking"]

R = TypeVar("R")

# Blocking work of async code runs here, never on the loop's default executor: a long sync must
# not starve the application's own to_thread()/run_in_executor(None, ...) calls.
#
# The executor lives only while it is used: while an async scope is open (hold/release) or a call
# is in flight. When the last use ends its idle threads are joined, so a program (or a test) that
# leaves its last `async with config:` has no cloudcoil thread left running.
_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_users = 0  # holds + calls awaiting a result
_running = 0  # calls executing on a worker right now
_MAX_WORKERS = 8


def _acquire() -> ThreadPoolExecutor:
    global _executor, _users
    with _lock:
        _users += 1
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=_MAX_WORKERS, thread_name_prefix="cloudcoil-blocking")
        return _executor


def _release() -> None:
    global _executor, _users
    with _lock:
        _users -= 1
        if _users > 0 or _executor is None:
            return
        executor, _executor = _executor, None
        idle = _running == 0
    # Idle threads exit at once, so joining them is instant. A call still running (its awaiting
    # task was cancelled) is not waited for: that would block the event loop; its thread ends
    # when the call returns.
    executor.shutdown(wait=idle)


def _call(func: Callable[..., R], *args: Any) -> R:
    global _running
    with _lock:
        _running += 1
    try:
        return func(*args)
    finally:
        with _lock:
            _running -= 1


def hold_executor() -> None:
    """Keep the executor alive (an async scope is open)."""
    _acquire()


def release_executor() -> None:
    """Drop a hold; the last one joins the executor's idle threads."""
    _release()


async def run_blocking(func: Callable[..., R], *args: Any) -> R:
    """Run ``func(*args)`` on the library's executor, carrying the caller's context variables
    (like ``asyncio.to_thread``), and await the result."""
    loop = asyncio.get_running_loop()
    ctx = contextvars.copy_context()
    executor = _acquire()
    try:
        return await loop.run_in_executor(executor, ctx.run, _call, func, *args)  # type: ignore[arg-type]
    finally:
        _release()
