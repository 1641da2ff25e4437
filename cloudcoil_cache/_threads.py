"""The library's own executors for blocking work called from asyncio (discovery, sync waits, stop/join, I/O)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, TypeVar

from cloudcoil_cache import _fork, _runnable

__all__ = ["hold_executor", "release_executor", "run_blocking", "run_control", "submit_control"]

R = TypeVar("R")

# The executor the current thread is a worker of (set by each worker's initializer): a pool released
# from one of its own workers (a future's done-callback runs there) must not join, i.e. wait for, itself.
_worker = threading.local()


def _mark_worker(owner: list[ThreadPoolExecutor], name: str) -> None:
    _worker.owner = owner
    _runnable.adopt(name)  # a library thread (the executor started it): in the registry with its pool


def _is_worker_of(owner: list[ThreadPoolExecutor]) -> bool:
    return getattr(_worker, "owner", None) is owner


class _Pool:
    """A thread pool that exists only while it is used.

    Used means: an async scope holds it (``hold``/``release``) or a call is submitted and not done.
    When the last use ends, its idle threads are joined, so a program (or a test) that leaves its
    last ``async with config:`` has no cloudcoil thread left running. A call whose awaiting task was
    cancelled is not waited for (that would block the event loop); its thread ends when it returns.
    """

    def __init__(self, name: str, max_workers: int) -> None:
        self._name = name
        self._max_workers = max_workers
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._owner: list[ThreadPoolExecutor] = []  # identifies the current executor's workers
        self._retired: list[ThreadPoolExecutor] = []  # shut down by one of its workers: joined later
        self._users = 0  # holds + submitted calls not done
        self._pending = 0  # submitted calls not done (queued or running)

    def after_fork(self) -> None:
        """In a fork child: the executor's threads are the parent's (it would take work and never
        run it): forgotten, with a new lock; the next use makes a new executor."""
        if self._executor is not None:
            _fork.abandon(self._executor)
        self._lock = threading.Lock()
        self._executor = None
        self._owner = []
        self._retired = []
        self._users = 0
        self._pending = 0

    def hold(self) -> ThreadPoolExecutor:
        with self._lock:
            self._users += 1
            if self._executor is None:
                self._owner = []
                self._executor = ThreadPoolExecutor(
                    max_workers=self._max_workers,
                    thread_name_prefix=self._name,
                    initializer=_mark_worker,
                    initargs=(self._owner, f"{self._name} pool"),
                )
            return self._executor

    def release(self) -> None:
        """Drop one use; the last one shuts the executor down.

        Its idle threads are joined, except from one of its own workers (the last call's
        done-callback runs there): that worker cannot join itself, so the executor is only told to
        shut down (its threads end once they return) and a later release joins it.
        """
        with self._lock:
            self._users -= 1
            if self._users > 0 or self._executor is None:
                return
            executor, self._executor = self._executor, None
            idle = self._pending == 0
            own_worker = _is_worker_of(self._owner)
            if own_worker:
                self._retired.append(executor)
                retired = []
            else:
                retired, self._retired = self._retired, []
        if own_worker:
            executor.shutdown(wait=False)
            return
        for old in retired:
            old.shutdown(wait=True)  # their workers were already told to end: instant
        executor.shutdown(wait=idle)  # idle threads exit at once: joining them is instant

    def submit(self, func: Callable[..., R], *args: Any) -> concurrent.futures.Future[R]:
        """Run ``func(*args)`` with the caller's context variables; the pool lives until it is done."""
        executor = self.hold()
        ctx = contextvars.copy_context()
        with self._lock:
            self._pending += 1
        future = executor.submit(ctx.run, func, *args)
        future.add_done_callback(self._done)  # also runs when a queued call is cancelled
        return future

    def _done(self, _: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._pending -= 1
        self.release()


# Control work (discovery, start/stop of scopes, sync waits) never queues behind user I/O
# (live reads, writes), so a busy application can always enter and leave its scopes.
_control = _Pool("cloudcoil-control", 4)
_io = _Pool("cloudcoil-blocking", 32)
_fork.on_fork(_control.after_fork)
_fork.on_fork(_io.after_fork)


def hold_executor() -> None:
    """Keep the executors alive (an async scope is open)."""
    _control.hold()
    _io.hold()


def release_executor() -> None:
    """Drop a hold; the last one joins the executors' idle threads."""
    _control.release()
    _io.release()


async def run_blocking(func: Callable[..., R], *args: Any) -> R:
    """Run blocking I/O ``func(*args)`` on the library's I/O executor, carrying the caller's
    context variables (like ``asyncio.to_thread``), and await the result."""
    return await asyncio.wrap_future(_io.submit(func, *args))


async def run_control(func: Callable[..., R], *args: Any) -> R:
    """Like ``run_blocking``, on the control executor (scope start/stop, discovery, sync waits)."""
    return await asyncio.wrap_future(_control.submit(func, *args))


def submit_control(func: Callable[..., R], *args: Any) -> concurrent.futures.Future[R]:
    """Start ``func(*args)`` on the control executor without awaiting it (from a done-callback)."""
    return _control.submit(func, *args)
