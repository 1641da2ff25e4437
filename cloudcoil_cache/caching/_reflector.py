"""The reflector: one named thread per informer running list → watch → re-watch/relist, forever, until stopped."""

from __future__ import annotations

import enum
import logging
import math
import random
import threading
import time
from typing import Any, Callable, Iterator, Protocol, cast

import attrs

from cloudcoil_cache import _gc, _json
from cloudcoil_cache._clock import SYSTEM_CLOCK, Clock
from cloudcoil_cache._listwatch import ListPage, WatchEvent, WatchStream
from cloudcoil_cache._listwatch._listwatch import (
    ListerWatcher,
    ParsedPage,
    PrefetchingListerWatcher,
    StreamingListerWatcher,
)
from cloudcoil_cache._runnable import RunnableThread
from cloudcoil_cache.caching._backoff import Backoff
from cloudcoil_cache.caching._page_size import PageSizer
from cloudcoil_cache.caching._prefetch import PagePrefetch
from cloudcoil_cache.errors import (
    APIError,
    BodyTooLarge,
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

__all__ = [
    "EmptyWatchError",
    "Ended",
    "ListPagingError",
    "MAX_RETRY_AFTER",
    "RewoundResourceVersionError",
    "Next",
    "Reflector",
    "ReflectorSink",
    "StalledWatchError",
    "Tuning",
    "VeryShortWatchError",
    "WatchWindow",
    "watch_window",
    "what_next",
]

#: The longest Retry-After the reflector honours, in seconds.
MAX_RETRY_AFTER = 60.0

#: The page size of an unpaginated informer (``Tuning(page_size=0)``) once a body was too large.
_FALLBACK_PAGE_SIZE = 200

log = logging.getLogger(__name__)


@attrs.frozen
class Tuning:
    """Timing knobs of every reflector of a cache. The defaults are client-go's; tests shrink them.

    Attributes:
        backoff: the retry backoff (0.8 s doubling to 30 s, jitter [d, 2d), reset after 2 minutes).
        watch_timeout: server-side ``timeoutSeconds`` is drawn from ``[t, 2t)`` to spread reconnects.
        read_timeout: the longest a started event line may take to complete (a trickle is a
            stall), and the longest a watch may stay open and silent past its own
            ``timeoutSeconds`` (kube-apiserver keeps a quiet resource's watch silent until then,
            and ends it on time: that end is its proof of life): past either,
            ``StalledWatchError`` (python client #1148). With a ``max_staleness``, that grace is
            at most a quarter of it, and the watch's ``timeoutSeconds`` is drawn so that its end
            plus the grace falls within it (``watch_window``): silence is never counted as
            progress for longer than the staleness bound.
        page_size: ``0`` (the default): every LIST unpaginated, decoded while it is read. It is
            consistent (no ``resourceVersion``, or "not older than" the last one on a relist), and
            kube-apiserver 1.31+ (ConsistentListFromCache) serves it from its watch cache, where the
            continued pages of a paginated list are read from etcd (``benchmarks/list_requests.py``:
            1.9 s of server CPU for 10,000 pods instead of 5.4). The body is cut into batches of
            about ``page_bytes`` of items as it arrives (``_listwatch._split``) and each batch is
            parsed and structured on its own: memory and GIL pauses are those of a page, whatever
            the collection's size. ``N``: paginated LISTs of at most N objects (client-go's pager
            asks for 500), for servers before 1.31, whose unpaginated consistent list is one read
            of the whole collection from etcd. A page is parsed by one C call that holds the GIL
            (~10 ms for 200 realistic pods with orjson; ``benchmarks/relist.py``).
        page_bytes: the JSON a batch of an unpaginated LIST is cut at, and a paginated LIST's page
            is sized to: each page asks for as many objects as fit
            this many bytes at the bytes per object of the pages before it (at most
            ``page_size``, at least a tenth of it). orjson parses a page in a buffer 12 times its
            length, which stays in the process as free malloc memory (``caching._page_size``):
            the default bounds it to ~18 MB and leaves 200 realistic pods (6.6 KB each) a page.
            600_000 (~90 such pods) cut RSS by 0.6 KB per pod at 10,000 pods and cost ~10% more
            sync CPU (``benchmarks/README.md``, "RSS and the heap"). None: always ``page_size``.
        min_watch_duration: a watch that ends this fast without an event is "very short" (an error).
        max_list_restarts: consecutive expired-continue restarts of one paginated LIST before failing.
        max_list_pages: the most pages one paginated LIST may take (4,000: a million objects at
            250 a page); past it, or past what the server's ``remainingItemCount`` allows, or at a
            repeated continue token, the LIST fails with ``ListPagingError`` (a server whose
            ``continue`` never ends must not grow the program without bound).
        max_list_bytes: the most bytes of one LIST held unparsed (512 MiB: above a page of 250
            objects at etcd's 1.5 MiB limit each): a paginated page longer than that, or an
            unpaginated body that cannot be cut into items within it, is refused while it is read
            (``errors.BodyTooLarge``), never read whole first; an unpaginated informer then lists in
            pages of 200 for its life. None: no bound.
        freeze_gc: after each (re)list and every few hundred watch events, move the objects alive
            into the collector's permanent generation so collections skip the cache (see
            ``cloudcoil_cache._gc`` for the policy).
        clock: the clock of backoff waits, watch durations, resync and staleness (None: the
            system's monotonic clock); tests inject ``cloudcoil_cache.testing.FakeClock``.
        rng: the random source of backoff jitter and watch timeouts (``random.random``).
        stop_timeout: how long the last scope's exit waits for the informers' threads, all of them
            together (one deadline; a thread still running then is a daemon thread that ends by
            itself; it is logged).
        streaming_lists: sync (and relist) with one WATCH with ``sendInitialEvents=true``
            (KEP-3157, client-go's WatchListClient) instead of a LIST then a WATCH: the initial
            ADDED events fill a temporary set, the bookmark annotated
            ``k8s.io/initial-events-end`` replaces the store at once (as a LIST does) and the same
            watch goes on. A server without the feature (400/422, or a watch that ends without
            that bookmark) makes the informer LIST+WATCH for good, silently (logged at INFO).
            Off by default: kube-apiserver 1.33's ``WatchList`` gate is off (every informer would
            pay a refused request first); servers 1.34+ serve it by default (client-go 1.35 turned
            it on).
    """

    backoff: Backoff = Backoff()
    watch_timeout: float = 300.0
    read_timeout: float = 90.0
    page_size: int = 0
    min_watch_duration: float = 1.0
    max_list_restarts: int = 3
    max_list_pages: int = 4_000
    max_list_bytes: int | None = 512 * 1024 * 1024
    freeze_gc: bool = True
    clock: Clock | None = None
    rng: Callable[[], float] = random.random
    stop_timeout: float = 10.0
    page_bytes: int | None = 1_500_000  # last: a field added later never moves positional arguments
    streaming_lists: bool = attrs.field(default=False, kw_only=True)  # keyword only: positions never move


#: The staleness bound a silent watch is caught within when ``max_staleness`` is 0 (reads stop at
#: the first failure: the failure must still be found): the default ``max_staleness``.
_SILENCE_BOUND_AT_ZERO = 60.0


@attrs.frozen
class WatchWindow:
    """The ``timeoutSeconds`` a watch asks for, drawn from ``[low, high)``, and ``grace``: how long
    past that end a silent watch (or a started line) may stay open before it is a stall."""

    low: float
    high: float
    grace: float

    def draw(self, r: float) -> int:
        """The ``timeoutSeconds`` for a random draw ``r`` in ``[0, 1)``: whole seconds, at least 1."""
        return max(1, int(self.low + (self.high - self.low) * r))

    @property
    def silence_bound(self) -> float:
        """The longest a silent watch can go unnoticed: its end at the latest plus the grace."""
        return max(1, int(self.high)) + self.grace


def watch_window(tuning: Tuning, max_staleness: float | None) -> WatchWindow:
    """The window of every watch of a reflector with this tuning and ``max_staleness``.

    Without a bound (``None``) it is client-go's: ``[watch_timeout, 2 * watch_timeout)`` and the
    read timeout. With one, the grace is at most a quarter of it, and a window that would end
    past the bound minus the grace shrinks to ``[b/2, b)`` of that budget ``b``: a quiet server
    proves itself by ending the watch on time (kube-apiserver sends nothing on a quiet resource,
    not even a bookmark, until then), so a watch still open and silent at its end plus the grace
    is caught before the informer would turn ``stale`` (default 60 s: watches of 22-45 s, a grace
    of 15 s). ``max_staleness=0`` uses the default bound for this.
    """
    low, high = tuning.watch_timeout, 2.0 * tuning.watch_timeout
    grace = tuning.read_timeout
    bound = _SILENCE_BOUND_AT_ZERO if max_staleness == 0 else max_staleness
    if bound is not None:
        grace = min(grace, bound / 4.0)
        budget = max(1.0, bound - grace)
        if high > budget:
            low, high = budget / 2.0, budget
    return WatchWindow(low, high, grace)


class ReflectorSink(Protocol):
    """Where the reflector puts what it learns (implemented by the informer)."""

    def replace(
        self, items: list[Any], resource_version: str, *, resync: bool, started_at: float | None = None
    ) -> None: ...
    def apply(self, event: WatchEvent[Any]) -> None: ...
    def bookmark(self, resource_version: str) -> None: ...
    def error(self, exc: BaseException | None, since: float | None = None) -> None:
        """Record a failure (None: healthy again); ``since``: when it was last known current, if earlier."""
        ...


class VeryShortWatchError(CloudcoilError):
    """A watch ended almost at once without an event: treat as an error (backoff + relist)."""


class EmptyWatchError(CloudcoilError):
    """A watch ended within ``min_watch_duration`` without progress (an event, or a bookmark that
    moved the resourceVersion) although it sent bookmarks: the informer is not current; backoff,
    then re-watch (without a relist: the server accepted the resourceVersion)."""

    def __init__(self, message: str, *, since: float | None = None) -> None:
        self.since = since  # clock time the watch opened: nothing was proven current after it
        super().__init__(message)


class StalledWatchError(CloudcoilError):
    """A watch sent no complete event line within the read timeout (silent, or trickling bytes):
    the informer is not current; backoff, then re-watch."""

    def __init__(self, message: str, *, since: float | None = None) -> None:
        self.since = since  # clock time of the last complete line, at the latest
        super().__init__(message)


class RewoundResourceVersionError(CloudcoilError):
    """The server's resourceVersion is behind the informer's (an etcd restore rewound it): a watch
    from the informer's would stay silent until the server got there, and every change in between
    would be lost. Relist at the latest, as after a 410."""


class ListPagingError(CloudcoilError):
    """A paginated LIST did not end: a continue token came back twice, or more pages came than the
    server's ``remainingItemCount`` allowed, or more than ``Tuning.max_list_pages``."""


class Next(enum.Enum):
    """What the reflector does after a list or a watch ends (``what_next`` decides it)."""

    WATCH = "watch"  # the watch ended cleanly (a list is followed by a watch at once): watch again
    RESYNC = "resync"  # the watch ended because the periodic resync is due: relist (a resync) at once
    RELIST = "relist"  # the RV expired (410) or is too large, once: relist at once
    BACKOFF_WATCH = "backoff, watch"  # the watch failed retriably, delivered nothing or stalled
    BACKOFF_RELIST = "backoff, relist"  # any other failure, a list's, or a second 410 in a row

    @property
    def lists(self) -> bool:
        """Is the next step a list (else a watch from the last RV)?"""
        return self in (Next.RESYNC, Next.RELIST, Next.BACKOFF_RELIST)

    @property
    def backs_off(self) -> bool:
        """Is a backoff step waited out first?"""
        return self in (Next.BACKOFF_WATCH, Next.BACKOFF_RELIST)


@attrs.frozen
class Ended:
    """How a list or a watch ended: what ``what_next`` decides from."""

    failure: BaseException | None = None
    in_list: bool = False  # the failure came from the list (else from the watch)
    resync_due: bool = False  # the watch ended cleanly because the periodic resync is due
    progressed: bool = False  # the last watch (the one before, when a list failed) moved the RV


def what_next(ended: Ended, expired_in_a_row: int) -> tuple[Next, int]:
    """The step after ``ended``, and the new count of expiries in a row (client-go's classification).

    A 410 (or a too-large RV) relists at once, but a second one in a row backs off first (a watch
    that made progress in between starts the count over). A watch that failed to connect, got 429,
    delivered nothing or stalled backs off and watches again from the last RV (the server accepted
    it); every other failure, and any failure of a list, backs off and relists.
    """
    exc = ended.failure
    if exc is None:
        return (Next.RESYNC if ended.resync_due else Next.WATCH), expired_in_a_row
    if _relists_at_once(exc):
        expired_in_a_row = (0 if ended.progressed else expired_in_a_row) + 1
        return (Next.RELIST if expired_in_a_row == 1 else Next.BACKOFF_RELIST), expired_in_a_row
    if not ended.in_list and (isinstance(exc, (EmptyWatchError, StalledWatchError)) or _is_watch_retriable(exc)):
        return Next.BACKOFF_WATCH, expired_in_a_row
    return Next.BACKOFF_RELIST, expired_in_a_row


class _Stopped(Exception):
    """Internal: the reflector was asked to stop."""


class Reflector:
    """Keeps a sink in step with the API server for one ListerWatcher.

    ``start()`` spawns the thread; ``stop()`` sets the stop event, closes any open watch stream
    (which unblocks the thread's read) and joins. The thread never dies of an error: every failure
    is passed to the sink's ``error()`` (which records it) and retried after a backoff.
    Resource versions are compared only for equality, never as numbers.
    """

    def __init__(
        self,
        name: str,
        source: ListerWatcher[Any],
        sink: ReflectorSink,
        *,
        tuning: Tuning = Tuning(),
        resync_period: float | None = None,
        max_staleness: float | None = None,
        resume_from: str | None = None,
        on_failure: Callable[[BaseException], None] | None = None,
    ) -> None:
        """``on_failure``: called with each failure of a list or watch, on this thread, no lock held
        (the informer's watch error handler); what it raises is logged and the reflector goes on.
        ``max_staleness``: the informer's; no backoff wait's jitter carries it past that.
        ``resume_from``: a resourceVersion the sink's store already holds (a fork child's inherited
        copy): the run starts with a watch from it, not a LIST; the sink turns current at the
        watch's first progress (a 410 relists, as for any watch)."""
        self.name = name
        self._source = source
        self._sink = sink
        self._on_failure = on_failure
        self._tuning = tuning
        self._resync_period = resync_period or None
        self._stop = threading.Event()
        self._thread: RunnableThread | None = None
        self._backoff = tuning.backoff
        self._clock: Clock = tuning.clock or SYSTEM_CLOCK
        # Read by status(); written only by the reflector thread.
        self.last_rv: str | None = None
        self._watch_events = 0  # events the last watch delivered (progress, for the 410 backoff)
        self.relist_count = 0
        self.last_sync_time: float | None = None
        self._next_resync: float | None = None
        #: the informer's (it sets it again when its own changes): no backoff wait's jitter carries
        #: a retry past it, and every watch's window fits inside it (``watch_window``)
        self.max_staleness = max_staleness
        self._unhealthy_since: float | None = None  # as reported to the sink (clock time)
        #: clock time the thread's backoff wait ends (None: not waiting), for status()
        self.next_retry_at: float | None = None
        self._dropped_bookmarks = 0
        self._page_size = tuning.page_size  # 0: unpaginated, until a body is over max_list_bytes
        # Kept across lists. The standard library's parser takes no buffer per document: no sizing.
        page_bytes = tuning.page_bytes if _json.PARSE_BUFFER_FACTOR is not None else None
        self._page_sizer = PageSizer(tuning.page_size or _FALLBACK_PAGE_SIZE, page_bytes)
        # A source that splits a page into request, parse and structuring gets the next page
        # requested while this one is structured; any other (a test double) is listed serially.
        self._prefetch = PagePrefetch(name) if isinstance(source, PrefetchingListerWatcher) else None
        # An unpaginated LIST is decoded while it is read where the source can (the real ListWatch).
        self._streaming = source if isinstance(source, StreamingListerWatcher) else None
        self._list_continue: str | None = None  # the continue token of the LIST request in flight
        self._streaming_lists = tuning.streaming_lists  # until the server shows it lacks them
        self._resume_from = resume_from
        if resume_from is not None:
            self.last_rv = resume_from
            if self._resync_period:
                self._next_resync = self._clock.now() + self._resync_period

    # --------------------------------------------------------------- lifecycle
    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError(f"reflector {self.name} was already started")
        self._thread = RunnableThread(
            f"cloudcoil-reflector-{self.name}", self._run, owner=f"informer {self.name}", stopping=self._stop
        )
        self._thread.start()

    def stop(self) -> None:
        """Ask the thread to end and interrupt a blocked watch read (``join()`` waits)."""
        self._stop.set()
        self._source.interrupt()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)  # not when called from the thread itself

    @property
    def refused_events(self) -> int:
        """Objects and bookmarks refused so far: a kind or identity that does not match the watch
        (counted by the source), and bookmarks with an implausible resourceVersion."""
        return self._dropped_bookmarks + int(getattr(self._source, "refused", 0))

    def threads(self) -> list[threading.Thread]:
        """The reflector's thread, while it runs."""
        return [self._thread] if self._thread is not None and self._thread.is_alive() else []

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ------------------------------------------------------------------- loop
    def _run(self) -> None:
        step = Next.RELIST if self._resume_from is None else Next.WATCH  # the first list, or a resumed watch
        at_latest = resync = False  # how the next list lists; kept until a list succeeds
        expired_in_a_row = 0
        while not self._stop.is_set():
            listing = step.lists
            try:
                synced = None
                if listing:
                    # A successful list does not clear the error: the watch opened after it does
                    # (a list that works while every watch fails is stale), or a watch's progress.
                    if self._streaming_lists:
                        synced = self._watch_list(rv_unavailable=at_latest, resync=resync)
                    if synced is None:
                        self._list(rv_unavailable=at_latest, resync=resync)
                    at_latest = resync = False
                    listing = False
                if synced is not None:  # the streaming list's watch goes on
                    ended = Ended(resync_due=self._follow(synced))
                else:
                    ended = Ended(resync_due=self._watch(after_list=step.lists))
            except _Stopped:
                return
            except Exception as exc:  # the thread never dies: record, back off, retry
                if self._stop.is_set():
                    return
                ended = Ended(exc, in_list=listing, progressed=self._watch_events > 0)
                self._watch_events = 0  # a watch's progress counts once (not again for each list after it)
            step, expired_in_a_row = what_next(ended, expired_in_a_row)
            resync = resync or step is Next.RESYNC
            if ended.failure is None:
                continue
            at_latest = at_latest or _lists_at_latest(ended.failure)
            self._record_failure(ended.failure, step)
            if step.backs_off and self._wait_backoff(ended.failure):
                return

    def _record_failure(self, exc: BaseException, step: Next) -> None:
        """Report ``exc`` to the sink and log it as what ``step`` makes of it."""
        if _relists_at_once(exc):
            log.info("%s: %s; relisting", self.name, exc)
            self._report(exc)  # degraded while the relist runs (still serving)
        elif step is Next.BACKOFF_WATCH and isinstance(exc, (EmptyWatchError, StalledWatchError)):
            # Not an open socket but progress makes a watch healthy: one that delivered nothing
            # waits a backoff step (no hot loop) and the staleness clock runs on.
            self._report(exc, since=exc.since)
            log.info("%s: %s; re-watching after backoff", self.name, exc)
        elif step is Next.BACKOFF_WATCH:
            self._report(exc)
            log.info("%s: watch failed (%s); re-watching after backoff", self.name, exc)
        else:
            self._report(exc)
            _log_failure(self.name, exc)
        self._tell_failure(exc)

    def _tell_failure(self, exc: BaseException) -> None:
        """Call the watch error handler (no lock held); what it raises is logged, never fatal."""
        on_failure = self._on_failure
        if on_failure is None:
            return
        try:
            on_failure(exc)
        except BaseException:  # SystemExit too: it would end the reflector without a trace
            log.exception("%s: the watch error handler raised on %s; the reflector goes on", self.name, exc)

    def _report(self, exc: BaseException, since: float | None = None) -> None:
        """Tell the sink about a failure; ``since``: when the data was last known current."""
        if self._unhealthy_since is None:
            self._unhealthy_since = self._clock.now() if since is None else since
        if since is None:
            self._sink.error(exc)
        else:
            self._sink.error(exc, since=since)

    def _healthy(self) -> None:
        """The data is known current again (a watch opened after a list, or one that made progress)."""
        self._unhealthy_since = None
        self._sink.error(None)

    def _wait_backoff(self, exc: BaseException) -> bool:
        """Wait out the next backoff step (at least Retry-After); True if stopped meanwhile.

        The jitter never carries the wait past the moment the informer would turn stale
        (``max_staleness`` after it was last current): the retry comes before that, if the
        un-jittered step allows it. The end of the wait is ``next_retry_at`` meanwhile.
        """
        clock = self._clock
        now = clock.now()
        limit = None
        max_staleness = self.max_staleness
        if max_staleness is not None and self._unhealthy_since is not None:
            limit = self._unhealthy_since + max_staleness - now
        delay, self._backoff = self._backoff.next(now, self._tuning.rng, limit=limit)
        retry_after = retry_after_of(exc)
        if retry_after:  # honoured, but a server asking for an hour does not park us for an hour
            delay = max(delay, min(retry_after, MAX_RETRY_AFTER))
        self.next_retry_at = now + delay
        try:
            return clock.wait(self._stop, delay)
        finally:
            self.next_retry_at = None

    # ------------------------------------------------------------------- list
    def _list(self, *, rv_unavailable: bool, resync: bool) -> None:
        started_at = self._clock.now()
        rv = "" if rv_unavailable or self.last_rv is None else self.last_rv
        if rv and not resync:
            try:
                # From the last RV ("not older than"): one batch or page at a time is parsed, so a
                # relist neither holds the GIL for the whole collection in one C call nor holds a
                # second decoded copy of it as JSON (benchmarks/relist.py: 170 ms, +128 MB at 4,000
                # pods parsed whole). An RV that is gone (410) relists at the latest.
                items, list_rv = self._paginated_list(rv)
            except APIError as exc:
                if not (is_expired(exc) or is_too_large_resource_version(exc) or _is_invalid_rv(exc)):
                    raise
                # A 400/422 at a concrete RV: the RV itself is what the server refuses (a garbage
                # one from a bookmark or an object): start fresh, or every relist asks for it again.
                log.info("%s: relist at resourceVersion %s failed (%s); listing at the latest", self.name, rv, exc)
                items, list_rv = self._paginated_list()
        else:
            # The first list, and periodic resyncs: a consistent LIST, parsed a batch or page at a
            # time, so no single parse holds the GIL for the whole collection (a resync must not
            # pause the program).
            if resync:
                log.debug("%s: resync_period (%gs) passed; relisting", self.name, self._resync_period)
            items, list_rv = self._paginated_list()
        self._check_stop()
        self._replaced(items, list_rv, resync=resync, started_at=started_at)

    def _replaced(self, items: list[Any], list_rv: str, *, resync: bool, started_at: float) -> None:
        """Replace the sink's store with a whole list (a LIST's or a streaming list's) at ``list_rv``."""
        self._sink.replace(items, list_rv, resync=resync, started_at=started_at)
        del items
        if self._tuning.freeze_gc:
            _gc.freeze()
        self.last_rv = list_rv
        self.relist_count += 1
        self.last_sync_time = time.time()
        if self._resync_period:
            self._next_resync = self._clock.now() + self._resync_period

    def _paginated_list(self, resource_version: str = "") -> tuple[list[Any], str]:
        """A consistent LIST: unpaginated and streamed (``page_size=0``), or paginated. An expired
        continue token restarts it: never mix snapshots."""
        restarts = 0
        while True:
            self._list_continue = None
            try:
                if self._page_size and self._prefetch is not None:
                    return self._pipelined_list(resource_version, self._prefetch)
                return self._serial_list(resource_version)
            except BodyTooLarge:
                if self._page_size:
                    raise
                self._page_size = _FALLBACK_PAGE_SIZE
                log.warning(
                    "%s: an unpaginated LIST is over max_list_bytes (%s); listing in pages of %d from now on",
                    self.name,
                    self._tuning.max_list_bytes,
                    _FALLBACK_PAGE_SIZE,
                )
            except APIError as exc:
                if not (is_expired(exc) and self._list_continue is not None):
                    raise
                restarts += 1
                if restarts > self._tuning.max_list_restarts:
                    raise
                # at the latest: a relist at a concrete RV whose later page is gone (compacted) can
                # never succeed at that RV again
                resource_version = ""
                log.info("%s: continue token expired on a later page; restarting the list at the latest", self.name)

    def _serial_list(self, resource_version: str) -> tuple[list[Any], str]:
        """One LIST: unpaginated (decoded while it is read where the source can), or its pages one
        request after the other (a source that cannot prefetch)."""
        items: list[Any] = []
        page_size = self._page_size
        sizer = self._page_sizer
        limit = sizer.limit if page_size else 0
        pages = _Pages(limit, self._tuning.max_list_pages)
        continue_: str | None = None
        while True:
            self._check_stop()
            page: ListPage[Any]
            if not limit and continue_ is None and self._streaming is not None:
                page = self._streamed_page(resource_version, self._streaming)
            else:
                page = self._source.list_page(
                    resource_version=resource_version if continue_ is None else None,
                    limit=limit or None,
                    continue_=continue_,
                )
            if page_size:
                sizer.observe(len(page.items), getattr(page, "body_bytes", 0))
                limit = sizer.limit
            pages.check(page, limit)
            items.extend(page.items)
            self._freeze_page()
            if not page.continue_:
                return items, page.resource_version
            continue_ = self._list_continue = page.continue_

    def _streamed_page(self, resource_version: str, source: StreamingListerWatcher[Any]) -> ListPage[Any]:
        """An unpaginated LIST as one page, its items structured batch by batch as they arrive:
        neither the body nor all its parsed JSON is held at once, and no parse holds the GIL for
        the whole collection."""
        items: list[Any] = []
        batch_bytes = self._page_sizer.batch_bytes
        if self._tuning.max_list_bytes is not None:  # a batch must fit well within the bound on unparsed bytes
            batch_bytes = max(1, min(batch_bytes, self._tuning.max_list_bytes // 2))
        batches = source.stream_list(resource_version=resource_version, batch_bytes=batch_bytes)
        try:
            while True:
                with _gc.paused():  # parsing + structuring a batch: see _gc for the numbers
                    parsed = next(batches, None)
                    if parsed is None:
                        break
                    page = source.structure_page(parsed)
                    del parsed
                items.extend(page.items)
                self._freeze_page()
                self._check_stop()
        finally:
            batches.close()
        return ListPage(items, page.resource_version, page.continue_, page.remaining_item_count, page.body_bytes)

    def _pipelined_list(self, resource_version: str, prefetch: PagePrefetch) -> tuple[list[Any], str]:
        """The pages of one paginated LIST, each next one requested (on ``prefetch``'s thread) as
        soon as this one is parsed, while this thread structures it: the server produces a page
        while the client decodes the one before. Errors surface where the serial loop raises
        them: a failed request when its page is due, a paging check once the page is structured."""
        source = cast("PrefetchingListerWatcher[Any]", self._source)
        limit = self._page_sizer.limit
        pages = _Pages(limit, self._tuning.max_list_pages)
        items: list[Any] = []
        self._check_stop()
        raw = source.fetch_page(resource_version=resource_version, limit=limit, continue_=None)
        try:
            while True:
                with _gc.paused():  # parsing + structuring a page: see _gc for the numbers
                    parsed = source.parse_page(raw)
                    del raw
                    failure = self._request_next(parsed, pages, prefetch, source)
                    page = source.structure_page(parsed)
                    del parsed
                if failure is not None:
                    raise failure
                items.extend(page.items)
                self._freeze_page()
                if not page.continue_:
                    return items, page.resource_version
                self._list_continue = page.continue_
                del page
                self._check_stop()
                raw = prefetch.result()
        finally:
            prefetch.cancel()

    def _request_next(
        self, parsed: ParsedPage, pages: _Pages, prefetch: PagePrefetch, source: PrefetchingListerWatcher[Any]
    ) -> ListPagingError | None:
        """Size and check the next page from this one, and request it on ``prefetch``; the paging
        check's failure is returned (raised once this page is structured, as in the serial loop)."""
        sizer = self._page_sizer
        sizer.observe(parsed.count, parsed.body_bytes)
        limit = sizer.limit
        try:
            pages.check(parsed, limit)
        except ListPagingError as exc:
            return exc
        continue_ = parsed.continue_
        if continue_ and not self._stop.is_set():
            prefetch.start(lambda: source.fetch_page(resource_version=None, limit=limit, continue_=continue_))
        return None

    def _freeze_page(self) -> None:
        if self._tuning.freeze_gc:
            # Each page is decoded with collection paused (ListWatch); freezing it now keeps later
            # collections from walking every page decoded so far (a stop-the-world pause of
            # 0.1-0.3 s per pass at 10k pods).
            _gc.freeze()

    # ------------------------------------------------------------------ watch
    def _watch(self, *, after_list: bool = False) -> bool:
        """Watch from the last RV until the stream ends. Returns True when a resync relist is due.

        A clean end, a dropped connection and a truncated line end the watch: the caller
        re-watches from the last fully applied RV, without a relist. Health is progress, not an
        open socket: the informer is current again when the watch opens right after a list (the
        list is fresh), at its first event or bookmark that moves the RV, or at a bookmark that
        confirms the RV once the watch has been open ``min_watch_duration`` (a quiet resource).
        A watch that ends within ``min_watch_duration`` without moving the RV raises
        ``VeryShortWatchError`` if it sent nothing (backoff, relist), ``EmptyWatchError`` if it
        sent bookmarks confirming the RV (backoff, re-watch); one without a complete line within
        the read timeout ``StalledWatchError``. Progress resets the backoff. A bookmark whose RV
        is not a number where the RVs so far were numbers is dropped (a garbage RV would poison
        every relist).
        """
        assert self.last_rv is not None
        self._watch_events = 0  # events and bookmarks that moved the RV (reset before opening)
        stream, seconds, started = self._open_watch(after_list)
        return self._follow(_Opened(stream, iter(stream), seconds, started, healthy=after_list))

    def _follow(self, opened: _Opened) -> bool:
        """Read an open watch until it ends and judge it (see ``_watch``)."""
        clock = self._clock
        stream, seconds, started = opened.stream, opened.seconds, opened.started
        events = opened.events  # events and bookmarks that moved the RV
        lines = opened.lines  # every event and bookmark
        healthy = opened.healthy  # told the sink so during this watch
        alive = False  # a bookmark confirmed the RV after min_watch_duration
        stalled: ReadTimeout | None = None
        progress_at = started  # the last event or bookmark that moved the RV
        freeze_gc = self._tuning.freeze_gc
        min_duration = self._tuning.min_watch_duration
        try:
            self._check_stop()
            for event in opened.events_iter:
                lines += 1
                if event.type == "BOOKMARK":
                    rv = event.resource_version
                    if rv == self.last_rv:  # confirms the RV: alive, no progress
                        if not alive and clock.now() - started >= min_duration:
                            alive = True
                            if not healthy:
                                self._healthy()
                                healthy = True
                        continue
                    if not _plausible_rv(rv, self.last_rv):
                        self._drop_bookmark(rv)
                        continue
                    self._sink.bookmark(rv)
                else:
                    self._sink.apply(event)
                    if freeze_gc:
                        _gc.note_events()
                self.last_rv = event.resource_version
                progress_at = clock.now()
                if not events and not healthy:  # the first progress of this watch
                    self._healthy()
                    healthy = True
                events += 1
                if self._stop.is_set():
                    break
        except TransportError as exc:
            stalled = self._stream_broke(exc)
        finally:
            self._watch_events = events
            stream.close()
        self._check_stop()
        return self._judge_watch(
            started=started,
            seconds=seconds,
            lines=lines,
            events=events,
            healthy=healthy,
            stalled=stalled,
            progress_at=progress_at,
        )

    def _watch_list(self, *, rv_unavailable: bool, resync: bool) -> _Opened | None:
        """A streaming list (``Tuning.streaming_lists``): one WATCH with ``sendInitialEvents=true``
        whose initial events fill a temporary set until the bookmark annotated
        ``k8s.io/initial-events-end``; then the store is replaced at once, as after a LIST, and the
        open watch is returned to be followed. None: the server does not serve streaming lists (a
        400/422, or a watch that ended without that bookmark): this informer LISTs from now on.
        """
        clock = self._clock
        started_at = clock.now()
        rv = "" if rv_unavailable or resync or self.last_rv is None else self.last_rv
        window = watch_window(self._tuning, self.max_staleness)
        seconds = window.draw(self._tuning.rng())
        if self._resync_period:  # the watch goes on after the sync: end it when the next resync is due
            seconds = max(1, min(seconds, math.ceil(self._resync_period)))
        if resync:
            log.debug("%s: resync_period (%gs) passed; relisting (streaming)", self.name, self._resync_period)
        self._check_stop()
        try:
            stream = self._source.watch(
                resource_version=rv,
                timeout_seconds=seconds,
                read_timeout=seconds + window.grace,
                line_timeout=window.grace,
                send_initial_events=True,
            )
        except APIError as exc:
            if exc.code not in (400, 422):
                raise
            return self._no_streaming_lists(f"the server refused it: {exc}")
        events_iter = iter(stream)
        initial: dict[Any, Any] = {}
        try:
            try:
                end_rv, lines = self._initial_events(events_iter, initial)
            except APIError as exc:
                if exc.code not in (400, 422) or initial:
                    raise
                stream.close()
                return self._no_streaming_lists(f"the server refused it: {exc}")
            self._check_stop()
            if end_rv is None:
                stream.close()
                return self._no_streaming_lists(
                    f"the watch ended, or sent a plain bookmark, after {lines} lines without the "
                    "initial-events-end bookmark"
                )
            items = list(initial.values())
            initial.clear()
            self._replaced(items, end_rv, resync=resync, started_at=started_at)
            del items
        except BaseException:
            stream.close()
            raise
        self._healthy()  # the list is fresh and its watch goes on
        return _Opened(stream, events_iter, seconds, clock.now(), healthy=True, events=1, lines=lines)

    def _initial_events(
        self, events_iter: Iterator[WatchEvent[Any]], initial: dict[Any, Any]
    ) -> tuple[str | None, int]:
        """Read a streaming list's initial events into ``initial`` (by namespace and name) until the
        initial-events-end bookmark: its resourceVersion (None: the watch ended first), and the lines read."""
        lines = 0
        for event in events_iter:
            lines += 1
            if event.type == "BOOKMARK":
                if not event.initial_events_end:
                    # a server that serves streaming lists sends no other bookmark before that one:
                    # this one ignores sendInitialEvents (a plain watch: the end never comes)
                    return None, lines
                if not _plausible_rv(event.resource_version, None):
                    raise ProtocolError(
                        f"a streaming list ended at an implausible resourceVersion {event.resource_version[:64]!r}"
                    )
                return event.resource_version, lines
            if event.type == "DELETED":
                initial.pop(_identity(event.object), None)
            else:
                initial[_identity(event.object)] = event.object
            if self._tuning.freeze_gc:
                _gc.note_events()
            self._check_stop()
        return None, lines

    def _no_streaming_lists(self, why: str) -> _Opened | None:
        """The server does not serve streaming lists: LIST+WATCH for good (no error, logged once); None."""
        self._streaming_lists = False
        log.info("%s: streaming lists unavailable (%s); using LIST+WATCH from now on", self.name, why)
        return None

    def _open_watch(self, after_list: bool) -> tuple[WatchStream[Any], int, float]:
        """Open the watch from the last RV: the stream, its ``timeoutSeconds`` and when it opened."""
        assert self.last_rv is not None
        clock = self._clock
        window = watch_window(self._tuning, self.max_staleness)
        seconds = window.draw(self._tuning.rng())
        if self._next_resync is not None:  # end the watch when the resync is due (rounded up: once)
            seconds = max(1, min(seconds, math.ceil(self._next_resync - clock.now())))
        started = clock.now()
        # A quiet resource's watch sends nothing until the server ends it at ``seconds`` (kube-apiserver
        # sends no bookmark while the RV does not move): silence is a stall past that deadline plus
        # the grace, which the window keeps inside max_staleness. A line that starts must complete
        # within the read timeout (or the grace, if shorter).
        stream = self._source.watch(
            resource_version=self.last_rv,
            timeout_seconds=seconds,
            read_timeout=seconds + window.grace,
            line_timeout=window.grace,
        )
        if after_list:  # the list is fresh and the watch continues from it
            self._healthy()
        return stream, seconds, started

    def _stream_broke(self, exc: TransportError) -> ReadTimeout | None:
        """Judge a transport failure of the watch stream: the stall to report (``ReadTimeout``), None
        for a stream that ended (a dropped connection, a truncated line: re-watch), or raise ``exc``.
        """
        self._check_stop()
        if isinstance(exc, ReadTimeout):
            return exc
        if isinstance(exc, ProtocolError) and not isinstance(exc, LineTooLong):
            log.debug("%s: watch stream ended (%s); re-watching from %s", self.name, exc, self.last_rv)
            return None
        # LineTooLong, a failed connect: not the stream ending but an error (logged, in status,
        # backoff and relist)
        raise exc

    def _judge_watch(
        self,
        *,
        started: float,
        seconds: int,
        lines: int,
        events: int,
        healthy: bool,
        stalled: ReadTimeout | None,
        progress_at: float,
    ) -> bool:
        """The end-of-watch judgement (see ``_watch``): True when a resync relist is due."""
        now = self._clock.now()
        if self._next_resync is not None and now >= self._next_resync:
            return True
        if stalled is not None:
            grace = watch_window(self._tuning, self.max_staleness).grace
            raise StalledWatchError(
                f"stalled watch: a line not complete within {grace:g}s, or silent past "
                f"{grace:g}s after the watch's own timeoutSeconds ({seconds}s): {stalled}",
                since=progress_at,
            )
        if events or now - started >= self._tuning.min_watch_duration:
            # Ended by the server after progress, or after living long enough (a quiet resource):
            # current, and a later failure starts its backoff over (not a watch that delivered and
            # then failed: a server that flaps after every event must not get a relist per event).
            if not lines and now - started >= seconds - 1:
                # ended by the server on time, silent for its whole life: is the server where we are?
                self._check_not_rewound()
            self._backoff = self._tuning.backoff
            if not healthy:
                self._healthy()
            return False
        if not lines:
            raise VeryShortWatchError(f"very short watch: the watch ended after {now - started:.3f}s without an event")
        raise EmptyWatchError(
            f"empty watch: the watch ended after {now - started:.3f}s without an event or a bookmark "
            f"that moved the resourceVersion ({lines} bookmarks only confirmed it)",
            since=started,
        )

    def _check_not_rewound(self) -> None:
        """After a watch that the server ended without sending one line: ask where the server is (a
        LIST of one object, ``limit=1``) and raise ``RewoundResourceVersionError`` if it is behind
        this informer's resourceVersion. kube-apiserver accepts a watch from a resourceVersion it has
        not reached (after an etcd restore rewound it) and sends nothing, not even a bookmark, until
        it gets there, ending each such watch on time: without this the informer would count that
        silence as health for as long as the server takes to catch up, and lose every change in
        between. A quiet watch on a live cluster ends with a bookmark (the cluster's resourceVersion
        moves), so this costs a request only where a watch carried nothing at all."""
        rv = self.last_rv
        if rv is None or not (rv.isascii() and rv.isdigit()):
            return  # opaque resourceVersions (an extension API server) cannot be compared
        page = self._source.list_page(resource_version="", limit=1, continue_=None)
        server_rv = page.resource_version
        if server_rv.isascii() and server_rv.isdigit() and int(server_rv) < int(rv):
            raise RewoundResourceVersionError(
                f"the server's resourceVersion {server_rv} is behind this informer's {rv} (was etcd "
                f"restored?): a watch from {rv} stays silent until the server gets there"
            )

    def _drop_bookmark(self, rv: str) -> None:
        self._dropped_bookmarks += 1
        level = logging.WARNING if self._dropped_bookmarks <= 5 else logging.DEBUG
        log.log(
            level,
            "%s: a BOOKMARK carries resourceVersion %r, not a number like %r: dropped (%d so far)",
            self.name,
            rv[:64],
            self.last_rv,
            self._dropped_bookmarks,
        )

    def _check_stop(self) -> None:
        if self._stop.is_set():
            raise _Stopped()


@attrs.define
class _Opened:
    """A watch open and being read: the stream, its iterator, its ``timeoutSeconds``, when it
    opened, and what was read of it so far (a streaming list's initial events)."""

    stream: WatchStream[Any]
    events_iter: Iterator[WatchEvent[Any]]
    seconds: int
    started: float
    healthy: bool = False
    events: int = 0
    lines: int = 0


def _identity(obj: Any) -> Any:
    """An object's (namespace, name), for a streaming list's temporary set."""
    meta = obj.get("metadata") if isinstance(obj, dict) else getattr(obj, "metadata", None)
    if meta is None:
        return id(obj)
    if isinstance(meta, dict):
        return (meta.get("namespace"), meta.get("name"))
    return (getattr(meta, "namespace", None), getattr(meta, "name", None))


def _plausible_rv(rv: str, last: str | None) -> bool:
    """An RV to move to: any non-empty one, but a number where the last one was a number.

    Kubernetes' resourceVersions are decimal numbers (etcd revisions); an extension API server may
    use other opaque strings, and then they are not judged.
    """
    if not rv or len(rv) > 1024:
        return False
    if last is not None and last.isascii() and last.isdigit():
        return rv.isascii() and rv.isdigit() and rv != "0"  # "0" means "any", never a revision
    return rv != "0"


def _relists_at_once(exc: BaseException) -> bool:
    """A 410, a too-large resourceVersion or a rewound server: the informer's resourceVersion is of
    no use any more; relist (at once the first time in a row)."""
    return is_expired(exc) or _lists_at_latest(exc)


def _lists_at_latest(exc: BaseException) -> bool:
    """The next list must not ask for the informer's resourceVersion: the server is behind it."""
    return is_too_large_resource_version(exc) or isinstance(exc, RewoundResourceVersionError)


def _is_invalid_rv(exc: BaseException) -> bool:
    """A 400/422 to a LIST at a concrete RV (the RV is what the server refuses)."""
    return isinstance(exc, APIError) and exc.code in (400, 422)


class _Pages:
    """Bounds the pages of one paginated LIST (see ``ListPagingError``)."""

    def __init__(self, limit: int, max_pages: int) -> None:
        self._limit = max(1, limit)
        self._max_pages = max_pages
        self._count = 0
        self._budget: int | None = None  # the most pages remainingItemCount allows (+1: short pages)
        self._tokens: set[str] = set()

    def check(self, page: ListPage[Any] | ParsedPage, next_limit: int) -> None:
        """``next_limit``: the ``limit`` the next page asks for (a smaller one allows more pages)."""
        self._count += 1
        next_limit = max(1, next_limit)
        if next_limit != self._limit:  # the pages the budget leaves, at the new size
            if self._budget is not None:
                left = max(0, self._budget - self._count)
                # the objects left fill ceil(left * old / new) pages; the spare page (a short one)
                # stays a whole page when the limit grows
                full = -(-left * self._limit // next_limit)
                spare = -(-(left - 1) * self._limit // next_limit) + 1 if left else 0
                self._budget = self._count + max(full, spare)
            self._limit = next_limit
        token = page.continue_
        if not token:
            return
        if token in self._tokens:
            raise ListPagingError(
                f"paginated LIST: the server sent the same continue token again after "
                f"{self._count} pages: the list never ends"
            )
        self._tokens.add(token)
        remaining = getattr(page, "remaining_item_count", None)
        if remaining is not None:
            allowed = self._count + -(-remaining // self._limit) + 1
            self._budget = allowed if self._budget is None else min(self._budget, allowed)
        if self._budget is not None and self._count >= self._budget:
            raise ListPagingError(
                f"paginated LIST: {self._count} pages and still a continue token, more "
                f"than the server's remainingItemCount allows (at most {self._budget} "
                f"pages of {self._limit})"
            )
        if self._count >= self._max_pages:
            raise ListPagingError(
                f"paginated LIST: {self._count} pages and still a continue token: over "
                f"the limit of {self._max_pages} pages (Tuning.max_list_pages)"
            )


def _is_watch_retriable(exc: BaseException) -> bool:
    """Connection refused or 429 when opening a watch: back off and re-watch, no relist (client-go)."""
    return isinstance(exc, (ConnectError, TooManyRequests))


def _log_failure(name: str, exc: BaseException) -> None:
    if is_hard_failure(exc):
        log.error("%s: %s (retrying with backoff; check credentials/RBAC/resource)", name, exc)
    else:
        log.warning("%s: list/watch failed: %s", name, exc)
