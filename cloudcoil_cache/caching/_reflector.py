"""The reflector: one named thread per informer running list → watch → re-watch/relist, forever, until stopped."""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from typing import Any, Callable, Protocol

import attrs

from cloudcoil_cache import _gc
from cloudcoil_cache._clock import SYSTEM_CLOCK, Clock
from cloudcoil_cache._listwatch import ListPage, WatchEvent
from cloudcoil_cache._listwatch._listwatch import ListerWatcher
from cloudcoil_cache.caching._backoff import Backoff
from cloudcoil_cache.errors import (
    APIError,
    CloudcoilError,
    ConnectError,
    LineTooLong,
    ProtocolError,
    ReadTimeout,
    TooManyRequests,
    TransportError,
    is_expired,
    is_hard_failure,
    is_too_large_resource_version,
    retry_after_of,
)

__all__ = ["MAX_RETRY_AFTER", "Reflector", "ReflectorSink", "Tuning", "VeryShortWatchError"]

#: The longest Retry-After the reflector honours, in seconds.
MAX_RETRY_AFTER = 60.0

log = logging.getLogger(__name__)


@attrs.frozen
class Tuning:
    """Timing knobs of every reflector of a cache. The defaults are client-go's; tests shrink them.

    Attributes:
        backoff: the retry backoff (0.8 s doubling to 30 s, jitter [d, 2d), reset after 2 minutes).
        watch_timeout: server-side ``timeoutSeconds`` is drawn from ``[t, 2t)`` to spread reconnects.
        read_timeout: socket read timeout of a watch; bookmarks (about one a minute) keep a healthy
            stream talking, so a silent stream this long is a stall (python client #1148).
        page_size: ``limit`` of a paginated LIST. Half of client-go's 500: a page is parsed by one
            C call that holds the GIL (~12 ms for 250 realistic pods with orjson, twice that with
            500), and every other thread and event loop of the program waits that long.
        min_watch_duration: a watch that ends this fast without an event is "very short" (an error).
        max_list_restarts: consecutive expired-continue restarts of one paginated LIST before failing.
        freeze_gc: after each (re)list and every few hundred watch events, move the objects alive
            into the collector's permanent generation so collections skip the cache (see
            ``cloudcoil_cache._gc`` for the policy).
        clock: the clock of backoff waits, watch durations, resync and staleness (None: the
            system's monotonic clock); tests inject ``cloudcoil_cache.testing.FakeClock``.
        rng: the random source of backoff jitter and watch timeouts (``random.random``).
        stop_timeout: how long the last scope's exit waits for each informer's threads (a thread
            still running then is a daemon thread that ends by itself; it is logged).
    """

    backoff: Backoff = Backoff()
    watch_timeout: float = 300.0
    read_timeout: float = 90.0
    page_size: int = 250
    min_watch_duration: float = 1.0
    max_list_restarts: int = 3
    freeze_gc: bool = True
    clock: Clock | None = None
    rng: Callable[[], float] = random.random
    stop_timeout: float = 10.0


class ReflectorSink(Protocol):
    """Where the reflector puts what it learns (implemented by the informer)."""

    def replace(self, items: list[Any], resource_version: str, *, resync: bool,
                started_at: float | None = None) -> None: ...
    def apply(self, event: WatchEvent[Any]) -> None: ...
    def bookmark(self, resource_version: str) -> None: ...
    def error(self, exc: BaseException | None) -> None: ...


class VeryShortWatchError(CloudcoilError):
    """A watch ended almost at once without an event: treat as an error (backoff + relist)."""


class _Stopped(Exception):
    """Internal: the reflector was asked to stop."""


class Reflector:
    """Keeps a sink in step with the API server for one ListerWatcher.

    ``start()`` spawns the thread; ``stop()`` sets the stop event, closes any open watch stream
    (which unblocks the thread's read) and joins. The thread never dies of an error: every failure
    is passed to the sink's ``error()`` (which records it) and retried after a backoff.
    Resource versions are compared only for equality, never as numbers.
    """

    def __init__(self, name: str, source: ListerWatcher[Any], sink: ReflectorSink, *,
                 tuning: Tuning = Tuning(), resync_period: float | None = None) -> None:
        self.name = name
        self._source = source
        self._sink = sink
        self._tuning = tuning
        self._resync_period = resync_period or None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._backoff = tuning.backoff
        self._clock: Clock = tuning.clock or SYSTEM_CLOCK
        # Read by status(); written only by the reflector thread.
        self.last_rv: str | None = None
        self._watch_events = 0  # events the last watch delivered (progress, for the 410 backoff)
        self.relist_count = 0
        self.last_sync_time: float | None = None
        self._next_resync: float | None = None

    # --------------------------------------------------------------- lifecycle
    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError(f"reflector {self.name} was already started")
        self._thread = threading.Thread(target=self._run, name=f"cloudcoil-reflector-{self.name}",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Ask the thread to end and interrupt a blocked watch read (``join()`` waits)."""
        self._stop.set()
        self._source.interrupt()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ------------------------------------------------------------------- loop
    def _run(self) -> None:
        need_list = True
        rv_unavailable = False
        resync = False
        expired_in_a_row = 0
        while not self._stop.is_set():
            try:
                if need_list:
                    # A successful list does not clear the error: only an open watch makes the
                    # informer current again (a list that works while every watch fails is stale).
                    self._list(rv_unavailable=rv_unavailable, resync=resync)
                    need_list = rv_unavailable = resync = False
                if self._watch():
                    need_list = resync = True
            except _Stopped:
                return
            except Exception as exc:  # the thread never dies: record, back off, retry
                if self._stop.is_set():
                    return
                if is_expired(exc) or is_too_large_resource_version(exc):
                    # Relist now: at the last RV after a 410 (cheap, "not older than"), at "" after
                    # "too large" (the server went back in time). A second 410 in a row backs off.
                    need_list = True
                    rv_unavailable = rv_unavailable or is_too_large_resource_version(exc)
                    if self._watch_events:  # the watch made progress before it expired
                        expired_in_a_row = 0
                    expired_in_a_row += 1
                    log.info("%s: %s; relisting", self.name, exc)
                    self._sink.error(exc)  # degraded while the relist runs (still serving)
                    if expired_in_a_row == 1:
                        continue
                elif _is_watch_retriable(exc) and not need_list:
                    self._sink.error(exc)
                    log.info("%s: watch failed (%s); re-watching after backoff", self.name, exc)
                else:
                    self._sink.error(exc)
                    need_list = True
                    _log_failure(self.name, exc)
                if self._wait_backoff(exc):
                    return

    def _wait_backoff(self, exc: BaseException) -> bool:
        """Wait out the next backoff step (at least Retry-After); True if stopped meanwhile."""
        delay, self._backoff = self._backoff.next(self._clock.now(), self._tuning.rng)
        retry_after = retry_after_of(exc)
        if retry_after:  # honoured, but a server asking for an hour does not park us for an hour
            delay = max(delay, min(retry_after, MAX_RETRY_AFTER))
        return self._clock.wait(self._stop, delay)

    # ------------------------------------------------------------------- list
    def _list(self, *, rv_unavailable: bool, resync: bool) -> None:
        started_at = self._clock.now()
        rv = "" if rv_unavailable or self.last_rv is None else self.last_rv
        if rv and not resync:
            try:
                # A concrete RV without limit is "not older than": cheap, served from the watch cache.
                page = self._source.list_page(resource_version=rv, limit=None, continue_=None)
                items, list_rv = page.items, page.resource_version
            except APIError as exc:
                if not (is_expired(exc) or is_too_large_resource_version(exc)):
                    raise
                log.info("%s: relist at resourceVersion %s failed (%s); listing at the latest",
                         self.name, rv, exc)
                items, list_rv = self._paginated_list()
        else:
            # The first list, and periodic resyncs: a consistent paginated LIST, so no single
            # parse holds the GIL for the whole collection (a resync must not pause the program).
            items, list_rv = self._paginated_list()
        self._check_stop()
        self._sink.replace(items, list_rv, resync=resync, started_at=started_at)
        del items
        if self._tuning.freeze_gc:
            _gc.freeze()
        self.last_rv = list_rv
        self.relist_count += 1
        self.last_sync_time = time.time()
        if self._resync_period:
            self._next_resync = self._clock.now() + self._resync_period

    def _paginated_list(self) -> tuple[list[Any], str]:
        """A consistent paginated LIST. An expired continue token restarts it: never mix snapshots."""
        restarts = 0
        while True:
            items: list[Any] = []
            continue_: str | None = None
            try:
                while True:
                    self._check_stop()
                    page: ListPage[Any] = self._source.list_page(
                        resource_version="" if continue_ is None else None,
                        limit=self._tuning.page_size, continue_=continue_)
                    items.extend(page.items)
                    if self._tuning.freeze_gc:
                        # Each page is decoded with collection paused (ListWatch); freezing it now
                        # keeps later collections from walking every page decoded so far (a
                        # stop-the-world pause of 0.1-0.3 s per pass at 10k pods).
                        _gc.freeze()
                    if not page.continue_:
                        return items, page.resource_version
                    continue_ = page.continue_
            except APIError as exc:
                if not (is_expired(exc) and continue_ is not None):
                    raise
                restarts += 1
                if restarts > self._tuning.max_list_restarts:
                    raise
                log.info("%s: continue token expired on a later page; restarting the list", self.name)

    # ------------------------------------------------------------------ watch
    def _watch(self) -> bool:
        """Watch from the last RV until the stream ends. Returns True when a resync relist is due.

        A clean end, a dropped connection, a truncated line and a read timeout all end the watch
        normally: the caller re-watches from the last fully applied RV, without a relist.
        """
        assert self.last_rv is not None
        clock = self._clock
        seconds = int(self._tuning.watch_timeout * (1.0 + self._tuning.rng()))  # [t, 2t): spread reconnects
        if self._next_resync is not None:  # end the watch when the resync is due (rounded up: once)
            seconds = min(seconds, math.ceil(self._next_resync - clock.now()))
        seconds = max(1, seconds)
        started = clock.now()
        events = self._watch_events = 0
        freeze_gc = self._tuning.freeze_gc
        stream = self._source.watch(resource_version=self.last_rv,
                                    timeout_seconds=seconds,
                                    read_timeout=self._tuning.read_timeout)
        self._sink.error(None)  # the watch is open: a failure to open it (429...) is over
        try:
            self._check_stop()
            for event in stream:
                events += 1
                if event.type == "BOOKMARK":
                    self._sink.bookmark(event.resource_version)
                else:
                    self._sink.apply(event)
                    if freeze_gc:
                        _gc.note_events()
                self.last_rv = event.resource_version
                if self._stop.is_set():
                    break
        except LineTooLong:
            self._check_stop()
            raise  # not the stream ending: an error (logged, in status, backoff and relist)
        except (ProtocolError, ReadTimeout) as exc:
            self._check_stop()
            log.debug("%s: watch stream ended (%s); re-watching from %s", self.name, exc, self.last_rv)
        except TransportError:
            self._check_stop()
            raise
        finally:
            self._watch_events = events
            stream.close()
        self._check_stop()
        if self._next_resync is not None and clock.now() >= self._next_resync:
            return True
        if not events and clock.now() - started < self._tuning.min_watch_duration:
            raise VeryShortWatchError(
                f"very short watch: the watch ended after {clock.now() - started:.3f}s "
                f"without an event")
        return False

    def _check_stop(self) -> None:
        if self._stop.is_set():
            raise _Stopped()


def _is_watch_retriable(exc: BaseException) -> bool:
    """Connection refused or 429 when opening a watch: back off and re-watch, no relist (client-go)."""
    return isinstance(exc, (ConnectError, TooManyRequests))


def _log_failure(name: str, exc: BaseException) -> None:
    if is_hard_failure(exc):
        log.error("%s: %s (retrying with backoff; check credentials/RBAC/resource)", name, exc)
    else:
        log.warning("%s: list/watch failed: %s", name, exc)
