"""Informer: one reflector + one store + its handler listeners, for one (kind, namespace, selectors)."""

from __future__ import annotations

import copy
import logging
import threading
import time
from typing import Any, Callable, Generic, TypeVar

import attrs

from cloudcoil_cache._listwatch import WatchEvent
from cloudcoil_cache._listwatch._listwatch import ListerWatcher
from cloudcoil_cache.caching._dispatch import Listener
from cloudcoil_cache.caching._reflector import Reflector, Tuning
from cloudcoil_cache.caching._store import Added, Notification, Store
from cloudcoil_cache.errors import CacheSyncTimeout, is_hard_failure

__all__ = ["Informer", "InformerKey", "InformerStatus"]

log = logging.getLogger(__name__)

T = TypeVar("T")


@attrs.frozen
class InformerKey:
    """What makes two informers the same: kind, scope and server-side selectors."""

    cls: type
    namespace: str | None
    label_selector: str = ""
    field_selector: str = ""

    def describe(self) -> str:
        scope = self.namespace if self.namespace else "all namespaces"
        sel = ",".join(s for s in (self.label_selector, self.field_selector) if s)
        return f"{self.cls.kind} in {scope}" + (f" [{sel}]" if sel else "")


@attrs.frozen
class InformerStatus:
    """A snapshot of one informer for ``CacheStatus.informers``."""

    kind: str
    api_version: str
    namespace: str | None
    label_selector: str
    field_selector: str
    started: bool
    synced: bool
    object_count: int
    resource_version: str | None
    last_sync_time: float | None
    relist_count: int
    evictions: int
    complete: bool
    last_error: str | None
    handler_backlogs: dict[str, int]


class Informer(Generic[T]):
    """Keeps a store of one kind in one scope in step with the API server and feeds handlers.

    Thread safety: all methods may be called from any thread. ``_deliver_lock`` orders "apply to the
    store and queue the notifications" (reflector thread) against "register a handler and replay the
    store to it" (any thread), like client-go's ``blockDeltas``: a late handler sees every object
    exactly once, either in its replay or as a live event. Queuing never calls user code, so
    holding it is cheap. It is never taken while the store lock is held.
    """

    def __init__(self, key: InformerKey, source_factory: Callable[[InformerKey], ListerWatcher[T]], *,
                 capacity: int = 0, resync_period: float | None = None,
                 tuning: Tuning = Tuning(), on_change: Callable[[], None] | None = None) -> None:
        self.key = key
        self._on_change = on_change or (lambda: None)  # sync state or error changed (never under a lock)
        self.store: Store[T] = Store(capacity)
        self._source_factory = source_factory
        self._resync_period = resync_period or None
        self._tuning = tuning
        self._deliver_lock = threading.Lock()
        self._listeners: list[Listener] = []
        self._reflector: Reflector | None = None
        self._state = threading.Condition(threading.Lock())  # guards the fields below
        self._synced = False
        self._last_error: BaseException | None = None
        self._started = False
        self._generation = 0  # of the current run; see start()
        self.name = _informer_name(key)

    # -------------------------------------------------------------- lifecycle
    def start(self) -> None:
        """Start a run: a new reflector and the handler threads (idempotent while running).

        Each run has a generation; the sink methods ignore a reflector of an older run, so a run
        that is still winding down can never write into the store of the next one.
        """
        with self._state:
            if self._started:
                return
            self._started = True
            self._synced = False
            self._last_error = None
            self._generation += 1
            generation = self._generation
        with self._deliver_lock:
            self.store.clear()  # a new run lists from scratch: every object is an add again
            for listener in self._listeners:
                listener.start()
        reflector = Reflector(self.name, self._source_factory(self.key), _RunSink(self, generation),
                              tuning=self._tuning, resync_period=self._resync_period)
        self._reflector = reflector
        reflector.start()

    def stop(self) -> None:
        """Stop and join every thread of the current run; forget the objects."""
        self.join(self.signal_stop())

    def signal_stop(self) -> _StoppedRun | None:
        """First half of ``stop()``: ask the run's threads to end, without waiting for them.

        Returns what ``join()`` must wait for (None if not running), so that stopping many
        informers costs one wait, and a join never waits for threads of a later run.
        """
        with self._state:
            if not self._started:
                return None
            self._started = False
            self._synced = False
            self._state.notify_all()
            # The stopping reflector's sink now carries a stale generation: whatever it still
            # delivers is ignored, so no event of this run reaches a handler of the next one.
            self._generation += 1
            generation = self._generation
        reflector = self._reflector
        if reflector is not None:
            reflector.stop()
        with self._deliver_lock:
            threads = [t for t in (listener.stop() for listener in self._listeners) if t is not None]
        return _StoppedRun(generation, reflector, threads)

    def join(self, run: _StoppedRun | None) -> None:
        """Second half of ``stop()``: wait for that run's threads, then forget its objects."""
        if run is None:
            return
        if run.reflector is not None:
            run.reflector.join()
        for thread in run.threads:
            if thread is not threading.current_thread():
                thread.join()
        with self._deliver_lock:
            if not self._started and self._generation == run.generation:  # not restarted meanwhile
                self.store.clear()

    @property
    def started(self) -> bool:
        return self._started

    # ------------------------------------------------------------------- sync
    def has_synced(self) -> bool:
        return self._synced

    @property
    def last_error(self) -> BaseException | None:
        return self._last_error

    @property
    def healthy(self) -> bool:
        return self._synced and self._last_error is None

    @property
    def resource_version(self) -> str | None:
        reflector = self._reflector
        return reflector.last_rv if reflector is not None else None

    @property
    def complete(self) -> bool:
        return self.store.complete

    def incomplete_reason(self) -> str:
        return (f"informer incomplete: {self.key.describe()} evicted {self.store.evictions} objects "
                "(max_items)")

    def wait_for_sync(self, timeout: float | None = None, *, fail_fast: bool = True) -> bool:
        """Wait until the first list is in the store. True when synced, False on timeout.

        With ``fail_fast``, a hard failure (401/403/404) is raised at once instead of waiting.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._state:
            while not self._synced:
                if fail_fast and self._last_error is not None and is_hard_failure(self._last_error):
                    # A copy: raising the stored error itself would grow its traceback with every
                    # waiter (and keep their frames alive).
                    raise copy.copy(self._last_error) from None
                if not self._started:
                    return False
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._state.wait(remaining)
            return True

    def sync_or_raise(self, timeout: float) -> None:
        if not self.wait_for_sync(timeout):
            detail = f": last error: {self._last_error}" if self._last_error else ""
            raise CacheSyncTimeout(f"{self.key.describe()} did not sync within {timeout:g}s{detail}")

    # --------------------------------------------------------------- handlers
    def add_listener(self, listener: Listener) -> None:
        """Register a listener; if objects are already cached, replay them to it as adds first."""
        with self._deliver_lock:
            if self._synced:
                listener.enqueue([Added(obj, initial=True) for obj in self.store.list()])
            self._listeners.append(listener)
            if self._started:
                listener.start()

    def remove_listener(self, listener: Listener) -> None:
        with self._deliver_lock:
            if listener in self._listeners:
                self._listeners.remove(listener)
        listener.stop()
        listener.join()

    def handler_backlogs(self) -> dict[str, int]:
        backlogs: dict[str, int] = {}
        with self._deliver_lock:
            for listener in self._listeners:
                key = f"{listener.event}:{listener.name}"
                if key in backlogs:  # two handlers with one name (e.g. lambdas)
                    key = f"{key}#{sum(k.startswith(key) for k in backlogs) + 1}"
                backlogs[key] = listener.backlog
        return backlogs

    def _deliver_locked(self, notes: list[Notification]) -> None:
        if notes:
            for listener in self._listeners:
                listener.enqueue(notes)

    # ------------------------------------------- ReflectorSink (reflector thread)
    def replace(self, items: list[T], resource_version: str, *, resync: bool,
                generation: int | None = None) -> None:
        with self._deliver_lock:
            if generation is not None and generation != self._generation:
                return  # a stopped run's reflector
            notes = self.store.replace(items, resync=resync)
            self._deliver_locked(notes)
            # Under _deliver_lock: a handler registered from now on gets the replay (add_listener
            # checks _synced under the same lock); one registered before got the notifications.
            with self._state:
                self._synced = True
                self._state.notify_all()
        self._on_change()

    def apply(self, event: WatchEvent[T], generation: int | None = None) -> None:
        obj = event.object
        with self._deliver_lock:
            if generation is not None and generation != self._generation:
                return  # a stopped run's reflector
            if event.type == "DELETED":
                note = self.store.delete(obj)
                if note is not None:
                    self._deliver_locked([note])
            else:
                self._deliver_locked([self.store.upsert(obj)])

    def bookmark(self, resource_version: str) -> None:
        pass  # the reflector keeps the RV; nothing changes in the store

    def error(self, exc: BaseException | None, generation: int | None = None) -> None:
        with self._state:
            if generation is not None and generation != self._generation:
                return
            if exc is None and self._last_error is None:
                return
            self._last_error = exc
            self._state.notify_all()
        self._on_change()

    # ----------------------------------------------------------------- status
    def status(self) -> InformerStatus:
        reflector = self._reflector
        err = self._last_error
        return InformerStatus(
            kind=self.key.cls.kind, api_version=self.key.cls.api_version,
            namespace=self.key.namespace, label_selector=self.key.label_selector,
            field_selector=self.key.field_selector, started=self._started, synced=self._synced,
            object_count=len(self.store),
            resource_version=reflector.last_rv if reflector else None,
            last_sync_time=reflector.last_sync_time if reflector else None,
            relist_count=reflector.relist_count if reflector else 0,
            evictions=self.store.evictions, complete=self.complete,
            last_error=f"{type(err).__name__}: {err}" if err else None,
            handler_backlogs=self.handler_backlogs(),
        )


@attrs.frozen
class _StoppedRun:
    """The threads of a run that was asked to stop (what ``Informer.join`` waits for)."""

    generation: int
    reflector: Reflector | None
    threads: list[threading.Thread]


@attrs.frozen
class _RunSink:
    """The ReflectorSink of one run: forwards to the informer tagged with the run's generation."""

    informer: Informer[Any]
    generation: int

    def replace(self, items: list[Any], resource_version: str, *, resync: bool) -> None:
        self.informer.replace(items, resource_version, resync=resync, generation=self.generation)

    def apply(self, event: WatchEvent[Any]) -> None:
        self.informer.apply(event, self.generation)

    def bookmark(self, resource_version: str) -> None:
        pass  # the reflector keeps the RV; nothing changes in the store

    def error(self, exc: BaseException | None) -> None:
        self.informer.error(exc, self.generation)


def _informer_name(key: InformerKey) -> str:
    group = key.cls.api_version.rpartition("/")[0]
    resource = f"{key.cls.plural}.{group}" if group else key.cls.plural
    scope = key.namespace or "*"
    sel = ",".join(s for s in (key.label_selector, key.field_selector) if s)
    return f"{resource}@{scope}" + (f"[{sel}]" if sel else "")

