"""WriteTracker: read-your-writes for one informer (the writes through its Config its reads wait for)."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Any

import attrs

from cloudcoil_cache._clock import SYSTEM_CLOCK, Clock
from cloudcoil_cache._listwatch import parse_field_selector, parse_label_selector
from cloudcoil_cache.caching._store import Key, Store, key_of

__all__ = ["WriteTracker"]

log = logging.getLogger(__name__)

#: How many recent (object, resourceVersion) pairs a tracker remembers.
_RECENT_EVENTS = 4096


@attrs.frozen
class _PendingWrite:
    """A write made through the cache's Config that reads must see."""

    resource_version: str | None  # the event carrying it satisfies the write
    at: float  # clock time of the write: a relist that started later satisfies it too


class WriteTracker:
    """The writes made through a Config to what one informer watches, until its watch delivers them.

    A write is noted (``note_object``, ``note_deleted``) once the API server answered it; reads of
    it wait (``wait``) until the informer applies it (``observe_event``, ``observe_relist``, called
    by the informer's reflector thread). Active only while its informer runs (``start``/``stop``).

    Thread safety: ``_seen`` (a Condition) guards the pending writes and the recent events; the
    checks on the read path look at the dict without it first (the common case: nothing pending).
    """

    def __init__(self, key: Any, store: Store[Any], clock: Clock) -> None:
        self._key = key  # the informer's InformerKey: its scope and selectors
        self._store = store
        self._clock = clock
        self._active = False
        self._seen = threading.Condition(threading.Lock())
        self._writes: dict[Key, _PendingWrite] = {}
        # pending writes a read already waited for to the end: later reads do not wait for them again
        # (each would wait the whole timeout while the watch is silent), they read past the cache
        self._overdue: set[Key] = set()
        # (key, resourceVersion) of the latest events applied: a write whose event arrived before
        # the writer noted it is already seen (only kept once a write was announced: ``tracking``)
        self._recent: OrderedDict[tuple[Key, str], None] = OrderedDict()
        self.tracking = False

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self._active = True

    def after_fork(self) -> None:
        """In a fork child: a new lock, and no pending write (the writes were the parent's)."""
        self._seen = threading.Condition(threading.Lock())
        self._writes.clear()
        self._overdue.clear()
        self._recent.clear()
        self.tracking = False

    def stop(self) -> None:
        """The informer stopped: forget every pending write and release the readers waiting."""
        with self._seen:
            self._active = False
            self._writes.clear()
            self._overdue.clear()
            self._seen.notify_all()

    # --------------------------------------------------------- the writer's
    def will_write(self) -> None:
        """A write is about to be sent: remember recent events from now on, so a write whose event
        arrives before the writer notes it is not waited for."""
        self.tracking = True

    def note_object(self, obj: Any, *, deleted: bool = False) -> None:
        """A write of ``obj`` (its answer): noted only if the informer will see it: inside its
        namespace, and (with selectors) an object that matches them now or was stored before."""
        meta = getattr(obj, "metadata", None)
        if obj is None or meta is None or not self._active or not meta.name:
            return
        key = self._key
        if key.namespace is not None and meta.namespace != key.namespace:
            return
        stored = (meta.namespace or "", meta.name) in self._store
        if not stored and not deleted and not _matches(key, obj):
            return  # the informer will never see it
        if deleted and not stored:
            return
        self.note(
            (meta.namespace or "", meta.name),
            meta.resource_version,
            deleted=deleted or (stored and not _matches(key, obj)),
        )

    def note_deleted(self, namespace: str | None, name: str) -> None:
        """A delete answered with a Status: reads wait for the object's deletion, if it is stored."""
        if not self._active:
            return
        key = (namespace or "", name)
        if key in self._store:
            self.note(key, None, deleted=True)

    def note(self, key: Key, resource_version: str | None, *, deleted: bool = False) -> None:
        """Reads of ``key`` wait until the write is delivered: by the event carrying
        ``resource_version``, by a DELETED event (the only way, for a delete), or by a relist that
        started after now."""
        if not self._active:
            return
        with self._seen:
            if resource_version is not None and (key, resource_version) in self._recent:
                return  # its event was applied before the writer got here
            self._writes[key] = _PendingWrite(
                None if deleted and resource_version is None else resource_version, self._clock.now()
            )
            self._overdue.discard(key)  # a new write: waited for afresh

    # ----------------------------------------------------------- the reader's
    def pending(self, namespace: str | None, name: str | None) -> bool:
        """True if a noted write in that scope (one object, or a namespace, or everything) is not seen yet."""
        if not self._writes:  # the common case costs one dict check, no lock
            return False
        with self._seen:
            return self._pending_locked(namespace, name)

    def _pending_locked(self, namespace: str | None, name: str | None) -> bool:
        if name is not None:
            return (namespace or "", name) in self._writes
        if namespace is None:
            return bool(self._writes)
        return any(key[0] == namespace for key in self._writes)

    def wait(self, namespace: str | None, name: str | None, timeout: float, again: bool = True) -> bool:
        """Wait (real time, at most ``timeout``) until no noted write in that scope is pending.

        ``again=False`` (a fallback read, which can read the API server instead): a write a read
        already waited for to the end (the watch is silent: stalled, or slow) is not waited for
        again: False at once, until the watch or a relist delivers it.
        """
        if not self._writes:
            return True
        deadline = SYSTEM_CLOCK.now() + timeout
        with self._seen:
            while late := self._scope_locked(namespace, name):
                remaining = deadline - SYSTEM_CLOCK.now()
                if not self._active or (not again and late <= self._overdue):
                    return False
                if remaining <= 0:
                    newly = late - self._overdue
                    self._overdue |= late
                    break
                self._seen.wait(remaining)
            else:
                return True
        if not newly:
            return False  # said already
        log.warning(
            "%s: %d write(s) through this Config not delivered by the watch within %gs "
            "(read_your_writes_timeout; is the watch stalled?): fallback reads of them now go to the API "
            "server at once until it delivers them; strict reads wait and refuse",
            self._key.describe(),
            len(newly),
            timeout,
        )
        return False

    def _scope_locked(self, namespace: str | None, name: str | None) -> set[Key]:
        """The keys of the pending writes in that scope."""
        if name is not None:
            key = (namespace or "", name)
            return {key} if key in self._writes else set()
        return {key for key in self._writes if namespace is None or key[0] == namespace}

    # ---------------------------------------------- the informer's (reflector thread)
    def observe_event(self, event_type: str, obj: Any) -> None:
        key = key_of(obj)
        rv = obj.metadata.resource_version
        with self._seen:
            recent = self._recent
            if rv is not None:
                recent[(key, rv)] = None
                if len(recent) > _RECENT_EVENTS:
                    recent.popitem(last=False)
            if not self._writes:
                return
            pending = self._writes.get(key)
            if pending is not None and (
                event_type == "DELETED" or (pending.resource_version is not None and pending.resource_version == rv)
            ):
                del self._writes[key]
                self._overdue.discard(key)
                self._seen.notify_all()

    def observe_relist(self, started_at: float | None, items: list[Any]) -> None:
        if not self._writes:
            return
        by_key = {key_of(o): o for o in items}
        with self._seen:
            for key, pending in list(self._writes.items()):
                obj = by_key.get(key)
                if (started_at is not None and started_at > pending.at) or (
                    obj is not None and obj.metadata.resource_version == pending.resource_version
                ):
                    del self._writes[key]
                    self._overdue.discard(key)
            self._seen.notify_all()


def _matches(key: Any, obj: Any) -> bool:
    """Whether the informer's selectors select ``obj`` (so its watch will deliver it)."""
    if not key.label_selector and not key.field_selector:
        return True
    try:
        if key.label_selector and not parse_label_selector(key.label_selector).matches(obj.metadata.labels):
            return False
        fields = parse_field_selector(key.field_selector)
        return fields.empty or bool(fields.matches(obj))
    except Exception:  # an object the selector cannot evaluate: do not wait for it
        return False
