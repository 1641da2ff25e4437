"""reconcile_timeout: running a reconcile under a deadline, abandoning a sync one that overruns it."""

from __future__ import annotations

import concurrent.futures
import contextvars
import logging
import threading
import time
from typing import Any, Callable

from cloudcoil_cache._deadline import Call, DeadlinePool, PoolClosed
from cloudcoil_cache.errors import CloudcoilError

__all__ = ["Deadline", "ReconcileTimeout"]


class ReconcileTimeout(CloudcoilError):
    """A reconcile ran past the controller's ``reconcile_timeout``: it failed, and its key is retried
    with the key's backoff (a coroutine reconcile was cancelled; a plain function's thread is left to end)."""


class Deadline:
    """Runs a controller's reconciles under ``timeout`` seconds.

    A plain function runs on a helper thread (``controller-<name>-reconcile-<n>``, with the worker's
    context variables; idle helpers are reused, and ended by ``close()``) while the worker waits.
    Past the timeout the call is abandoned: the worker raises ``ReconcileTimeout`` and goes on, the
    helper thread runs on, and the key stays busy until it ends (the helper calls ``done(key)``), so a
    key is still never reconciled twice at once.

    The bound: at most ``limit`` abandoned calls at once. A worker that would start a reconcile
    while the limit is reached waits until one of them ends (or the run stops), so a run never has
    more than ``2 x workers`` reconcile threads besides its workers (one per worker's call, and
    ``limit`` finishing abandoned calls). A coroutine reconcile is cancelled instead.
    """

    def __init__(
        self,
        name: str,
        timeout: float,
        *,
        limit: int,
        done: Callable[[str], None],
        stopping: threading.Event,
        logger: logging.Logger,
    ) -> None:
        self.name = name
        self.logger = logger
        self.timeout = timeout
        self.limit = limit
        self._done = done
        self._stopping = stopping
        self._pool = DeadlinePool(
            f"controller-{name}-reconcile", 2 * limit, max_abandoned=limit, on_abandoned_end=self._ended
        )
        self._handed_off = threading.local()  # per worker: the key whose done() a helper took over

    # ------------------------------------------------------------ sync
    def call(self, key: str, func: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        """``func(*args)`` on a helper thread, waiting up to ``timeout``; ``ReconcileTimeout`` past it."""
        context = contextvars.copy_context()
        try:
            call = self._pool.submit(lambda: context.run(func, *args), tag=key, stopping=self._stopping)
        except PoolClosed:
            raise concurrent.futures.CancelledError() from None  # the run is stopping: start nothing more
        if not call.done.wait(self.timeout) and self._pool.abandon(call):
            self._handed_off.key = key
            raise ReconcileTimeout(self._message(key) + "; abandoned, its thread ends in the background")
        call.done.wait()  # it ended just as the timeout passed: set at once
        return call.outcome()

    def _ended(self, call: Call) -> None:
        """An abandoned reconcile ended (on its helper thread): the key may be reconciled again now."""
        key = str(call.tag)
        self._done(key)
        self.logger.warning(
            "controller %s: %s: the reconcile abandoned at its timeout ended after %.1fs%s",
            self.name,
            key,
            time.monotonic() - call.started,
            f" with {type(call.error).__name__}: {call.error}" if call.error is not None else "",
        )

    def handed_off(self, key: str) -> bool:
        """Did this worker's last call of ``key`` time out, handing ``done(key)`` to its helper thread?
        (Asked once, by the worker, where it would call ``done(key)``.)"""
        handed = getattr(self._handed_off, "key", None)
        self._handed_off.key = None
        return handed == key

    # ------------------------------------------------------- coroutine
    def result(self, key: str, future: concurrent.futures.Future[Any]) -> Any:
        """The coroutine reconcile's result, waiting up to ``timeout``; past it the task is cancelled."""
        try:
            return future.result(self.timeout)
        except concurrent.futures.TimeoutError:
            if not future.cancel() and future.done():
                return future.result()
            raise ReconcileTimeout(self._message(key) + "; cancelled") from None

    # ------------------------------------------------------- lifecycle
    def close(self) -> None:
        """The run is stopping: end the idle helpers, wake workers waiting for an abandoned call to end."""
        self._pool.close()

    def threads(self) -> list[threading.Thread]:
        """The helper threads running now (idle ones, and ones finishing an abandoned call)."""
        return self._pool.threads()

    @property
    def abandoned(self) -> int:
        return self._pool.abandoned

    def _message(self, key: str) -> str:
        return f"controller {self.name!r}: reconcile of {key} ran past reconcile_timeout ({self.timeout:g}s)"
