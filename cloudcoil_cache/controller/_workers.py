"""Workers: one run of a controller's worker threads, taking keys from its queue and acting on each outcome."""

from __future__ import annotations

import concurrent.futures
import contextvars
import inspect
import logging
import threading
import time
from typing import Any, Callable, Mapping

import attrs

from cloudcoil_cache._runnable import RunnableThread, deadline_after, remaining
from cloudcoil_cache.controller._context import CachedKind, Context
from cloudcoil_cache.controller._fence import Fence, LeadershipLost
from cloudcoil_cache.controller._informers import Source
from cloudcoil_cache.controller._keys import split_key
from cloudcoil_cache.controller._loop import LoopThread
from cloudcoil_cache.controller._observe import ControllerObserver
from cloudcoil_cache.controller._outcomes import Result, TerminalError, Wait
from cloudcoil_cache.controller._queue import Priority, WorkQueue
from cloudcoil_cache.controller._status_report import ReconcileCounts
from cloudcoil_cache.controller._timeout import Deadline

__all__ = ["Around", "Reconciler", "Workers"]

#: Runs around each pass (the operator's writes): ``around(obj, ctx, invoke)``, where
#: ``invoke(reconciler, obj)`` calls a reconcile or finalize function as the workers do.
Around = Callable[[Any, Context, Callable[["Reconciler", Any], Any]], Any]


@attrs.frozen
class Reconciler:
    """A reconcile function and how it is called: ``f(obj)`` or ``f(obj, ctx)``, plain or a coroutine
    function; ``every``: also reconcile each object that many seconds after its last success."""

    func: Callable[..., Any]
    pass_ctx: bool
    is_async: bool
    every: float | None = None

    @classmethod
    def of(cls, func: Callable[..., Any], every: float | None = None) -> Reconciler:
        return cls(func, _takes_context(func), inspect.iscoroutinefunction(func), every)


class Workers:
    """One run of a controller's workers (controller-runtime's ``reconcileHandler``): a fresh queue,
    ``count`` threads taking keys from it, an event loop for a coroutine reconcile function, and
    what each outcome does to its key.

    A worker reads the primary from the controller's informers (``sources()``); an object gone, or
    no longer ``in_scope``, is not reconciled. Created (queue and loop) under the controller's lock;
    ``start()`` starts the threads, ``stop()`` ends the run.
    """

    def __init__(
        self,
        name: str,
        kind: Any,
        reconciler: Reconciler,
        *,
        count: int,
        context: contextvars.Context,
        sources: Callable[[], Mapping[Any, Source]],
        in_scope: Callable[[Any], bool],
        observer: Callable[[], ControllerObserver],
        logger: logging.Logger,
        reconcile_timeout: float | None = None,
        counts: ReconcileCounts | None = None,
        around: Around | None = None,
        needs_loop: bool = False,
        admit: Callable[[Any], bool] | None = None,
    ) -> None:
        self.name = name
        self._admit = admit  # a sharded controller's check before each pass (its shard; a drain)
        self.kind = kind
        self.logger = logger
        self._reconciler = reconciler
        self._sources = sources
        self._in_scope = in_scope
        self._observer = observer
        self._around = around
        self._stopping = threading.Event()
        self._lock = threading.Lock()  # guards the count of reconciles running
        self._lifecycle = threading.Lock()  # start() and stop() one at a time: stop never joins unstarted threads
        self._active = 0
        self.queue = WorkQueue(name, hooks=observer().queue_hooks())
        self.fence = Fence(name)  # set when this run's leadership is lost
        self._unowned_warned: set[str] = set()  # kinds ensure()d without .owns(), warned about once
        self.counts = counts if counts is not None else ReconcileCounts()
        self.deadline = (
            None
            if reconcile_timeout is None
            else Deadline(
                name, reconcile_timeout, limit=count, done=self.queue.done, stopping=self._stopping, logger=logger
            )
        )
        self._loop = LoopThread(f"controller-{name}-loop") if reconciler.is_async or needs_loop else None
        if self._loop is not None:
            self._loop.start()
        self._threads: list[threading.Thread] = [
            RunnableThread(
                f"controller-{name}-worker-{i}",
                self._work,
                owner=f"controller {name}",
                stopping=self._stopping,
                context=context.copy(),
            )
            for i in range(count)
        ]

    def start(self) -> None:
        """Start the worker threads; nothing once ``stop()`` has begun (a stop may come first)."""
        with self._lifecycle:
            if self._stopping.is_set():
                return
            for thread in self._threads:
                thread.start()
        self.logger.info("controller %s: %d worker(s) started", self.name, len(self._threads))

    def ready(self) -> bool:
        """Started and not stopping."""
        return any(t.is_alive() for t in self._threads) and not self._stopping.is_set()

    def join(self, timeout: float | None = None) -> None:
        """Wait up to ``timeout`` for the threads (``stop(timeout)`` stops and joins them)."""
        deadline = deadline_after(timeout)
        for thread in self.threads():
            thread.join(remaining(deadline))

    def threads(self) -> list[threading.Thread]:
        """The worker and event-loop threads."""
        loop_thread = self._loop.thread if self._loop is not None else None
        helpers = self.deadline.threads() if self.deadline is not None else []
        return self._threads + ([loop_thread] if loop_thread is not None else []) + helpers

    def stop(self, timeout: float) -> bool:
        """Stop taking keys, wait up to ``timeout`` for reconciles in flight, join the workers. False
        when some did not finish in time: coroutine reconciles are then cancelled; a plain function
        cannot be interrupted, its thread is left to end."""
        with self._lifecycle:
            self._stopping.set()
        if self.deadline is not None:
            self.deadline.close()
        threads = [t for t in self._threads if t.ident is not None]  # started (a stop may come first)
        threads += self.deadline.threads() if self.deadline is not None else []  # abandoned reconciles
        loop = self._loop
        self.queue.shut_down()
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(deadline - time.monotonic(), 0.0))
        late = [t for t in threads if t.is_alive()]
        in_time = not late
        if loop is not None:
            if late:  # coroutine reconciles still running: cancel them, then the workers end
                loop.cancel_all()
                for thread in late:
                    thread.join(1.0)
                late = [t for t in late if t.is_alive()]
            loop.stop(1.0)
        if late:
            self.logger.warning(
                "controller %s: %d reconcile(s) still running %gs after stop: %s",
                self.name,
                len(late),
                timeout,
                ", ".join(t.name for t in late),
            )
        elif not in_time:
            self.logger.warning(
                "controller %s: reconciles running past the shutdown timeout (%gs) were cancelled", self.name, timeout
            )
        else:
            self.logger.info("controller %s: workers stopped", self.name)
        return in_time

    # ------------------------------------------------------------ one key
    def _work(self) -> None:
        queue = self.queue
        while True:
            key = queue.get()
            if key is None:
                return
            try:
                if self._stopping.is_set():
                    return
                self._process(str(key))
            finally:
                if self.deadline is None or not self.deadline.handed_off(str(key)):
                    queue.done(key)  # (else the thread of a timed-out reconcile calls it when it ends)

    def _process(self, key: str) -> None:
        queue = self.queue
        namespace, name = split_key(key)
        sources = self._sources()
        primary = sources.get(self.kind)
        if primary is None:
            return
        started = time.monotonic()
        result = "error"
        try:
            obj = CachedKind(primary, namespace).get(name, namespace)
            if obj is None or not self._in_scope(obj):
                queue.forget(key)  # gone: nothing to reconcile
                result = ""
                return
            if self._admit is not None and not self._admit(obj):
                queue.forget(key)  # another replica's (or let go: a drain)
                result = ""
                return
            ctx = Context(
                self.name,
                key,
                primary.config,
                sources,
                self.logger,
                queue.num_requeues(key),
                fence=self.fence,
                unowned_warned=self._unowned_warned,
            )
            self._count_active(+1)
            try:
                outcome = self._call(obj, ctx)
            finally:
                self._count_active(-1)
            result = self._handle_outcome(key, outcome)
        except Wait as wait:
            result = self._handle_outcome(key, wait)
        except TerminalError as exc:
            self.logger.error("controller %s: %s: terminal error (not retried): %s", self.name, key, exc)
            queue.forget(key)
        except concurrent.futures.CancelledError:
            self.logger.warning("controller %s: %s: reconcile cancelled (shutting down)", self.name, key)
        except LeadershipLost:
            self.logger.warning("controller %s: %s: reconcile stopped: leadership lost", self.name, key)
        except Exception as exc:
            if self._stopping.is_set():
                self.logger.warning("controller %s: %s: reconcile failed while stopping: %s", self.name, key, exc)
            else:
                self.logger.error(
                    "controller %s: %s: reconcile failed (retry %d): %s: %s",
                    self.name,
                    key,
                    queue.num_requeues(key) + 1,
                    type(exc).__name__,
                    exc,
                    exc_info=self.logger.isEnabledFor(logging.DEBUG),
                )
            queue.add_rate_limited(key)
        finally:
            if result:
                self._observer().reconciled(result, time.monotonic() - started)

    def _count_active(self, change: int) -> None:
        with self._lock:
            self._active += change
            active = self._active
        self._observer().workers(active)

    def _call(self, obj: Any, ctx: Context) -> Any:
        """The pass's outcome (the operator's writes around the reconcile function, each call under
        ``reconcile_timeout``), counted for ``status()``."""
        try:
            if self._around is None:
                outcome = self._invoke(self._reconciler, obj, ctx)
            else:
                outcome = self._around(obj, ctx, lambda reconciler, o: self._invoke(reconciler, o, ctx))
        except BaseException as exc:
            self.counts.ended(ctx.key, exc)
            raise
        self.counts.ended(ctx.key, None)
        return outcome

    def _invoke(self, reconciler: Reconciler, obj: Any, ctx: Context) -> Any:
        args = (obj, ctx) if reconciler.pass_ctx else (obj,)
        deadline = self.deadline
        if not reconciler.is_async:
            return reconciler.func(*args) if deadline is None else deadline.call(ctx.key, reconciler.func, args)
        loop = self._loop
        if loop is None:
            raise RuntimeError(f"controller {self.name!r}: its event loop is not running")
        future = loop.submit(reconciler.func(*args))
        return future.result() if deadline is None else deadline.result(ctx.key, future)

    def _handle_outcome(self, key: str, outcome: Any) -> str:
        """Requeue, forget or schedule ``key`` as ``outcome`` says; the result label of the metrics."""
        queue = self.queue
        if isinstance(outcome, Wait):
            self.logger.info("controller %s: %s: waiting %gs: %s", self.name, key, outcome.after, outcome.reason)
            queue.forget(key)
            queue.add_after(key, outcome.after)
            return "requeue_after"
        if isinstance(outcome, Result):
            if outcome.requeue_after is not None:
                queue.forget(key)
                queue.add_after(key, outcome.requeue_after)
                return "requeue_after"
            if outcome.requeue:
                queue.add_rate_limited(key)
                return "requeue"
            outcome = None
        if outcome is not None:
            raise TypeError(f"reconcile returned {type(outcome).__name__}; expected None, Result or Wait")
        queue.forget(key)
        if self._reconciler.every is not None:
            queue.add_after(key, self._reconciler.every, Priority.REPLAY)  # a periodic check, not a change
        return "success"


def _takes_context(func: Callable[..., Any]) -> bool:
    """Does ``func`` take ``(obj, ctx)`` rather than ``(obj)``?"""
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return True
    if len(positional) >= 2:
        return True
    if not positional:
        raise TypeError(
            f"reconcile function {getattr(func, '__qualname__', func)!r} must take the object: "
            "def f(obj) or def f(obj, ctx)"
        )
    return False
