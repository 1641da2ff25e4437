"""``Watch``: the resilient watch behind ``Kind.watch()``, re-opened until its caller stops it."""

from __future__ import annotations

import enum
import logging
import threading
import time
from typing import Any, Generator, Generic, TypeVar

from cloudcoil_cache._listwatch import ListWatch, WatchEvent
from cloudcoil_cache._runnable import RunnableThread
from cloudcoil_cache.caching._backoff import Backoff
from cloudcoil_cache.errors import (
    APIError,
    LineTooLong,
    ProtocolError,
    ReadTimeout,
    ServerError,
    TooManyRequests,
    TransportError,
    is_expired,
    is_too_large_resource_version,
    retry_after_of,
)

__all__ = ["DEFAULT_WATCH_TIMEOUT", "Watch"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Server-side ``timeoutSeconds`` of each watch request when none is given (cloudcoil's).
DEFAULT_WATCH_TIMEOUT = 300
#: Re-opening waits: 0.2 s doubling to 10 s (cloudcoil caps at 10 s too), jitter [d, 2d).
_BACKOFF = Backoff(initial=0.2, cap=10.0, reset_after=60.0)
#: A watch that ends cleanly this fast without an event is treated as a failure (backoff).
_MIN_WATCH_SECONDS = 0.5
#: The longest Retry-After honoured between two watch requests.
_MAX_RETRY_AFTER = 30.0
#: How long the stop-event relay waits on the caller's event before it looks whether the watch
#: ended (``threading.Event`` has no callbacks): it ends at most this long after the watch does.
_RELAY_WAIT_SECONDS = 0.5


class _State:
    """What the watch loop works on; it never references the ``Watch``, so dropping a ``Watch``
    frees its generator by reference counting, which closes the stream (no cycle for the gc)."""

    __slots__ = (
        "source",
        "cls",
        "rv",
        "timeout",
        "read_timeout",
        "bookmarks",
        "raise_on_expired",
        "stopped",
        "expired_in_a_row",
    )

    def __init__(
        self,
        source: ListWatch[Any],
        cls: Any,
        rv: str | None,
        timeout: int,
        read_timeout: float | None,
        bookmarks: bool,
        raise_on_expired: bool,
    ) -> None:
        self.source = source
        self.cls = cls
        self.rv = rv
        self.timeout = timeout
        self.read_timeout = read_timeout
        self.bookmarks = bookmarks
        self.raise_on_expired = raise_on_expired
        self.stopped = threading.Event()
        self.expired_in_a_row = 0  # 410s with no event between them: the second one backs off

    def signal_stop(self) -> None:
        self.stopped.set()
        self.source.interrupt()  # aborts an open or a blocked read, and refuses later requests


class Watch(Generic[T]):
    """Iterate for ``(event_type, object)``, for as long as the caller wants; never ends on its own.

    Each watch request ends when the server says so (``timeout_seconds``), when the stream stays
    quiet for the read timeout, or when the connection drops: the next one resumes from the last
    resourceVersion seen (bookmarks keep it fresh, so they are always requested). A request that
    ends in under 0.5 s without an event (a tiny read timeout, a server that closes at once) is
    re-opened after a backoff (0.2 s doubling to 10 s), never in a tight loop. A 410 Gone
    (history compacted) restarts from the current state: every object comes again as ``ADDED``
    (objects deleted meanwhile are not reported). Connection failures, 429 and 5xx answers are
    retried with a backoff. Other errors (401, 403, 404, a malformed stream) raise.

    It ends when ``close()`` is called (from any thread: a pending read returns at once), when the
    ``stop_event`` given is set (also during a backoff wait, or while a read is blocked), when the
    consuming code stops iterating and closes it (``with``, ``contextlib.closing``), or when the
    last reference to it goes (the stream is closed then, without waiting for the gc). A
    ``stop_event`` is relayed by a thread of its own, which ends at most 0.5 s after the watch.
    ``BOOKMARK`` events are yielded (with an object of the watched class carrying only
    ``metadata.resourceVersion``) when ``allow_bookmarks`` is set.
    """

    def __init__(
        self,
        source: ListWatch[T],
        cls: Any,
        *,
        resource_version: str | None,
        timeout_seconds: int | None,
        read_timeout: float | None,
        allow_bookmarks: bool = True,
        stop_event: threading.Event | None = None,
        raise_on_expired: bool = False,
    ) -> None:
        if timeout_seconds is not None and (
            isinstance(timeout_seconds, bool) or not isinstance(timeout_seconds, int) or timeout_seconds < 1
        ):
            raise ValueError(f"timeout_seconds must be an integer >= 1, got {timeout_seconds!r}")
        if read_timeout is not None and (
            isinstance(read_timeout, bool) or not isinstance(read_timeout, (int, float)) or not read_timeout > 0
        ):
            raise ValueError(f"read_timeout must be a number of seconds > 0, got {read_timeout!r}")
        self._state = _State(
            source,
            cls,
            resource_version or None,
            timeout_seconds or DEFAULT_WATCH_TIMEOUT,
            read_timeout,
            allow_bookmarks,
            raise_on_expired,
        )
        self._user_stop = stop_event
        self._owner: int | None = None  # the thread iterating (only it may close the generator)
        self._events: Generator[tuple[str, T], None, None] = _run(self._state)

    def __repr__(self) -> str:
        state = "stopped" if self._state.stopped.is_set() else "open"
        return f"<Watch {self._state.cls.kind} resourceVersion={self._state.rv!r} {state}>"

    @property
    def resource_version(self) -> str | None:
        """The last resourceVersion seen (where the next watch request resumes)."""
        return self._state.rv

    # --------------------------------------------------------------- iterator
    def __iter__(self) -> Watch[T]:
        return self

    def __next__(self) -> tuple[str, T]:
        if self._owner is None:
            self._owner = threading.get_ident()
            if self._user_stop is not None:
                _start_relay(self._user_stop, self._state)
        return next(self._events)

    def close(self) -> None:
        """End the watch; safe from any thread and idempotent, and it never waits for a thread.

        An open stream is interrupted at once; from the iterating thread (or before any iteration)
        the generator is closed too, elsewhere it ends at its next step.
        """
        self._state.signal_stop()
        if self._owner is None or self._owner == threading.get_ident():
            try:
                self._events.close()
            except ValueError:  # pragma: no cover - running in another thread: it ends by itself
                pass

    def __enter__(self) -> Watch[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ------------------------------------------------------------------------ loop
class _Attempt:
    """One watch request: when it was opened, how many events it delivered, the failure that ended it."""

    __slots__ = ("started", "delivered", "failure")

    def __init__(self, started: float) -> None:
        self.started = started
        self.delivered = 0
        self.failure: BaseException | None = None


class _Verdict(enum.Enum):
    """What the loop does after a watch request failed."""

    NEXT = "next"  # re-open it, at once or after a backoff (``_next_wait``)
    AGAIN = "again"  # re-open it at once (a first 410 in a row)
    RAISE = "raise"  # the failure ends the watch


def _run(state: _State) -> Generator[tuple[str, Any], None, None]:
    """The watch loop over ``state`` (module level: the generator must not hold the ``Watch``)."""
    backoff = _BACKOFF
    stopped = state.stopped
    try:
        while not stopped.is_set():
            attempt = _Attempt(time.monotonic())
            try:
                yield from _events(state, attempt)
            except LineTooLong:
                raise  # the same line would come again
            except (APIError, TransportError) as exc:
                if stopped.is_set():
                    return
                verdict = _judge(state, attempt, exc)
                if verdict is _Verdict.RAISE:
                    raise
                if verdict is _Verdict.AGAIN:
                    continue
            if stopped.is_set():
                return
            delay, backoff = _next_wait(attempt, backoff)
            if delay is not None and stopped.wait(delay):
                return
    finally:
        state.signal_stop()  # also ends the relay thread (within _RELAY_WAIT_SECONDS)


def _events(state: _State, attempt: _Attempt) -> Generator[tuple[str, Any], None, None]:
    """One watch request from ``state.rv``: its events, counted on ``attempt``; it ends early once stopped."""
    with state.source.watch(
        resource_version=state.rv or "",
        timeout_seconds=state.timeout,
        read_timeout=state.read_timeout,
        allow_bookmarks=True,
    ) as stream:
        for event in stream:
            attempt.delivered += 1
            state.expired_in_a_row = 0
            state.rv = event.resource_version
            if event.type == "BOOKMARK":
                if state.bookmarks:
                    yield "BOOKMARK", _bookmark(state.cls, event)
            else:
                yield event.type, event.object
            if state.stopped.is_set():
                return


def _judge(state: _State, attempt: _Attempt, exc: APIError | TransportError) -> _Verdict:
    """Log ``exc``, which ended ``attempt``, and say what comes next; a failure to retry is kept on ``attempt``."""
    kind = state.cls.kind
    if isinstance(exc, ReadTimeout):
        log.debug("%s watch: quiet for the read timeout; re-watching from %s", kind, state.rv)
        return _Verdict.NEXT  # a clean end: at once if it lasted _MIN_WATCH_SECONDS, else after a backoff
    if isinstance(exc, TransportError):  # a dropped connection (ProtocolError), or none at all
        log.log(
            logging.DEBUG if isinstance(exc, ProtocolError) else logging.WARNING,
            "%s watch: %s; re-watching from %s",
            kind,
            exc,
            state.rv,
        )
        attempt.failure = exc
        return _Verdict.NEXT
    if not (is_expired(exc) or is_too_large_resource_version(exc)):
        if not _retriable(exc):
            return _Verdict.RAISE
        log.warning("%s watch: %s; retrying", kind, exc)
    elif state.raise_on_expired:
        return _Verdict.RAISE
    else:
        log.info("%s watch: %s; restarting from the current state", kind, exc)
        state.rv = None
        state.expired_in_a_row += 1
        if state.expired_in_a_row == 1:
            return _Verdict.AGAIN  # at once; a second one in a row backs off
    attempt.failure, attempt.delivered = exc, 0
    return _Verdict.NEXT


def _next_wait(attempt: _Attempt, backoff: Backoff) -> tuple[float | None, Backoff]:
    """How long to wait before the next request after ``attempt`` (None: not at all), and the backoff after it."""
    if attempt.delivered or (attempt.failure is None and time.monotonic() - attempt.started >= _MIN_WATCH_SECONDS):
        return None, _BACKOFF  # progress, or the server ended it (timeoutSeconds): resume now
    delay, backoff = backoff.next(time.monotonic())
    retry_after = retry_after_of(attempt.failure) if attempt.failure is not None else None
    if retry_after:
        delay = max(delay, min(retry_after, _MAX_RETRY_AFTER))
    return delay, backoff


def _bookmark(cls: Any, event: WatchEvent[Any]) -> Any:
    meta: dict[str, Any] = {"resourceVersion": event.resource_version}
    if event.initial_events_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    return cls.from_dict({"apiVersion": cls.api_version, "kind": cls.kind, "metadata": meta})


# ------------------------------------------------------------ stop-event relay
def _start_relay(user_stop: threading.Event, state: _State) -> None:
    """A thread that turns the caller's stop event into ``close()``-like interruption.

    It waits on the caller's event (it wakes twice a second to see whether the watch ended
    meanwhile; it holds the state, never the ``Watch``) and is not joined: it ends by itself.
    """

    def relay() -> None:
        while not state.stopped.is_set():
            if user_stop.wait(_RELAY_WAIT_SECONDS):
                state.signal_stop()
                return

    name = f"cloudcoil-watch-stop-{state.cls.kind}"
    RunnableThread(name, relay, owner=f"watch of {state.cls.kind}", stopping=state.stopped, detached=True).start()


def _retriable(exc: APIError) -> bool:
    return isinstance(exc, (TooManyRequests, ServerError)) or exc.code == 408
