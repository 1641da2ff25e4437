"""``Watch``: the resilient watch behind ``Kind.watch()``, re-opened until its caller stops it."""

from __future__ import annotations

import logging
import threading
import time
import weakref
from typing import Any, Generator, Generic, TypeVar

from cloudcoil_cache._listwatch import ListWatch, WatchEvent
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
#: How often the thread relaying a caller's stop event looks at it.
_STOP_POLL_SECONDS = 0.05


class Watch(Generic[T]):
    """Iterate for ``(event_type, object)``, for as long as the caller wants; never ends on its own.

    Each watch request ends when the server says so (``timeout_seconds``), when the stream stays
    quiet for the read timeout, or when the connection drops: the next one resumes from the last
    resourceVersion seen (bookmarks keep it fresh, so they are always requested). A 410 Gone
    (history compacted) restarts from the current state: every object comes again as ``ADDED``
    (objects deleted meanwhile are not reported). Connection failures, 429 and 5xx answers are
    retried with a backoff. Other errors (401, 403, 404, a malformed stream) raise.

    It ends when ``close()`` is called (from any thread: a pending read returns at once), when the
    ``stop_event`` given is set (also during a backoff wait, or while a read is blocked), or when
    the consuming code stops iterating and closes it (``with``, ``contextlib.closing``).
    ``BOOKMARK`` events are yielded (with an object of the watched class carrying only
    ``metadata.resourceVersion``) when ``allow_bookmarks`` is set.
    """

    def __init__(self, source: ListWatch[T], cls: Any, *, resource_version: str | None,
                 timeout_seconds: int | None, read_timeout: float | None,
                 allow_bookmarks: bool = True, stop_event: threading.Event | None = None,
                 raise_on_expired: bool = False) -> None:
        if timeout_seconds is not None and (isinstance(timeout_seconds, bool)
                                            or not isinstance(timeout_seconds, int) or timeout_seconds < 1):
            raise ValueError(f"timeout_seconds must be an integer >= 1, got {timeout_seconds!r}")
        if read_timeout is not None and not read_timeout > 0:
            raise ValueError(f"read_timeout must be > 0 seconds, got {read_timeout!r}")
        self._source = source
        self._cls = cls
        self._rv = resource_version or None
        self._timeout = timeout_seconds or DEFAULT_WATCH_TIMEOUT
        self._read_timeout = read_timeout
        self._bookmarks = allow_bookmarks
        self._raise_on_expired = raise_on_expired
        self._user_stop = stop_event
        self._stopped = threading.Event()
        self._relay: threading.Thread | None = None
        self._owner: int | None = None  # the thread iterating (only it may close the generator)
        self._events = self._run()

    def __repr__(self) -> str:
        state = "stopped" if self._stopped.is_set() else "open"
        return f"<Watch {self._cls.kind} resourceVersion={self._rv!r} {state}>"

    @property
    def resource_version(self) -> str | None:
        """The last resourceVersion seen (where the next watch request resumes)."""
        return self._rv

    # --------------------------------------------------------------- iterator
    def __iter__(self) -> Watch[T]:
        return self

    def __next__(self) -> tuple[str, T]:
        if self._owner is None:
            self._owner = threading.get_ident()
            if self._user_stop is not None:
                self._start_relay(self._user_stop)
        return next(self._events)

    def close(self) -> None:
        """End the watch; safe from any thread and idempotent (an open stream is closed at once)."""
        self._signal_stop()
        if self._owner is None or self._owner == threading.get_ident():
            try:
                self._events.close()
            except ValueError:  # pragma: no cover - running in another thread: it ends by itself
                pass
        self._join_relay()

    def __enter__(self) -> Watch[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _signal_stop(self) -> None:
        self._stopped.set()
        self._source.interrupt()  # aborts an open or a blocked read, and refuses later requests

    # ------------------------------------------------------------------- loop
    def _run(self) -> Generator[tuple[str, T], None, None]:
        backoff = _BACKOFF
        expired_in_a_row = 0
        stopped = self._stopped
        try:
            while not stopped.is_set():
                started = time.monotonic()
                delivered = 0
                failure: BaseException | None = None
                try:
                    with self._source.watch(resource_version=self._rv or "", timeout_seconds=self._timeout,
                                            read_timeout=self._read_timeout,  # type: ignore[arg-type]
                                            allow_bookmarks=True) as stream:
                        for event in stream:
                            delivered += 1
                            expired_in_a_row = 0
                            self._rv = event.resource_version
                            if event.type == "BOOKMARK":
                                if self._bookmarks:
                                    yield "BOOKMARK", self._bookmark(event)
                            else:
                                yield event.type, event.object  # type: ignore[misc]
                            if stopped.is_set():
                                return
                except ReadTimeout:
                    if stopped.is_set():
                        return
                    log.debug("%s watch: quiet for the read timeout; re-watching from %s",
                              self._cls.kind, self._rv)
                    continue  # it lasted a whole read timeout: never a tight loop
                except LineTooLong:
                    raise  # the same line would come again
                except APIError as exc:
                    if stopped.is_set():
                        return
                    if not (is_expired(exc) or is_too_large_resource_version(exc)):
                        if not _retriable(exc):
                            raise
                        log.warning("%s watch: %s; retrying", self._cls.kind, exc)
                    elif self._raise_on_expired:
                        raise
                    else:
                        log.info("%s watch: %s; restarting from the current state", self._cls.kind, exc)
                        self._rv = None
                        expired_in_a_row += 1
                        if expired_in_a_row == 1:
                            continue  # at once; a second one in a row backs off
                    failure, delivered = exc, 0
                except TransportError as exc:  # a dropped connection (ProtocolError), or none at all
                    if stopped.is_set():
                        return
                    log.log(logging.DEBUG if isinstance(exc, ProtocolError) else logging.WARNING,
                            "%s watch: %s; re-watching from %s", self._cls.kind, exc, self._rv)
                    failure = exc
                if stopped.is_set():
                    return
                if delivered or (failure is None and time.monotonic() - started >= _MIN_WATCH_SECONDS):
                    backoff = _BACKOFF  # progress, or the server ended it (timeoutSeconds): resume now
                    continue
                delay, backoff = backoff.next(time.monotonic())
                retry_after = retry_after_of(failure) if failure is not None else None
                if retry_after:
                    delay = max(delay, min(retry_after, _MAX_RETRY_AFTER))
                if stopped.wait(delay):
                    return
        finally:
            self._signal_stop()
            self._join_relay()

    def _bookmark(self, event: WatchEvent[T]) -> T:
        meta: dict[str, Any] = {"resourceVersion": event.resource_version}
        if event.initial_events_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        return self._cls.from_dict(  # type: ignore[no-any-return]
            {"apiVersion": self._cls.api_version, "kind": self._cls.kind, "metadata": meta})

    # ------------------------------------------------------ stop-event relay
    def _start_relay(self, user_stop: threading.Event) -> None:
        """A thread that turns the caller's stop event into ``close()``-like interruption."""
        ref = weakref.ref(self)
        stopped = self._stopped
        source = self._source

        def relay() -> None:
            while not user_stop.wait(_STOP_POLL_SECONDS):
                if stopped.is_set() or ref() is None:
                    return
            stopped.set()
            source.interrupt()

        self._relay = threading.Thread(target=relay, name=f"cloudcoil-watch-stop-{self._cls.kind}", daemon=True)
        self._relay.start()

    def _join_relay(self) -> None:
        relay = self._relay
        if relay is not None and relay is not threading.current_thread():
            relay.join()


def _retriable(exc: APIError) -> bool:
    return isinstance(exc, (TooManyRequests, ServerError)) or exc.code == 408
