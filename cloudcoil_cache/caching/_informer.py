"""Informer: one reflector + one store + its handler lanes, for one (kind, namespace, selectors)."""

from __future__ import annotations

import contextvars
import copy
import logging
import threading
import weakref
from typing import Any, Callable, Generic, TypeVar

import attrs

from cloudcoil_cache import _fork
from cloudcoil_cache._clock import SYSTEM_CLOCK, Clock
from cloudcoil_cache._listwatch import WatchEvent
from cloudcoil_cache._listwatch._listwatch import ListerWatcher
from cloudcoil_cache.caching._dispatch import Lane, Lanes, Registration
from cloudcoil_cache.caching._metadata import SharedValues, metadata_of
from cloudcoil_cache.caching._policy import InformerState, Verdict, informer_state, serving_verdict
from cloudcoil_cache.caching._reflector import Reflector, Tuning
from cloudcoil_cache.caching._store import Added, Store, Writer, drain
from cloudcoil_cache.caching._transform import raw_step, transformed
from cloudcoil_cache.caching._writes import WriteTracker
from cloudcoil_cache.errors import InheritedAcrossFork, is_hard_failure
from cloudcoil_cache.models._reuse import reusing

__all__ = ["Decoder", "DecodingSource", "Informer", "InformerKey", "InformerStatus"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: A function applied to every object before it is stored (``Cache(transform=...)``).
Transform = Callable[[Any], Any]

#: How a source decodes one object's JSON (list items and watch events): ``Informer.structure_function()``.
Decoder = Callable[[dict[str, Any]], T]


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
        what: str = self.cls.kind  # type: ignore[attr-defined]
        if getattr(self.cls, "metadata_of", None) is not None:  # PartialObjectMetadata.of(kind)
            what += " metadata"
        return f"{what} in {scope}" + (f" [{sel}]" if sel else "")


@attrs.frozen
class DecodingSource(Generic[T]):
    """A source factory that decodes with the informer's own decoder: the informer calls
    ``build(key, decoder)`` at each start (the Cache's ``ListWatch``). A plain
    ``source_factory(key)`` suits a source that decodes nothing (a test double)."""

    build: Callable[[InformerKey, Decoder[T]], ListerWatcher[T]]


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
    state: InformerState
    seconds_since_current: float | None
    object_count: int
    resource_version: str | None
    last_sync_time: float | None
    relist_count: int
    evictions: int
    complete: bool
    last_error: str | None
    handler_backlogs: dict[str, int]
    #: objects and bookmarks refused so far (a kind or identity not matching the watch, a bookmark
    #: with a resourceVersion that is not a number): never stored
    refused_events: int = 0
    #: seconds until the reflector retries after a failure (None: it is not waiting)
    next_retry_in: float | None = None


class Informer(Generic[T]):
    """Keeps a store of one kind in one scope in step with the API server and feeds handler lanes.

    Thread safety: all methods may be called from any thread. ``_deliver_lock`` orders "apply to the
    store and queue the notifications" (reflector thread) against "register a handler and replay the
    store to it" (any thread), like client-go's ``blockDeltas``: a late handler sees every object
    exactly once, either in its replay or as a live event. Queuing never calls user code, so
    holding it is cheap. It is never taken while the store lock is held. ``_state`` (a Condition)
    guards the run and health fields. Read-your-writes is its ``writes`` (a ``WriteTracker``).
    """

    def __init__(
        self,
        key: InformerKey,
        source_factory: Callable[[InformerKey], ListerWatcher[T]] | DecodingSource[T],
        *,
        capacity: int = 0,
        resync_period: float | None = None,
        tuning: Tuning = Tuning(),
        on_change: Callable[[], None] | None = None,
        max_staleness: float | None = 60.0,
        transform: Transform | None = None,
        handler_context: Callable[[], contextvars.Context] | None = None,
    ) -> None:
        self.key = key
        self._on_change = on_change or (lambda: None)  # sync state or error changed (never under a lock)
        self._writer: Writer[T] = Writer(capacity)
        self.store: Store[T] = self._writer.reader  # readers never get replace/apply
        self._source_factory = source_factory
        self._reflector_finalizer: weakref.finalize[Any, Any] | None = None
        self._resync_period = resync_period or None
        self._tuning = tuning
        self._clock: Clock = tuning.clock or SYSTEM_CLOCK
        self._max_staleness = max_staleness
        self._transform = transform
        self._deliver_lock = threading.Lock()
        # every view's handler lane, started in the handlers' own context (their Config's scope)
        self._lanes = Lanes(handler_context)
        self._reflector: Reflector | None = None
        self._state = threading.Condition(threading.Lock())  # guards the fields below
        self._synced = False
        self._last_error: BaseException | None = None
        self._unhealthy_since: float | None = None  # clock time it stopped being current
        self._started = False
        self._generation = 0  # of the current run; see start()
        #: Whether it serves reads now (``_policy.serving_verdict`` of the fields above), rebuilt under
        #: ``_state`` by ``_judge_locked()`` at each change of them: a cached get reads it instead of
        #: gathering the facts (``caching._reader.CacheReader.hit``). Read without the lock: one attribute.
        self.serving: Verdict = None
        #: called as ``handler(informer name, error)`` at each failure of the reflector's list or
        #: watch, on its thread, no lock held (client-go's ``SetWatchErrorHandler``); None: only logged
        self.watch_error_handler: Callable[[str, BaseException], None] | None = None
        self.writes = WriteTracker(key, self.store, self._clock)
        self.name = _informer_name(key)
        #: set in a fork child (``_after_fork_in_child``) until its run resumes here: the
        #: resourceVersion to watch from (None: the copy is torn or was never synced: list)
        self._inherited: _Inherited | None = None
        _fork.on_fork(self._after_fork_in_child)

    # -------------------------------------------------------------- lifecycle
    def start(self) -> None:
        """Start a run: a new reflector and the handler lanes (idempotent while running).

        Each run has a generation; the sink methods ignore a reflector of an older run, so a run
        that is still winding down can never write into the store of the next one. Publishing the
        reflector happens under ``_state``, so a concurrent ``signal_stop()`` always sees it.
        """
        with self._deliver_lock:
            with self._state:
                if self._started:
                    return
                self._started = True
                self._synced = False
                self._last_error = None
                self._unhealthy_since = None
                self._judge_locked()
                self._generation += 1
                generation = self._generation
                self._inherited = None  # a stop and start in a fork child lists afresh too
                self._writer.clear()  # a new run lists from scratch: every object is an add again
                self._start_run_locked(generation, None)

    def _start_run_locked(self, generation: int, resume_from: str | None) -> None:
        """Start run ``generation``'s threads: the handler lanes and a reflector (listing first, or
        watching from ``resume_from``). Called with both locks held."""
        self.writes.start()
        self._lanes.start()
        factory = self._source_factory
        source = (
            factory.build(self.key, self.structure_function())
            if isinstance(factory, DecodingSource)
            else factory(self.key)
        )
        sink = _RunSink(weakref.ref(self), generation)
        reflector = Reflector(
            self.name,
            source,
            sink,
            tuning=self._tuning,
            resync_period=self._resync_period,
            max_staleness=self.max_staleness,
            resume_from=resume_from,
            on_failure=sink.failed,
        )
        self._reflector = reflector
        # an informer dropped while started (its Cache and Config gone without a stop) takes
        # its reflector thread with it: it must not list and watch for no one
        if self._reflector_finalizer is not None:
            self._reflector_finalizer.detach()  # the last run's reflector was stopped
        self._reflector_finalizer = weakref.finalize(self, reflector.stop)
        reflector.start()

    # ------------------------------------------------------------------ fork
    def _after_fork_in_child(self) -> None:
        """In a fork child (``_fork``; one thread, no I/O): new locks; the parent's reflector, its
        socket and the lanes' threads abandoned, never stopped or closed (they are the parent's
        too); a started informer keeps its objects and says it is not current until its run
        resumes here (``resume_after_fork``), serving them as a degraded informer does meanwhile."""
        torn = not self._writer.after_fork()
        self._deliver_lock = threading.Lock()
        self._state = threading.Condition(threading.Lock())
        if self._reflector is not None:
            _fork.abandon(self._reflector)
            self._reflector = None
        if self._reflector_finalizer is not None:
            self._reflector_finalizer.detach()  # it would stop the abandoned reflector at exit
            self._reflector_finalizer = None
        self.writes.after_fork()
        self._lanes.after_fork()
        self._generation += 1  # whatever the abandoned run still holds is of another run
        if not self._started:
            return
        resume = self.store.resource_version if self._synced and not torn else None
        self._inherited = _Inherited(resume)
        if resume is None:
            self._synced = False  # a torn copy is not served: the child lists
        self._last_error = InheritedAcrossFork(
            f"inherited across fork from pid {_fork.parent_pid}; the watch is not resumed in pid {_fork.pid} "
            "yet (at the next use of the cache, or cloudcoil_cache.after_fork())"
        )
        if self._unhealthy_since is None:  # current at the fork: the copy ages from now
            self._unhealthy_since = self._clock.now()
        self._judge_locked()

    def resume_after_fork(self) -> bool:
        """Start this process's run of an informer inherited across fork, once: a watch from the
        inherited resourceVersion (no LIST; a 410 relists), or a LIST if the copy was torn or never
        synced. True if it started one."""
        with self._deliver_lock:
            with self._state:
                inherited, self._inherited = self._inherited, None
                if inherited is None or not self._started:
                    return False
                rv = inherited.resource_version
                if rv is None:
                    self._writer.clear()
                if isinstance(self._last_error, InheritedAcrossFork):
                    self._last_error = InheritedAcrossFork(
                        f"inherited across fork from pid {_fork.parent_pid}; "
                        + (
                            f"watching again from resourceVersion {rv} in pid {_fork.pid} "
                            "(current at its first progress)"
                            if rv is not None
                            else f"the copy was torn or never synced: listing again in pid {_fork.pid}"
                        )
                    )
                self._judge_locked()
                self._start_run_locked(self._generation, rv)
        return True

    @property
    def inherited(self) -> bool:
        """Copied into this process by ``fork()`` and not resumed here yet."""
        return self._inherited is not None

    def stop(self, timeout: float | None = None) -> None:
        """Stop and join every thread of the current run; forget the objects."""
        self.join(self.signal_stop(), timeout)

    def signal_stop(self) -> _StoppedRun | None:
        """First half of ``stop()``: ask the run's threads to end, without waiting for them.

        Returns what ``join()`` must wait for (None if not running), so that stopping many
        informers costs one wait, and a join never waits for threads of a later run.
        """
        with self._deliver_lock:
            with self._state:
                if not self._started:
                    return None
                self._started = False
                self._synced = False
                self._judge_locked()
                self._state.notify_all()
                # The stopping reflector's sink now carries a stale generation: whatever it still
                # delivers is ignored, so no event of this run reaches a handler of the next one.
                self._generation += 1
                generation = self._generation
                reflector = self._reflector
            joins = self._lanes.stop()
        if reflector is not None:
            reflector.stop()
        self.writes.stop()
        return _StoppedRun(generation, reflector, joins)

    def join(self, run: _StoppedRun | None, timeout: float | None = None) -> bool:
        """Second half of ``stop()``: wait for that run's threads, then forget its objects.

        With a ``timeout`` (seconds, for all threads together), returns False if a thread was
        still running then (it is a daemon thread and ends by itself; it is logged).
        """
        if run is None:
            return True
        deadline = None if timeout is None else SYSTEM_CLOCK.now() + timeout  # threads: real time
        done = True
        if run.reflector is not None:
            run.reflector.join(_remaining(deadline))
            if run.reflector.alive:
                done = False
                log.warning("%s: the reflector thread did not end within %ss", self.name, timeout)
        for join in run.joins:
            join(_remaining(deadline))
        with self._deliver_lock:
            if not self._started and self._generation == run.generation:  # not restarted meanwhile
                self._writer.clear()
        return done

    @property
    def started(self) -> bool:
        return self._started

    def threads(self) -> list[threading.Thread]:
        """The threads of the current run (its reflector, its handler lanes)."""
        reflector = self._reflector
        return (reflector.threads() if reflector is not None else []) + self._lanes.threads()

    @property
    def max_staleness(self) -> float | None:
        """Seconds a degraded informer keeps serving (None: for good; 0: not at all)."""
        return self._max_staleness

    @max_staleness.setter
    def max_staleness(self, value: float | None) -> None:
        with self._state:
            self._max_staleness = value
            self._judge_locked()
            if self._reflector is not None:  # its next watch fits the new bound
                self._reflector.max_staleness = value

    @property
    def clock(self) -> Clock:
        """The clock its staleness is counted on."""
        return self._clock

    def _judge_locked(self) -> None:
        """Rebuild ``serving`` from the state fields (called wherever one of them changes)."""
        self.serving = serving_verdict(
            started=self._started,
            synced=self._synced,
            last_error=self._last_error,
            unhealthy_since=self._unhealthy_since,
            max_staleness=self._max_staleness,
        )

    # ------------------------------------------------------------------- sync
    def has_synced(self) -> bool:
        return self._synced

    @property
    def last_error(self) -> BaseException | None:
        return self._last_error

    @property
    def resource_version(self) -> str | None:
        return self.store.resource_version

    @property
    def complete(self) -> bool:
        return self.store.complete

    def incomplete_reason(self) -> str:
        return f"informer incomplete: {self.key.describe()} evicted {self.store.evictions} objects (max_items)"

    def state(self, now: float | None = None) -> tuple[InformerState, float | None]:
        """``(state, seconds since last current)`` at ``now`` (the informer's clock); see ``informer_state``."""
        err, since = self._last_error, self._unhealthy_since
        if err is None and since is None and self._synced and self._started:
            return InformerState.CURRENT, 0.0  # the common case: no clock read, no lock
        with self._state:
            started, synced, err, since = self._started, self._synced, self._last_error, self._unhealthy_since
        return informer_state(
            started=started,
            synced=synced,
            last_error=err,
            unhealthy_since=since,
            max_staleness=self._max_staleness,
            now=self._clock.now() if now is None else now,
        )

    def wait_for_sync(self, timeout: float | None = None, *, fail_fast: bool = True) -> bool:
        """Wait until the first list is in the store. True when synced, False on timeout.

        With ``fail_fast``, a hard failure (401/403/404) is raised at once instead of waiting.
        """
        deadline = None if timeout is None else SYSTEM_CLOCK.now() + timeout
        with self._state:
            while not self._synced:
                if fail_fast and self._last_error is not None and is_hard_failure(self._last_error):
                    # A copy: raising the stored error itself would grow its traceback with every
                    # waiter (and keep their frames alive).
                    raise copy.copy(self._last_error) from None
                if not self._started:
                    return False
                remaining = _remaining(deadline)
                if remaining is not None and remaining <= 0:
                    return False
                self._state.wait(remaining)
            return True

    # --------------------------------------------------------------- handlers
    def register(self, lane: Lane, *registrations: Registration, replay: bool = True) -> None:
        """Add handlers to a view's lane in one step (no event can fall between them); if objects
        are already cached (and ``replay``), replay them to each as adds."""
        with self._deliver_lock:
            if self._lanes.add(lane) and self._started:
                self._lanes.start(lane)
            for registration in registrations:
                lane.add(registration)
            if replay and self._synced:
                cached = self.store.list()
                for registration in registrations:
                    if registration.event == "add":
                        lane.enqueue([Added(obj, initial=True) for obj in cached], only=registration)
            lane.replayed(registrations, self._synced)  # their has_synced: after the replay, or the first list

    def unregister(self, lane: Lane, registration: Registration, timeout: float | None = None) -> bool:
        """Stop delivering to one handler; a lane left without handlers is stopped and joined (up
        to ``timeout``: False when its thread was still in a handler call then)."""
        join = None
        with self._deliver_lock:
            if lane.remove(registration):
                join = self._lanes.drop(lane)
        return join is None or join(timeout)

    def forget_handlers(self) -> None:
        """Drop every handler (the owning Config was closed; only while stopped).

        A handler often closes over the Config or the view it was registered on: a reference
        cycle through this informer that, once ``_gc.freeze()`` moved it into the permanent
        generation, the collector would never free. Dropped here, reference counting frees it.
        """
        with self._deliver_lock:
            if self._started:
                return
            self._lanes.forget()

    def handler_backlogs(self) -> dict[str, int]:
        with self._deliver_lock:
            return self._lanes.backlogs()

    def structure_function(self) -> Callable[[dict[str, Any]], T]:
        """How this informer's source should decode an object's JSON (list items and watch events).

        Like ``cls.from_dict_sealed``, plus: the transform's work done on the JSON when it is a
        shipped one (``strip_managed_fields``), and the top-level values the stored version of the
        object already has with the same JSON shared instead of decoded again (``models._reuse``).
        Objects of a run's first list get the fingerprints of their spec and status too (~3-5% of
        structuring a pod, and they spare its first update most of its decoding), not those of
        their managedFields entries (as much again, for less): those are shared from an object's
        second update on. Runs on the reflector thread (which also sets ``_synced``), before the
        object is applied.

        Without a transform, JSON with the stored version's uid and resourceVersion, and the JSON of
        each of its other top-level values the stored version was decoded from (their fingerprints
        match), is that stored object: a periodic resync or a relist does not build again what did
        not change. The fingerprints still catch what is served differently under one
        resourceVersion (a CRD's new defaults, a conversion webhook, an upgraded API server), so a
        resync still repairs that. A transform's result is stored, and the transform runs on every
        listed object, so with one every object is decoded.
        """
        reuse = reusing(self.key.cls)
        prepare = raw_step(self._transform)
        same_is_stored = self._transform is None
        peek = self._writer.peek
        this = weakref.ref(self)  # held by the source, held by the reflector: no cycle back to us
        # PartialObjectMetadata.of(kind): what ``_metadata.metadata_of`` keeps of the JSON
        only_metadata = getattr(self.key.cls, "metadata_of", None) is not None
        share = SharedValues().share if only_metadata else None

        def structure(raw: dict[str, Any]) -> T:
            meta = raw.get("metadata") if raw.__class__ is dict else None
            previous = None
            if only_metadata and meta.__class__ is dict:
                raw = metadata_of(raw, meta)
            if meta.__class__ is dict:
                if prepare is not None:
                    prepare(raw)
                name = meta.get("name")
                if name.__class__ is str:
                    previous = peek((meta.get("namespace") or "", name))
            informer = this()
            result: T = reuse(raw, previous, True, informer is not None and informer._synced, same_is_stored)
            if share is not None and result is not previous:
                share(result)
            return result

        return structure

    # ------------------------------------------- ReflectorSink (reflector thread)
    def replace(
        self,
        items: list[T],
        resource_version: str,
        *,
        resync: bool,
        generation: int | None = None,
        started_at: float | None = None,
    ) -> None:
        if self._transform is not None:
            items = [transformed(self._transform, obj, self.name) for obj in items]
        with self._deliver_lock:
            if generation is not None and generation != self._generation:
                return  # a stopped run's reflector
            notes = self._writer.replace(items, resource_version, resync=resync)
            self._lanes.enqueue(notes)
            self._lanes.synced()  # handlers registered before the list: their replay ends here
            # Under _deliver_lock: a handler registered from now on gets the replay (register
            # checks _synced under the same lock); one registered before got the notifications.
            with self._state:
                self._synced = True
                self._judge_locked()
                self._state.notify_all()
        self.writes.observe_relist(started_at, items)
        drain(notes)  # the replaced objects are freed in small steps, not in one GIL-holding call
        self._on_change()

    def apply(self, event: WatchEvent[T], generation: int | None = None) -> None:
        obj = transformed(self._transform, event.object, self.name)
        with self._deliver_lock:
            if generation is not None and generation != self._generation:
                return  # a stopped run's reflector
            self._lanes.enqueue(self._writer.apply(event.type, obj, event.resource_version))
        if self.writes.tracking:
            self.writes.observe_event(event.type, obj)

    def bookmark(self, resource_version: str, generation: int | None = None) -> None:
        with self._deliver_lock:
            if generation is not None and generation != self._generation:
                return
            self._writer.bookmark(resource_version)

    def error(self, exc: BaseException | None, generation: int | None = None, since: float | None = None) -> None:
        """Record the reflector's failure (None: current again); ``since``: when the data was last
        known current, if before now (a stalled watch: the read timeout ago)."""
        with self._state:
            if generation is not None and generation != self._generation:
                return
            if exc is None and self._last_error is None and self._unhealthy_since is None:
                return
            self._last_error = exc
            if exc is None:
                self._unhealthy_since = None
            elif self._unhealthy_since is None:
                self._unhealthy_since = self._clock.now() if since is None else since
            self._judge_locked()
            self._state.notify_all()
        self._on_change()

    # ----------------------------------------------------------------- status
    def status(self) -> InformerStatus:
        _fork.check()  # a fork without the hooks (uWSGI's default) is found here at the latest
        reflector = self._reflector
        err = self._last_error
        state, since = self.state()
        if state == InformerState.CURRENT and (reflector is None or not reflector.alive):
            # never "current" without a reflector running in this process
            state, err = (
                InformerState.DEGRADED,
                err or InheritedAcrossFork(f"no reflector thread runs in pid {_fork.pid}"),
            )
        return InformerStatus(
            kind=self.key.cls.kind,  # type: ignore[attr-defined]
            api_version=self.key.cls.api_version,  # type: ignore[attr-defined]
            namespace=self.key.namespace,
            label_selector=self.key.label_selector,
            field_selector=self.key.field_selector,
            started=self._started,
            synced=self._synced,
            state=state,
            seconds_since_current=since,
            object_count=len(self.store),
            resource_version=self.store.resource_version,
            last_sync_time=reflector.last_sync_time if reflector else None,
            relist_count=reflector.relist_count if reflector else 0,
            evictions=self.store.evictions,
            complete=self.complete,
            last_error=f"{type(err).__name__}: {err}" if err else None,
            handler_backlogs=self.handler_backlogs(),
            refused_events=reflector.refused_events if reflector else 0,
            next_retry_in=_retry_in(reflector, self._clock),
        )


def _retry_in(reflector: Reflector | None, clock: Clock) -> float | None:
    at = None if reflector is None else reflector.next_retry_at
    return None if at is None else max(0.0, at - clock.now())


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - SYSTEM_CLOCK.now())


@attrs.frozen
class _Inherited:
    """What a fork child's informer resumes from: the resourceVersion of its inherited objects."""

    resource_version: str | None


@attrs.frozen
class _StoppedRun:
    """The threads of a run that was asked to stop (what ``Informer.join`` waits for)."""

    generation: int
    reflector: Reflector | None
    joins: list[Callable[[float | None], bool]]


@attrs.frozen
class _RunSink:
    """The ReflectorSink of one run: forwards to the informer tagged with the run's generation.

    The informer is held weakly (it holds the reflector that holds this): no reference cycle, so
    a frozen (``_gc.freeze()``) informer is still freed by reference counting once dropped.
    """

    informer: weakref.ref[Informer[Any]]
    generation: int

    def replace(
        self, items: list[Any], resource_version: str, *, resync: bool, started_at: float | None = None
    ) -> None:
        informer = self.informer()
        if informer is not None:
            informer.replace(items, resource_version, resync=resync, generation=self.generation, started_at=started_at)

    def apply(self, event: WatchEvent[Any]) -> None:
        informer = self.informer()
        if informer is not None:
            informer.apply(event, self.generation)

    def bookmark(self, resource_version: str) -> None:
        informer = self.informer()
        if informer is not None:
            informer.bookmark(resource_version, self.generation)

    def error(self, exc: BaseException | None, since: float | None = None) -> None:
        informer = self.informer()
        if informer is not None:
            informer.error(exc, self.generation, since)

    def failed(self, exc: BaseException) -> None:
        """A list or watch failed: the informer's watch error handler is told (reflector thread)."""
        informer = self.informer()
        if informer is None or informer._generation != self.generation:
            return  # gone, or a stopped run's reflector
        handler = informer.watch_error_handler
        if handler is not None:
            handler(informer.name, exc)


def _informer_name(key: InformerKey) -> str:
    group = key.cls.api_version.rpartition("/")[0]  # type: ignore[attr-defined]
    resource = f"{key.cls.plural}.{group}" if group else key.cls.plural  # type: ignore[attr-defined]
    scope = key.namespace or "*"
    sel = ",".join(s for s in (key.label_selector, key.field_selector) if s)
    return f"{resource}@{scope}" + (f"[{sel}]" if sel else "")
