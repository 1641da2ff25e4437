"""One registered watch: its filters and its queue of pending events and fault commands."""

from __future__ import annotations

import json
import threading
from collections import deque
from typing import Any, Callable, Mapping

from ..machinery.resources import ResourceType

__all__ = ["Event", "Watcher", "event_line"]


def event_line(etype: str, obj: Mapping[str, Any]) -> bytes:
    return json.dumps({"type": etype, "object": obj}, separators=(",", ":")).encode() + b"\n"


class Event:
    """One change in the history: the new state (``obj``) and the previous state (``old``).

    Serialized watch lines are computed once per (event, type) and shared by every watcher.
    """

    __slots__ = ("rv", "rtype", "type", "obj", "old", "_lines")

    def __init__(
        self,
        rv: int,
        rtype: ResourceType,
        etype: str,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
    ) -> None:
        self.rv = rv
        self.rtype = rtype
        self.type = etype
        self.obj = obj
        self.old = old
        self._lines: dict[str, bytes] = {}

    def line(self, etype: str) -> bytes:
        cached = self._lines.get(etype)
        if cached is None:
            if etype == "DELETED" and self.type == "MODIFIED":
                # Stopped matching the selector: the previous content at this event's RV.
                assert self.old is not None
                meta = {**self.old.get("metadata", {}), "resourceVersion": str(self.rv)}
                cached = event_line(etype, {**self.old, "metadata": meta})
            else:
                cached = event_line(etype, self.obj)
            self._lines[etype] = cached
        return cached


# Items in a watcher's queue: ("event", bytes) lines ready to write, or commands.
Item = tuple[str, Any]


class Watcher:
    """Filters and queue of one watch connection; the connection's thread drains it.

    Every method that changes the queue notifies ``cond``; the writer waits on it.
    """

    def __init__(
        self,
        rtype: ResourceType,
        namespace: str | None,
        label_match: Callable[[Mapping[str, Any]], bool] | None,
        field_match: Callable[[Mapping[str, Any]], bool] | None,
    ) -> None:
        self.rtype = rtype
        self.namespace = namespace
        self._label_match = label_match
        self._field_match = field_match
        self.cond = threading.Condition()
        self.items: deque[Item] = deque()
        self.urgent: deque[Item] = deque()
        self.closed = False
        #: a drop or an ERROR event is queued: the stream ends once it is written (no longer an open watch)
        self.ending = False
        #: registered from a resourceVersion the server had not reached (``future_watch_mode="silent"``):
        #: nothing at or below it is sent, events nor bookmarks (kube-apiserver's watch cache)
        self.floor: int | None = None
        #: when its stream started (monotonic; ``OpenWatches.started``), to tell a client's newest watch apart
        self.started_at: float | None = None

    @property
    def live(self) -> bool:
        """Open and not on its way to an end: a watch that later faults still reach."""
        return not (self.closed or self.ending)

    def below_floor(self, rv: int) -> bool:
        """Is ``rv`` at or below the resourceVersion this watch started ahead of the server from?"""
        return self.floor is not None and rv <= self.floor

    def matches(self, obj: Mapping[str, Any] | None) -> bool:
        if obj is None:
            return False
        meta = obj.get("metadata") or {}
        if self.namespace is not None and meta.get("namespace") != self.namespace:
            return False
        if self._label_match is not None and not self._label_match(meta.get("labels") or {}):
            return False
        return self._field_match is None or self._field_match(obj)

    def event_item(self, event: Event) -> Item | None:
        """The line this watcher must see for ``event`` (selector transitions applied), or None."""
        now = self.matches(event.obj)
        if event.type == "MODIFIED":
            before = self.matches(event.old)
            if now and before:
                return ("event", event.line("MODIFIED"))
            if now:
                return ("event", event.line("ADDED"))
            if before:
                return ("event", event.line("DELETED"))
            return None
        return ("event", event.line(event.type)) if now else None

    def offer(self, event: Event) -> None:
        """Queue ``event`` if it concerns this watcher (called with the store lock held)."""
        if self.below_floor(event.rv):
            return
        item = self.event_item(event)
        if item is not None:
            self.push(item)

    def push(self, item: Item, *, urgent: bool = False) -> None:
        with self.cond:
            (self.urgent if urgent else self.items).append(item)
            if item[0] in ("drop", "error"):
                self.ending = True
            self.cond.notify_all()

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def wake(self) -> None:
        with self.cond:
            self.cond.notify_all()
