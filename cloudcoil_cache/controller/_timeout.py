"""reconcile_timeout: running a reconcile under a deadline, abandoning a sync one that overruns it."""

from __future__ import annotations

import concurrent.futures
import contextvars
import itertools
import logging
import threading
import time
from typing import Any, Callable

from cloudcoil_cache.errors import CloudcoilError

__all__ = ["Deadline", "ReconcileTimeout"]


class ReconcileTimeout(CloudcoilError):
    """A reconcile ran past the controller's ``reconcile_timeout``: it failed, and its key is retried
    with the key's backoff (a coroutine reconcile was cancelled; a plain function's thread is left to end)."""


class _Call:
    """One sync reconcile on its helper thread: its result, and who calls ``done(key)`` for it."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.finished = threading.Event()
        self.abandoned = False
        self.result: Any = None
        self.error: BaseException | None = None


class _Helper:
    """A thread that runs the sync reconciles handed to it, one at a time, until it is closed or one
    of them is abandoned (then it ends with that call)."""

    def __init__(self, owner: Deadline, name: str) -> None:
        self._owner = owner
        self._work: tuple[_Call, contextvars.Context, Callable[..., Any], tuple[Any, ...]] | None = None
        self._ready = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def hand(self, call: _Call, context: contextvars.Context, func: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self._work = (call, context, func, args)
        self._ready.set()

    def close(self) -> None:
        self._work = None
        self._ready.set()

    def _loop(self) -> None:
        try:
            while True:
                self._ready.wait()
                self._ready.clear()
                work, self._work = self._work, None
                if work is None or not self._owner._run(*work):
                    return  # closed, or its call was abandoned
        finally:
            self._owner._exited(self)


class Deadline:
    """Runs a controller's reconciles under ``timeout`` seconds.

    A plain function runs on a helper thread (``controller-<name>-reconcile-<n>``, with the worker's
    context variables; an idle helper is reused, and ended by ``close()``) while the worker waits.
    Past the timeout the call is abandoned: the worker raises ``ReconcileTimeout`` and goes on, the
    helper thread runs on, and the key stays busy until it ends (the helper calls ``done(key)``), so a
    key is still never reconciled twice at once.

    The bound: at most ``limit`` abandoned calls at once. A worker that would start a reconcile
    while the limit is reached waits until one of them ends (or the run stops), so a run never has
    more than ``2 x workers`` reconcile threads besides its workers (a helper each, and ``limit``
    finishing abandoned calls). A coroutine reconcile is cancelled instead.
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
        self._cond = threading.Condition(threading.Lock())  # guards the sets below
        self._abandoned: set[_Call] = set()
        self._helpers: set[_Helper] = set()  # running: idle, busy, or finishing an abandoned call
        self._idle: list[_Helper] = []
        self._numbers = itertools.count()
        self._handed_off = threading.local()  # per worker: the key whose done() a helper took over

    # ------------------------------------------------------------ sync
    def call(self, key: str, func: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        """``func(*args)`` on a helper thread, waiting up to ``timeout``; ``ReconcileTimeout`` past it."""
        with self._cond:
            self._cond.wait_for(lambda: len(self._abandoned) < self.limit or self._stopping.is_set())
            if self._stopping.is_set():
                raise concurrent.futures.CancelledError()  # the run is stopping: start nothing more
            helper = self._idle.pop() if self._idle else None
            if helper is None:
                helper = _Helper(self, f"controller-{self.name}-reconcile-{next(self._numbers)}")
                self._helpers.add(helper)
                helper.thread.start()
        call = _Call(key)
        helper.hand(call, contextvars.copy_context(), func, args)
        if not call.finished.wait(self.timeout):
            with call.lock:
                if not call.finished.is_set():
                    call.abandoned = True
                    with self._cond:
                        self._abandoned.add(call)
                    self._handed_off.key = key
                    raise ReconcileTimeout(self._message(key) + "; abandoned, its thread ends in the background")
        with self._cond:
            if self._stopping.is_set():
                helper.close()
            else:
                self._idle.append(helper)
        if call.error is not None:
            raise call.error
        return call.result

    def _run(self, call: _Call, context: contextvars.Context, func: Callable[..., Any], args: tuple[Any, ...]) -> bool:
        """Run one call on its helper; False when it was abandoned (the helper then ends)."""
        try:
            call.result = context.run(func, *args)
        except BaseException as exc:  # handed to the worker, or (abandoned) dropped with the call
            call.error = exc
        finally:
            with call.lock:
                call.finished.set()
                abandoned = call.abandoned
            if abandoned:
                self._done(call.key)  # the key may be reconciled again now
                self.logger.warning(
                    "controller %s: %s: the reconcile abandoned at its timeout ended after %.1fs%s",
                    self.name,
                    call.key,
                    time.monotonic() - call.started,
                    f" with {type(call.error).__name__}: {call.error}" if call.error is not None else "",
                )
                with self._cond:
                    self._abandoned.discard(call)
                    self._cond.notify_all()
        return not abandoned

    def _exited(self, helper: _Helper) -> None:
        with self._cond:
            self._helpers.discard(helper)

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
        with self._cond:
            idle, self._idle = self._idle, []
            self._cond.notify_all()
        for helper in idle:
            helper.close()

    def threads(self) -> list[threading.Thread]:
        """The helper threads running now (idle ones, and ones finishing an abandoned call)."""
        with self._cond:
            return [h.thread for h in self._helpers]

    @property
    def abandoned(self) -> int:
        with self._cond:
            return len(self._abandoned)

    def _message(self, key: str) -> str:
        return f"controller {self.name!r}: reconcile of {key} ran past reconcile_timeout ({self.timeout:g}s)"
