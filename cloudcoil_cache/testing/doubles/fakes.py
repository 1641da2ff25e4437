"""Socket-free test doubles for the informer: a ``FakeClock`` and a scriptable ``FakeListWatch``."""

from __future__ import annotations

import threading
from collections import deque
from typing import Any, Callable, Iterator

__all__ = ["FakeClock", "FakeListWatch", "FakePage", "FakeWatchEvent"]


class FakeClock:
    """A monotonic clock that moves only when a test calls ``advance()``.

    ``wait(event, timeout)`` (what reflectors use for backoff) returns True as soon as ``event`` is
    set and False once the clock has been advanced past ``timeout``; ``wait_for_sleepers(n)`` lets a
    test wait until ``n`` threads are parked in such a wait before it advances the clock.
    Inject it with ``Cache(tuning=Tuning(clock=clock))`` or ``Tuning(clock=clock)``.
    """

    def __init__(self, start: float = 1000.0) -> None:
        self._now = float(start)
        self._cond = threading.Condition(threading.Lock())
        self._sleepers = 0

    def now(self) -> float:
        with self._cond:
            return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a monotonic clock never goes back")
        with self._cond:
            self._now += seconds
            self._cond.notify_all()

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        with self._cond:
            deadline = None if timeout is None else self._now + timeout
            self._sleepers += 1
            self._cond.notify_all()
            try:
                while True:
                    if event.is_set():
                        return True
                    if deadline is not None and self._now >= deadline:
                        return False
                    # The event is set by another thread that does not know this clock: look at
                    # it again every few milliseconds of real time (a test double, not the library).
                    self._cond.wait(0.005)
            finally:
                self._sleepers -= 1
                self._cond.notify_all()

    @property
    def sleepers(self) -> int:
        with self._cond:
            return self._sleepers

    def wait_for_sleepers(self, n: int = 1, timeout: float = 10.0) -> bool:
        """Block (real time, at most ``timeout``) until ``n`` threads wait on this clock."""
        with self._cond:
            return self._cond.wait_for(lambda: self._sleepers >= n, timeout)

    def __repr__(self) -> str:
        return f"FakeClock(now={self.now():g})"


class FakePage:
    """One LIST page (what a reflector reads: ``items``, ``resource_version``, ``continue_``)."""

    def __init__(self, items: list[Any], resource_version: str, continue_: str | None = None) -> None:
        self.items = items
        self.resource_version = resource_version
        self.continue_ = continue_


class FakeWatchEvent:
    """One watch event (``type``, ``object``, ``resource_version``)."""

    def __init__(self, type: str, object: Any, resource_version: str) -> None:  # noqa: A002
        self.type = type
        self.object = object
        self.resource_version = resource_version

    def __repr__(self) -> str:
        return f"FakeWatchEvent({self.type}, rv={self.resource_version})"


class _Stream:
    def __init__(self, owner: FakeListWatch) -> None:
        self._owner = owner
        self.queue: deque[FakeWatchEvent | BaseException | None] = deque()
        self.closed = False

    def __iter__(self) -> Iterator[FakeWatchEvent]:
        cond = self._owner._cond
        while True:
            with cond:
                while not self.queue and not self.closed:
                    cond.wait()
                if self.closed and not self.queue:
                    return
                item = self.queue.popleft()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def close(self) -> None:
        with self._owner._cond:
            self.closed = True
            self._owner._cond.notify_all()


class FakeListWatch:
    """A ListerWatcher double: objects in memory, events pushed by the test, failures scripted.

    ``add/modify/delete(obj)`` change the objects and send the event to open watches (the
    object's ``metadata.resource_version`` is set from a counter, like the API server's);
    ``fail_next_list(exc)`` / ``fail_next_watch(exc)`` make the next request raise;
    ``end_watches()`` ends open watches cleanly; ``break_watches(exc)`` ends them with an error.
    ``requests`` records ``("list" | "watch", resource_version)`` for assertions. Use it as
    ``Informer(key, lambda key: fake)``.
    """

    def __init__(self, objects: list[Any] | None = None, *, start_rv: int = 1) -> None:
        self._cond = threading.Condition(threading.RLock())  # RLock: wait_for predicates may call in
        self._rv = start_rv
        self._objects: dict[tuple[str, str], Any] = {}
        self._streams: list[_Stream] = []
        self._list_failures: deque[BaseException] = deque()
        self._watch_failures: deque[BaseException] = deque()
        self._interrupted = False
        self.requests: list[tuple[str, str | None]] = []
        for obj in objects or ():
            self._objects[_key(obj)] = self._stamp(obj)

    # ----------------------------------------------------------------- test side
    def _stamp(self, obj: Any) -> Any:
        self._rv += 1
        obj.metadata.resource_version = str(self._rv)
        return obj

    def _send_locked(self, event: FakeWatchEvent | BaseException | None) -> None:
        for stream in self._streams:
            if not stream.closed:
                stream.queue.append(event)
        self._cond.notify_all()

    def _change(self, type_: str, obj: Any) -> FakeWatchEvent:
        with self._cond:
            obj = self._stamp(obj)
            if type_ == "DELETED":
                self._objects.pop(_key(obj), None)
            else:
                self._objects[_key(obj)] = obj
            event = FakeWatchEvent(type_, obj, obj.metadata.resource_version)
            self._send_locked(event)
            return event

    def add(self, obj: Any) -> FakeWatchEvent:
        return self._change("ADDED", obj)

    def modify(self, obj: Any) -> FakeWatchEvent:
        return self._change("MODIFIED", obj)

    def delete(self, obj: Any) -> FakeWatchEvent:
        return self._change("DELETED", obj)

    def fail_next_list(self, exc: BaseException) -> None:
        with self._cond:
            self._list_failures.append(exc)

    def fail_next_watch(self, exc: BaseException) -> None:
        with self._cond:
            self._watch_failures.append(exc)

    def end_watches(self) -> None:
        with self._cond:
            self._send_locked(None)

    def break_watches(self, exc: BaseException) -> None:
        with self._cond:
            self._send_locked(exc)

    def open_watches(self) -> int:
        with self._cond:
            return sum(not s.closed for s in self._streams)

    def wait_for(self, predicate: Callable[[FakeListWatch], bool], timeout: float = 10.0) -> bool:
        """Block until ``predicate(self)`` holds (checked on every request and change)."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self), timeout)

    @property
    def resource_version(self) -> str:
        with self._cond:
            return str(self._rv)

    # ------------------------------------------------------------ reflector side
    def list_page(
        self, *, resource_version: str | None = None, limit: int | None = None, continue_: str | None = None
    ) -> FakePage:
        with self._cond:
            self.requests.append(("list", resource_version))
            self._cond.notify_all()
            if self._interrupted:
                raise ConnectionAbortedError("interrupted")
            if self._list_failures:
                raise self._list_failures.popleft()
            return FakePage(list(self._objects.values()), str(self._rv))

    def watch(
        self,
        *,
        resource_version: str,
        timeout_seconds: int | None = None,
        read_timeout: float | None = None,
        line_timeout: float | None = None,
    ) -> _Stream:
        with self._cond:
            self.requests.append(("watch", resource_version))
            self._cond.notify_all()
            if self._interrupted:
                raise ConnectionAbortedError("interrupted")
            if self._watch_failures:
                raise self._watch_failures.popleft()
            stream = _Stream(self)
            self._streams = [s for s in self._streams if not s.closed] + [stream]
            return stream

    def interrupt(self) -> None:
        with self._cond:
            self._interrupted = True
            for stream in self._streams:
                stream.closed = True
            self._cond.notify_all()


def _key(obj: Any) -> tuple[str, str]:
    return (obj.metadata.namespace or "", obj.metadata.name)
