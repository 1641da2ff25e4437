"""Handler lanes: one ordered queue per informer view, delivering to every handler of that view in event order."""

from __future__ import annotations

import abc
import contextvars
import logging
import threading
from collections import deque
from typing import Any, Callable, Iterator

import attrs

from cloudcoil_cache._runnable import RunnableThread
from cloudcoil_cache.caching._store import Added, Deleted, Notification, Updated

__all__ = [
    "EVENT_TYPES",
    "Item",
    "Lane",
    "Lanes",
    "Registration",
    "ReplayEnd",
    "ThreadLane",
    "describe",
    "handler_args",
]

log = logging.getLogger(__name__)

EVENT_TYPES: dict[str, type] = {"add": Added, "update": Updated, "delete": Deleted}


def describe(note: Notification) -> str:
    """``Added default/web-0``: the event and the object it is about, for log lines."""
    obj = note.new if isinstance(note, Updated) else note.obj
    meta = getattr(obj, "metadata", None)
    name = getattr(meta, "name", None)
    namespace = getattr(meta, "namespace", None)
    return f"{type(note).__name__} {namespace + '/' if namespace else ''}{name}"


@attrs.frozen(eq=False)
class Registration:
    """One handler registered on a view for one kind of event (``add``, ``update`` or ``delete``)."""

    event: str
    handler: Callable[..., Any]
    name: str
    accepts: type = attrs.field(init=False)
    #: set once the lane has delivered this handler's replay (client-go's ``HasSynced`` of a registration)
    synced: threading.Event = attrs.field(init=False, factory=threading.Event)

    def __attrs_post_init__(self) -> None:
        if self.event not in EVENT_TYPES:
            raise ValueError(f"unknown event {self.event!r}; expected one of {sorted(EVENT_TYPES)}")
        object.__setattr__(self, "accepts", EVENT_TYPES[self.event])


class ReplayEnd:
    """A queued marker: the registrations it is queued for have been delivered everything before it
    (their replay, or the informer's first list): reaching it sets their ``synced``."""

    __slots__ = ()


_REPLAY_END = ReplayEnd()

#: A queued delivery: the notification and the registrations that get it (those registered when
#: it was queued, or the one a replay is for), or a ``ReplayEnd`` and the registrations it marks.
Item = tuple[Notification | ReplayEnd, tuple[Registration, ...]]


class Lane(abc.ABC):
    """The ordered delivery lane of one informer view (client-go's processorListener).

    Every handler of the view gets the view's events in the order the informer applied them, so
    for one object an add or update never follows its delete, whichever handlers see them. The
    queue is unbounded, so a slow handler never delays the reflector or another view; its backlog
    is visible. A handler that raises is logged with the event and keeps receiving events.
    ``stop()`` lets the current call finish and drops what is still queued, including the calls
    the event in progress has not made yet. Which handlers an event reaches is decided here, once
    (``_calls``); a subclass decides only where and how a handler is called (``ThreadLane``: on
    a thread of its own; ``AsyncLane``: in a task on an event loop).

    Thread safety: ``enqueue`` is called by the informer under its delivery lock; registration
    changes come from any thread. The registrations are a tuple replaced on change, so the
    delivering side reads it without a lock. ``_lock`` guards the queue, ``_running`` and
    ``_generation``; the delivering side reads the last two without it between calls.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._registrations: tuple[Registration, ...] = ()
        self._reg_lock = threading.Lock()
        self._lock = threading.Lock()
        self._queue: deque[Item] = deque()
        self._running = False
        self._generation = 0  # of the current run: a run that is over makes no further call
        #: registrations whose replay is the informer's next (first) list: marked after it (``synced()``)
        self._awaiting: list[Registration] = []

    @property
    def registrations(self) -> tuple[Registration, ...]:
        return self._registrations

    @property
    def backlog(self) -> int:
        return len(self._queue)

    @property
    def running(self) -> bool:
        return self._running

    def add(self, registration: Registration) -> None:
        with self._reg_lock:
            self._registrations = (*self._registrations, registration)

    def remove(self, registration: Registration) -> bool:
        """Stop delivering to ``registration``; True when the lane has no handler left."""
        with self._reg_lock:
            self._registrations = tuple(r for r in self._registrations if r is not registration)
            # nor keep it for a replay end (it may close over its Config: ``Lanes.forget``)
            self._awaiting = [r for r in self._awaiting if r is not registration]
            return not self._registrations

    def replayed(self, registrations: tuple[Registration, ...], synced: bool) -> None:
        """Mark where the replay of new ``registrations`` ends: right after what is queued now when
        the informer has ``synced`` (their replay is queued), else after its first list (``synced()``).
        Called by the informer under its delivery lock, after queuing the replay."""
        if synced:
            self._push([(_REPLAY_END, registrations)])
        else:
            with self._reg_lock:
                self._awaiting.extend(registrations)

    def synced(self) -> None:
        """The informer's list was just queued: registrations waiting for it are marked after it."""
        if self._awaiting:
            with self._reg_lock:
                awaiting, self._awaiting = tuple(self._awaiting), []
            self._push([(_REPLAY_END, awaiting)])

    def keep_replay_ends(self) -> None:
        """Before a stop drops the queue: registrations whose replay end was still queued wait for
        the next run's first list instead (their replay was dropped with it)."""
        with self._lock:
            dropped = [r for note, targets in self._queue if note.__class__ is ReplayEnd for r in targets]
        if dropped:
            with self._reg_lock:
                registered = self._registrations
                self._awaiting.extend(r for r in dropped if not r.synced.is_set() and r in registered)

    def enqueue(self, notes: list[Notification], only: Registration | None = None) -> None:
        """Queue notifications for every current registration (or just ``only``, for a replay)."""
        targets = (only,) if only is not None else self._registrations
        if notes and targets:
            self._push([(note, targets) for note in notes])

    def _calls(self, item: Item, generation: int) -> Iterator[tuple[Registration, Notification]]:
        """The handler calls a queued item makes in run ``generation``, in order: each target that
        accepts its kind of event and is still registered, while that run lasts. A ``ReplayEnd``
        makes no call: it marks its registrations synced."""
        note, targets = item
        if isinstance(note, ReplayEnd):
            if self._running and self._generation == generation:
                for registration in targets:
                    registration.synced.set()
            return
        for registration in targets:
            if not self._running or self._generation != generation:
                return  # stopped (or restarted): the call in progress was the last
            if isinstance(note, registration.accepts) and registration in self._registrations:
                yield registration, note

    @staticmethod
    def _failed(registration: Registration, note: Notification) -> None:
        """Log what a handler raised (with the event); the handler keeps receiving events."""
        log.exception("event handler %s raised on %s; it keeps receiving events", registration.name, describe(note))

    def after_fork(self) -> None:
        """In a fork child: new locks, not running (its thread, or loop, is the parent's); what
        was queued is kept and delivered by the child's run (``start()``)."""
        self._reg_lock = threading.Lock()
        self._lock = threading.Lock()
        self._running = False

    @abc.abstractmethod
    def _push(self, items: list[Item]) -> None:
        """Append to the queue and wake whatever drains it."""

    @abc.abstractmethod
    def start(self) -> None:
        """Start delivering (a new run; idempotent while running)."""

    @abc.abstractmethod
    def stop(self) -> Callable[[float | None], bool] | None:
        """Drop queued events and ask the lane to end; returns a ``join(timeout)`` to wait with
        (False when the handler call in flight had not ended by then)."""

    def threads(self) -> list[threading.Thread]:
        """The lane's threads now (none for a lane delivering on an event loop)."""
        return []


def handler_args(note: Notification) -> tuple[Any, ...]:
    """What a handler is called with: ``(old, new)`` for an update, ``(obj,)`` otherwise."""
    return (note.old, note.new) if isinstance(note, Updated) else (note.obj,)


class ThreadLane(Lane):
    """A lane whose handlers run on one named thread, which exists between ``start()`` and ``stop()``."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._cond = threading.Condition(self._lock)
        self._thread: RunnableThread | None = None

    def after_fork(self) -> None:
        super().after_fork()
        self._cond = threading.Condition(self._lock)
        self._thread = None  # gone: never joined (without the fork hooks it would still look alive)

    def _push(self, items: list[Item]) -> None:
        with self._cond:
            wake = not self._queue  # the thread waits only on an empty queue
            self._queue.extend(items)
            if wake:
                self._cond.notify()

    def start(self) -> None:
        with self._cond:
            if self._running:
                return
            self._running = True
            self._generation += 1
            # The new thread first waits for the previous one to finish its current call, so one
            # handler never runs twice at once, even when a scope is re-entered right away.
            # Handlers run with the context variables of whoever started the lane (a Config's
            # scope: a handler's own ``Pod.get()`` reads through that Config).
            self._thread = RunnableThread(
                f"cloudcoil-handlers-{self.name}",
                self._run,
                self._generation,
                self._thread,
                owner=f"handler lane {self.name}",
                context=contextvars.copy_context(),
            )
            self._thread.start()

    def threads(self) -> list[threading.Thread]:
        thread = self._thread
        return [thread] if thread is not None and thread.is_alive() else []

    def stop(self) -> Callable[[float | None], bool] | None:
        with self._cond:
            self._running = False
            self._queue.clear()
            self._cond.notify_all()
            thread = self._thread
        if thread is None:
            return None

        def join(timeout: float | None = None) -> bool:
            if thread is threading.current_thread():
                return True  # a handler removing its own lane: it ends when the call returns
            thread.join(timeout)
            return not thread.is_alive()

        return join

    def _run(self, generation: int, previous: RunnableThread | None) -> None:
        if previous is not None and previous is not threading.current_thread():
            previous.join()
        while (item := self._next(generation)) is not None:
            for registration, note in self._calls(item, generation):
                try:
                    registration.handler(*handler_args(note))
                except BaseException:  # SystemExit too: it would end the lane without a trace
                    self._failed(registration, note)

    def _next(self, generation: int) -> Item | None:
        """The next queued item, once there is one; None when run ``generation`` is over."""
        with self._cond:
            while self._running and self._generation == generation and not self._queue:
                self._cond.wait()
            if not self._running or self._generation != generation:
                return None
            return self._queue.popleft()


class Lanes:
    """The handler lanes of one informer: every view's lane, started and stopped with the informer's runs.

    Lanes start in the handlers' own context (``handler_context``: the owning Config's scope),
    never the caller's: a thread inside ``cache.pause()`` or another Config's scope must not lend
    its state to every later event.

    Thread safety: none of its own; the informer calls every method under its delivery lock
    (``*_locked`` there), which orders them against the notifications it queues.
    """

    def __init__(self, handler_context: Callable[[], contextvars.Context] | None = None) -> None:
        self._lanes: list[Lane] = []
        self._handler_context = handler_context or contextvars.Context

    def start(self, lane: Lane | None = None) -> None:
        """Start ``lane`` (or every lane, at the start of a run) in the handlers' context."""
        for each in (lane,) if lane is not None else self._lanes:
            self._handler_context().run(each.start)

    def stop(self) -> list[Callable[[float | None], bool]]:
        """Ask every lane to stop; the joins to wait with (none for a lane that never ran)."""
        for lane in self._lanes:
            lane.keep_replay_ends()
        return [join for join in (lane.stop() for lane in self._lanes) if join is not None]

    def threads(self) -> list[threading.Thread]:
        """Every lane's thread now."""
        return [thread for lane in self._lanes for thread in lane.threads()]

    def add(self, lane: Lane) -> bool:
        """Take ``lane`` in; True if it is new."""
        if lane in self._lanes:
            return False
        self._lanes.append(lane)
        return True

    def drop(self, lane: Lane) -> Callable[[float | None], bool] | None:
        """Stop and forget ``lane`` (its last handler is gone); the join to wait with."""
        if lane not in self._lanes:
            return None
        self._lanes.remove(lane)
        return lane.stop()

    def forget(self) -> None:
        """Drop every lane and every registration (a closed Config's handlers: see ``Informer.forget_handlers``)."""
        lanes, self._lanes = self._lanes, []
        for lane in lanes:
            for registration in lane.registrations:
                lane.remove(registration)

    def after_fork(self) -> None:
        """In a fork child: every lane re-armed, not running (``start()`` runs them here)."""
        for lane in self._lanes:
            lane.after_fork()

    def enqueue(self, notes: list[Notification]) -> None:
        """Queue notifications on every lane, in the order the informer applied them."""
        if notes:
            for lane in self._lanes:
                lane.enqueue(notes)

    def synced(self) -> None:
        """The informer's list was just queued: mark the replay end of every handler waiting for it."""
        for lane in self._lanes:
            lane.synced()

    def backlogs(self) -> dict[str, int]:
        """``{"pods@*#3 (add:handler, update:other)": queued}``: each view's lane and the handlers it feeds."""
        return {_label(lane): lane.backlog for lane in self._lanes}


def _label(lane: Lane) -> str:
    handlers = ", ".join(f"{r.event}:{r.name.rpartition(':')[2]}" for r in lane.registrations)
    return f"{lane.name} ({handlers})"
