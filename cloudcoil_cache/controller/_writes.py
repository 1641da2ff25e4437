"""PassWrites: what one reconcile pass asked to write (status fields, conditions, Events), kept until the pass ends."""

from __future__ import annotations

from typing import Any

import attrs

from cloudcoil_cache.controller._events import EventType, check_event
from cloudcoil_cache.controller._status import (
    ConditionStatus,
    Now,
    check_condition,
    condition_value,
    status_of,
    upsert_condition,
    wire_name,
)

__all__ = ["MAX_EVENTS", "PassWrites", "QueuedEvent"]

#: Events one pass may queue; more are dropped (and counted).
MAX_EVENTS = 100


@attrs.frozen
class QueuedEvent:
    reason: str
    note: str
    type: EventType
    action: str


class PassWrites:
    """The writes of one pass, applied once it ends: ``status_for(obj)`` gives the status to persist
    (None when nothing changed), then the Events are recorded.

    ``status_updates``: may this pass write its primary's status? ``reserved``: condition types the
    controller sets itself (``Ready`` with ``report_status``). Used by one worker thread.
    """

    def __init__(
        self,
        *,
        status_updates: bool,
        events: bool,
        reserved: frozenset[str] = frozenset(),
        controller: str = "",
    ) -> None:
        self.status_updates = status_updates
        self.events_enabled = events
        self.reserved = reserved
        self.controller = controller
        self.changes: dict[str, Any] = {}
        self.conditions: dict[str, dict[str, Any]] = {}
        self.events: list[QueuedEvent] = []
        self.dropped_events = 0

    def __repr__(self) -> str:
        return (
            f"<PassWrites status={sorted(self.changes)} conditions={sorted(self.conditions)} events={len(self.events)}>"
        )

    def _check_status(self) -> None:
        if not self.status_updates:
            raise ValueError(f"controller {self.controller!r} has status_updates=False: it does not write status")

    def set_status(self, **changes: Any) -> None:
        self._check_status()
        for name, value in changes.items():
            if name in ("conditions", "observedGeneration", "observed_generation"):
                raise ValueError(f"status field {name!r} is the controller's: use ctx.condition()")
            self.changes[wire_name(name)] = value

    def condition(self, name: str, status: ConditionStatus, *, reason: str, message: str = "") -> None:
        if name in self.reserved:
            raise ValueError(f"condition {name!r} is set by the controller (report_status=True)")
        self.set_condition(name, status, reason=reason, message=message)

    def set_condition(self, name: str, status: ConditionStatus, *, reason: str, message: str = "") -> None:
        self._check_status()
        check_condition(name, reason, message)
        self.conditions[name] = {"type": name, "status": condition_value(status), "reason": reason, "message": message}

    def event(self, reason: str, message: str, type: EventType = "Normal", action: str = "Reconcile") -> None:
        check_event(reason, type, action)
        if not isinstance(message, str):
            raise TypeError(f"an event message is a string, got {message.__class__.__name__}")
        if not self.events_enabled:
            return
        if len(self.events) >= MAX_EVENTS:
            self.dropped_events += 1
            return
        self.events.append(QueuedEvent(reason, message, type, action))

    @property
    def touches_status(self) -> bool:
        return bool(self.changes or self.conditions)

    def status_for(self, obj: Any, now: Now) -> dict[str, Any] | None:
        """The status ``obj`` should have after this pass, or None when it already has it (or the
        pass set nothing). Conditions and ``observedGeneration`` carry the object's generation."""
        if not self.touches_status:
            return None
        before = status_of(obj)
        after = status_of(obj)
        for name, value in self.changes.items():
            if value is None:
                after.pop(name, None)
            else:
                after[name] = value
        generation = getattr(obj.metadata, "generation", None)
        for condition in self.conditions.values():
            new = dict(condition)
            if generation is not None:
                new["observedGeneration"] = generation
            upsert_condition(after, new, now)
        if generation is not None:
            after["observedGeneration"] = generation
        return None if before == after else after
