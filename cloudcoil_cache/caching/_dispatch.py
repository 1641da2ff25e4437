"""Per-handler delivery: one unbounded queue and one thread per handler (client-go's processorListener)."""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Any, Callable

from cloudcoil_cache.caching._store import Added, Deleted, Notification, Updated

__all__ = ["EVENT_TYPES", "Listener"]

log = logging.getLogger(__name__)

EVENT_TYPES = {"add": Added, "update": Updated, "delete": Deleted}


def _describe(note: Notification) -> str:
    obj = note.new if isinstance(note, Updated) else note.obj
    meta = getattr(obj, "metadata", None)
    name = getattr(meta, "name", None)
    namespace = getattr(meta, "namespace", None)
    return f"{type(note).__name__} {namespace + '/' if namespace else ''}{name}"


class Listener:
    """Delivers one kind of notification (add, update or delete) to one handler, in order.

    The queue is unbounded, so a slow handler never delays the reflector or other handlers; its
    backlog is visible as ``backlog``. A handler that raises is logged with the event and keeps
    receiving events. ``stop()`` lets the current call finish and drops what is still queued.
    The thread exists only between ``start()`` and ``stop()``; a listener can be started again.

    Args:
        event: "add", "update" or "delete".
        handler: the user's function, returned by ``handler`` for handles.
        invoke: calls the handler for one notification (sync: call it; async: hand it to a loop).
        name: used for the thread name and log lines.
    """

    def __init__(self, event: str, handler: Callable[..., Any],
                 invoke: Callable[[Notification], None], name: str) -> None:
        if event not in EVENT_TYPES:
            raise ValueError(f"unknown event {event!r}; expected one of {sorted(EVENT_TYPES)}")
        self.event = event
        self.accepts = EVENT_TYPES[event]
        self.handler = handler
        self.name = name
        self._invoke = invoke
        self._cond = threading.Condition(threading.Lock())
        self._queue: deque[Notification] = deque()
        self._running = False
        self._generation = 0  # a restarted listener's old thread must not keep running
        self._stop_hooks: list[Callable[[], None]] = []
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._running

    @property
    def backlog(self) -> int:
        return len(self._queue)

    def enqueue(self, notes: list[Notification]) -> None:
        """Queue the notifications this listener accepts. Never blocks for long; never calls the handler."""
        mine = [n for n in notes if isinstance(n, self.accepts)]
        if mine:
            with self._cond:
                wake = not self._queue  # the thread waits only on an empty queue
                self._queue.extend(mine)
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
            self._thread = threading.Thread(target=self._run, args=(self._generation, self._thread),
                                            name=f"cloudcoil-handler-{self.name}", daemon=True)
            self._thread.start()

    def add_stop_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` on every ``stop()`` (an async handler cancels its pending coroutine)."""
        self._stop_hooks.append(hook)

    def stop(self) -> threading.Thread | None:
        """Drop queued events and ask the thread to end; returns the thread to join."""
        with self._cond:
            self._running = False
            self._queue.clear()
            self._cond.notify_all()
            thread = self._thread
        for hook in self._stop_hooks:
            hook()
        return thread

    def join(self, timeout: float | None = None) -> None:
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(self, generation: int, previous: threading.Thread | None) -> None:
        if previous is not None and previous is not threading.current_thread():
            previous.join()
        queue = self._queue
        while True:
            with self._cond:
                while self._running and self._generation == generation and not queue:
                    self._cond.wait()
                if not self._running or self._generation != generation:
                    return
                note = queue.popleft()
            # popleft/append on a deque are atomic: the lock is only needed to wait and to stop.
            try:
                self._invoke(note)
            except BaseException:  # SystemExit too: it would end this thread without a trace
                log.exception("event handler %s raised on %s; it keeps receiving events",
                              self.name, _describe(note))
