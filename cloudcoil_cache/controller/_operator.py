"""OperatorPass: the writes around each reconcile pass (finalizers, the status write, Ready, Events)."""

from __future__ import annotations

import concurrent.futures
import logging
from typing import Any, Callable, Mapping

from cloudcoil_cache.controller._context import Context
from cloudcoil_cache.controller._events import EventRecorder
from cloudcoil_cache.controller._fence import LeadershipLost
from cloudcoil_cache.controller._finalizers import add_missing, without_finalizer
from cloudcoil_cache.controller._mutations import guarded_patch, merge_diff
from cloudcoil_cache.controller._outcomes import TerminalError, Wait
from cloudcoil_cache.controller._status import Now, status_of, utc_now
from cloudcoil_cache.controller._writes import PassWrites, QueuedEvent
from cloudcoil_cache.errors import APIError, ResourceNotFound

__all__ = ["READY", "OperatorPass", "WriteOptions"]

READY = "Ready"

#: Calls a reconcile or finalize function (a worker's ``Reconciler``) with an object and the pass's context.
Invoke = Callable[[Any, Any], Any]


class WriteOptions:
    """A controller's write options (validated) and its EventRecorder, kept across runs."""

    def __init__(
        self,
        name: str,
        *,
        report_status: bool,
        status_updates: bool,
        events: bool,
        event_flush_timeout: float,
        field_manager: str,
        now: Now = utc_now,
    ) -> None:
        self.name = name
        self.report_status = report_status
        self.status_updates = status_updates
        self.events = events
        self.event_flush_timeout = event_flush_timeout
        self.field_manager = field_manager
        self.now = now
        self.recorder = EventRecorder(name, now=now)

    @classmethod
    def of(
        cls,
        name: str,
        report_status: object,
        status_updates: object,
        events: object,
        event_flush_timeout: object,
        field_manager: object,
    ) -> WriteOptions:
        """The options as ``Controller()`` takes them; a clear ValueError for a bad one."""
        for what, flag in (("report_status", report_status), ("events", events)):
            if not isinstance(flag, bool):
                raise ValueError(f"Controller({what}=...) must be True or False, got {flag!r}")
        if status_updates is not None and not isinstance(status_updates, bool):
            raise ValueError(f"Controller(status_updates=...) must be None, True or False, got {status_updates!r}")
        if report_status and status_updates is False:
            raise ValueError("Controller(report_status=True) writes status: it needs status_updates (None or True)")
        timeout = event_flush_timeout
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 <= timeout < float("inf"):
            raise ValueError(f"Controller(event_flush_timeout=...) must be a number of seconds >= 0, got {timeout!r}")
        if field_manager is not None and (not isinstance(field_manager, str) or not 0 < len(field_manager) <= 128):
            raise ValueError(
                f"Controller(field_manager=...) must be a string of 1 to 128 characters, got {field_manager!r}"
            )
        return cls(
            name,
            report_status=bool(report_status),
            status_updates=status_updates is not False,
            events=bool(events),
            event_flush_timeout=float(timeout),
            field_manager=field_manager if isinstance(field_manager, str) else name,
        )

    def around(self, reconciler: Any, finalizers: Mapping[str, Any], logger: logging.Logger) -> Any:
        """The ``around`` of one run's workers."""
        return OperatorPass(self, reconciler, finalizers, logger).run


class OperatorPass:
    """Runs around each reconcile of one controller run (``Workers(around=...)``).

    Before, when the controller has finalizers: an object being deleted gets its finalizer
    functions (each finalizer of this controller still on it is removed once its function
    succeeded; the reconcile function is not called); a live one gets the missing finalizers added
    (one guarded PATCH). A controller without finalizers reconciles objects being deleted as any.

    After: the status the pass set (and ``Ready`` from its outcome, with ``report_status``) is
    written through the status subresource when it changed (one PATCH guarded by resourceVersion),
    then its Events are recorded for at most ``event_flush_timeout`` seconds.
    """

    def __init__(
        self, options: WriteOptions, reconciler: Any, finalizers: Mapping[str, Any], logger: logging.Logger
    ) -> None:
        self.name = options.name
        self._reconciler = reconciler
        self._finalizers = dict(finalizers)
        self._report_status = options.report_status
        self._status_updates = options.status_updates
        self._events = options.events
        self._recorder = options.recorder
        self._event_flush_timeout = options.event_flush_timeout
        self._field_manager = options.field_manager
        self._logger = logger
        self._now = options.now

    def run(self, obj: Any, ctx: Context, invoke: Invoke) -> Any:
        """One pass over ``obj``: what the reconcile returned (or its exception, raised)."""
        writes = PassWrites(
            status_updates=self._status_updates,
            events=self._events,
            reserved=frozenset({READY}) if self._report_status else frozenset(),
            controller=self.name,
        )
        ctx._begin(obj, writes, self._field_manager)
        if self._finalizers and obj.metadata.deletion_timestamp is not None:
            try:
                self._finalize(obj, ctx, invoke)
            finally:
                self._record_events(ctx.config, ctx.resource, writes)
            return None
        ctx.check_leadership()  # every write of a pass is fenced: a replica that lost the Lease stops writing
        obj = add_missing(obj, self._finalizers, ctx.config, self._field_manager)
        ctx._begin(obj, writes, self._field_manager)
        try:
            outcome = invoke(self._reconciler, obj)
        except BaseException as exc:
            self._after_failure(ctx, writes, exc)
            raise
        self._after(ctx, writes, outcome)
        return outcome

    def _finalize(self, obj: Any, ctx: Context, invoke: Invoke) -> None:
        for name, func in self._finalizers.items():
            if name not in (obj.metadata.finalizers or ()):
                continue
            invoke(func, obj)  # raises: retried with the key's backoff, the finalizer stays
            ctx.check_leadership()
            obj = without_finalizer(obj, name, ctx.config, self._field_manager)
            self._logger.info("controller %s: %s: finalizer %s done", self.name, ctx.key, name)

    # ----------------------------------------------------------- after a pass
    def _after(self, ctx: Context, writes: PassWrites, outcome: Any) -> None:
        if self._report_status:
            if isinstance(outcome, Wait):
                writes.set_condition(READY, False, reason="Waiting", message=outcome.reason)
            else:
                writes.set_condition(READY, True, reason="Reconciled", message="")
        self._flush(ctx, writes)

    def _after_failure(self, ctx: Context, writes: PassWrites, exc: BaseException) -> None:
        if isinstance(exc, (concurrent.futures.CancelledError, KeyboardInterrupt, SystemExit, LeadershipLost)):
            return  # shutting down, or no longer leading: nothing is written
        if isinstance(exc, Wait):
            self._after(ctx, writes, exc)
            return
        reason = "TerminalError" if isinstance(exc, TerminalError) else "ReconcileFailed"
        message = f"{type(exc).__name__}: {exc}"[:1024]
        if self._report_status:
            writes.set_condition(READY, False, reason=reason, message=message)
        if self._events:
            writes.events.append(QueuedEvent(reason, message, "Warning", "Reconcile"))
        try:
            self._flush(ctx, writes)
        except Exception as flush_error:  # the reconcile's own error is the one raised
            self._logger.warning("controller %s: %s: status not written: %s", self.name, ctx.key, flush_error)

    def _flush(self, ctx: Context, writes: PassWrites) -> None:
        ctx.check_leadership()
        obj = ctx.resource
        try:
            status = writes.status_for(obj, self._now)
            if status is not None:
                obj = self._write_status(obj, status, ctx)
        finally:
            self._record_events(ctx.config, obj, writes)

    def _write_status(self, obj: Any, status: dict[str, Any], ctx: Context) -> Any:
        patch = {"status": merge_diff(status_of(obj), status)}
        kind = type(obj)
        known = getattr(kind, "subresources", None)
        subresource = None if known is not None and "status" not in known else "status"
        try:
            return guarded_patch(obj, patch, ctx.config, subresource=subresource, field_manager=self._field_manager)
        except ResourceNotFound as exc:
            if known is not None:  # declared: a 404 is about the object
                raise
            meta = obj.metadata
            try:
                kind.client(ctx.config).live_get(meta.name, meta.namespace)
            except APIError:  # gone (or not readable): the 404 as it was
                raise exc from None
            # it exists: its kind has no /status. Writing status through the object instead would
            # bump its generation (a CRD without the subresource counts status changes), so each
            # pass's observedGeneration would start the next pass: say what to change instead.
            raise ResourceNotFound(
                f"{getattr(kind, 'plural', None) or kind.__name__} {meta.name!r} has no status subresource, so "
                f"controller {self.name!r} cannot write its status: add `subresources: {{status: {{}}}}` to "
                "the CRD's version, or pass Controller(status_updates=False) (and report_status=False)",
                code=exc.code,
                reason=exc.reason,
                status=exc.status,
            ) from exc

    def _record_events(self, config: Any, obj: Any, writes: PassWrites) -> None:
        if not writes.events:
            return
        clock = self._recorder.clock
        deadline = clock.now() + self._event_flush_timeout
        for index, event in enumerate(writes.events):
            if clock.now() > deadline:
                self._logger.warning(
                    "controller %s: %d event(s) not recorded: event_flush_timeout (%gs) passed",
                    self.name,
                    len(writes.events) - index,
                    self._event_flush_timeout,
                )
                return
            self._recorder.record(config, obj, event.reason, event.note, type=event.type, action=event.action)
