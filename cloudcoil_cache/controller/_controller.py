"""Controller: informer events → keys → a work queue → worker threads → the reconcile function."""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Mapping, Sequence, TypeVar

from cloudcoil_cache._listwatch import parse_label_selector
from cloudcoil_cache.caching._policy import in_scope
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller._context import CachedKind, Context
from cloudcoil_cache.controller._finalizers import check_finalizer_name
from cloudcoil_cache.controller._informers import Source
from cloudcoil_cache.controller._keys import normalize_key, split_key
from cloudcoil_cache.controller._kinds import check_kind
from cloudcoil_cache.controller._mapping import EventMapping, Mapper
from cloudcoil_cache.controller._observe import ControllerObserver
from cloudcoil_cache.controller._operator import WriteOptions
from cloudcoil_cache.controller._predicates import Predicate, as_predicates, default_predicates
from cloudcoil_cache.controller._queue import QueueStats
from cloudcoil_cache.controller._run import ControllerRun
from cloudcoil_cache.controller._sharding import Ring
from cloudcoil_cache.controller._stages import Flow, StageScope
from cloudcoil_cache.controller._status_report import ControllerStatus, ReconcileCounts, snapshot
from cloudcoil_cache.controller._workers import Reconciler
from cloudcoil_cache.models._partial import metadata_class

__all__ = ["Controller"]

log = logging.getLogger("cloudcoil_cache.controller")

F = TypeVar("F", bound=Callable[..., Any])


class Controller:
    """Reconciles objects of ``kind``: each change (of the object, an object it owns, or a watched object
    mapped to it) queues its key, and a worker calls the reconcile function with a deep copy of the
    object as cached now.

    A key is never reconciled by two workers at once; a key changed while it is processed is
    processed once more. See docs/contract.md "Controllers" for outcomes and ``ctx.cached``.

    Run it with a ``Manager`` (leader election, health, signals) or alone: ``with controller:``.

    ``kind`` (and a kind given to ``owns()`` or ``watch()``) may be a class whose plural and scope
    come from discovery (``get_dynamic_resource("Gadget", "example.com/v1")``): they are learnt from
    the API server when the controller starts (one GET each); a kind the server does not serve fails
    the start with ``ConfigError`` ("... is not registered with the server ...").

    This class is the declaration (kind, scope, owned and watched kinds, the reconcile function);
    its run (informers, then workers while leading) is ``run``, a ``ControllerRun`` (a run group);
    ``EventMapping`` turns events into keys and ``Workers`` runs the reconciles of one run.

    An operator's writes (``OperatorPass`` runs them around each pass): ``finalize()``;
    ``report_status=True`` keeps a ``Ready`` condition from each pass's outcome; ``status_updates``
    (None: True) lets ``ctx.set_status``/``ctx.condition`` write the status subresource, once per
    pass and only on a change; ``events`` lets ``ctx.event`` record Events, for at most
    ``event_flush_timeout`` seconds per pass; ``field_manager`` (default: the name) is the manager
    of its writes (``ctx.ensure`` applies children with it).

    ``predicates`` filter the primary kind's events (see ``Predicate``; a list passes an event when all
    of its predicates do). None (the default): for a custom resource, a change of the generation, the
    labels or the annotations queues the key, so a status write (the controller's own included) costs
    no pass (kinds without a generation queue every change); for a built-in kind (a Pod, whose status
    others write), every change (``default_predicates``). ``predicates=[]``: every change queues.
    ``owns()`` and ``watch()`` take ``predicates=`` too (default: every change). Whatever the
    predicates say, creations and deletions pass (the ready-made predicates filter updates only), and
    so do resync re-deliveries and updates that set the deletion mark or change the finalizers.
    The queue serves watch events before the start's replay and resyncs (``Priority``);
    ``warm_restart`` (default True) queues after those the primaries whose status says they
    converged for their generation (``observedGeneration``, ``Ready=True``): still reconciled, last.

    ``sharding``: a ``Ring`` — active-active replicas, each reconciling its share of the objects
    (its informers of the primary and owned kinds select its shard label); see docs/sharding.md.
    """

    def __init__(
        self,
        kind: Any,
        reconcile: Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        config: Config | None = None,
        namespace: str | None = None,
        all_namespaces: bool = False,
        label_selector: str | None = None,
        workers: int = 1,
        resync_period: float | None = 300,
        shutdown_timeout: float = 10,
        reconcile_timeout: float | None = None,
        report_status: bool = False,
        status_updates: bool | None = None,
        events: bool = True,
        event_flush_timeout: float = 2.0,
        field_manager: str | None = None,
        predicates: Predicate | Callable[[Any, Any], Any] | Sequence[Any] | None = None,
        warm_restart: bool = True,
        sharding: Ring | None = None,
    ) -> None:
        check_kind(kind, "Controller()")
        if sharding is not None and not isinstance(sharding, Ring):
            raise TypeError(f"Controller(sharding=...) expects a Ring, got {type(sharding).__name__}")
        if not isinstance(warm_restart, bool):
            raise TypeError(f"Controller(warm_restart=...) must be True or False, got {warm_restart!r}")
        if namespace is not None and all_namespaces:
            raise ValueError("Controller(): namespace and all_namespaces are mutually exclusive")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"Controller(workers=...) must be an int >= 1, got {workers!r}")
        for what, value in (("resync_period", resync_period), ("shutdown_timeout", shutdown_timeout)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
                raise ValueError(f"Controller({what}=...) must be a number of seconds >= 0, got {value!r}")
        if reconcile_timeout is not None and (
            isinstance(reconcile_timeout, bool)
            or not isinstance(reconcile_timeout, (int, float))
            or not 0 < reconcile_timeout < float("inf")
        ):
            raise ValueError(
                f"Controller(reconcile_timeout=...) must be a number of seconds > 0, got {reconcile_timeout!r}"
            )
        self.predicates: tuple[Predicate, ...] = (
            default_predicates(kind) if predicates is None else as_predicates(predicates, "Controller(predicates=...)")
        )
        self._selector = parse_label_selector(label_selector)  # a bad selector fails here, named
        self.kind = kind
        self.name = name or kind.kind.lower()
        self.config = config
        self.namespace = namespace
        self.all_namespaces = all_namespaces
        self.label_selector = label_selector or None
        self.workers = workers
        self.resync_period = resync_period
        self.warm_restart = warm_restart  # converged primaries queued last at a start (docs/controllers.md)
        self.shutdown_timeout = float(shutdown_timeout)
        self.reconcile_timeout = None if reconcile_timeout is None else float(reconcile_timeout)
        self.logger = log.getChild(self.name)
        self.observer = ControllerObserver()
        self._writes = WriteOptions.of(
            self.name, report_status, status_updates, events, event_flush_timeout, field_manager
        )
        self._finalizers: dict[str, Reconciler] = {}
        self._owned: list[Any] = []
        self._watches: list[tuple[Any, Mapper]] = []
        self._indexes: dict[tuple[Any, str], Callable[[Any], Any]] = {}  # (kind, name) -> index function
        self._owned_predicates: dict[Any, tuple[Predicate, ...]] = {}
        self._watch_predicates: list[tuple[Predicate, ...]] = []  # beside _watches
        self._reconciler: Reconciler | None = None
        self._flow = Flow()  # stages or top-level cases, the other ways to declare the reconcile
        self._counts = ReconcileCounts()  # for status(), across runs
        if reconcile is not None:
            self._set_reconcile(reconcile, None)
        self._primary_namespace: str | None = namespace if kind.namespaced else None
        self._mapping = EventMapping(
            self.name,
            kind,
            self._owned,
            self._watches,
            in_scope=self.in_scope,
            normalize=self._normalize,
            outside_scope=self._outside_scope,
            namespace=lambda: self._primary_namespace,
            sources=lambda: self.sources,
            logger=self.logger,
            primary_predicates=self.predicates,
            owned_predicates=self._owned_predicates,
            watch_predicates=self._watch_predicates,
        )
        self._run = ControllerRun(self)  # the run state: informers, then workers while leading
        self.sharding: Ring | None = None
        if sharding is not None:
            self._set_sharding(sharding)

    def _set_sharding(self, ring: Ring) -> None:
        """Shard this controller by ``ring`` (its own, or a Manager's for all of its controllers)."""
        if self.sharding is ring:
            return
        if self.sharding is not None:
            raise ValueError(
                f"controller {self.name!r} is already sharded by ring {self.sharding.name!r}: one ring per controller"
            )
        self._check_not_started("sharding")
        self.sharding = ring
        ring._attach(self)
        self._run.use_ring(ring)

    def __repr__(self) -> str:
        return f"<Controller {self.name!r} {self.kind.kind} running={self.running}>"

    # ------------------------------------------------------------ declaring
    def owns(
        self,
        *kinds: Any,
        predicates: Predicate | Callable[[Any, Any], Any] | Sequence[Any] = (),
        metadata_only: bool = False,
    ) -> Controller:
        """Objects of ``kinds`` whose controller ownerReference names a cached primary (same kind,
        group and UID) queue that primary. ``predicates``: the events of these kinds that do (default:
        every change; ``predicates=[GenerationChanged()]`` keeps a child's status churn from waking its
        owner). Declaring a kind again replaces its predicates. ``metadata_only``: their informer holds
        only their metadata (``PartialObjectMetadata.of(kind)``: what the mapping needs; read them with
        ``ctx.cached(PartialObjectMetadata.of(kind))``, whole with ``kind.get``)."""
        self._check_not_started("owns()")
        checked = as_predicates(predicates, "owns(predicates=...)")
        for kind in kinds:
            check_kind(kind, "owns()")
            if metadata_only:
                kind = metadata_class(kind)
            if kind not in self._owned:
                self._owned.append(kind)
            self._owned_predicates[kind] = checked
        return self

    def watch(
        self,
        kind: Any,
        mapper: Mapper | None = None,
        *,
        predicates: Predicate | Callable[[Any, Any], Any] | Sequence[Any] = (),
        metadata_only: bool = False,
    ) -> Any:
        """Objects of ``kind`` queue the keys ``mapper(obj)`` returns (a key, an iterable of keys, or
        None). The mapper gets a deep copy; an exception in it is logged. Also a decorator:
        ``@ctl.watch(Secret)``. ``predicates``: the events of ``kind`` that call the mapper (default:
        every change). ``metadata_only``: the informer holds, and the mapper gets,
        ``PartialObjectMetadata.of(kind)`` objects (name, namespace, labels, owners...)."""
        self._check_not_started("watch()")
        check_kind(kind, "watch()")
        checked = as_predicates(predicates, "watch(predicates=...)")
        if metadata_only:
            kind = metadata_class(kind)
        if mapper is None:

            def register(func: F) -> F:
                self.watch(kind, func, predicates=checked)
                return func

            return register
        if not callable(mapper):
            raise TypeError(f"watch(mapper=...) expects a callable, got {type(mapper).__name__}")
        self._watches.append((kind, mapper))
        self._watch_predicates.append(checked)
        return self

    def index(self, kind: Any, name: str, func: Callable[[Any], Any]) -> Controller:
        """Declare an index of ``kind`` (the primary, or a kind of ``owns()``/``watch()``) on the cache
        that holds the controller's informer of it, at the start (controller-runtime's ``IndexField``):
        ``func(obj)`` returns one key, an iterable of keys, or None. Reconciles ask it with
        ``ctx.cached(kind).list(index=(name, value))``; ``Pod.list(index=...)`` through that cache too."""
        self._check_not_started("index()")
        check_kind(kind, "index()")
        if not isinstance(name, str) or not name:
            raise ValueError(f"index(): an index name must be a non-empty string, got {name!r}")
        if not callable(func):
            raise TypeError(f"index({kind.kind}, {name!r}, ...) expects a callable, got {type(func).__name__}")
        if self._indexes.get((kind, name), func) is not func:
            raise ValueError(f"controller {self.name!r}: index {name!r} of {kind.kind} is declared twice")
        self._indexes[(kind, name)] = func
        return self

    def _add_indexes(self, sources: Mapping[Any, Any]) -> None:
        """At the start: each declared index on the cache of the controller's informer of its kind."""
        for (kind, name), func in self._indexes.items():
            source = sources.get(kind)
            cache = None if source is None else source.config.cache
            if cache is None:
                raise ValueError(
                    f"controller {self.name!r}: index {name!r} of {kind.kind}, a kind the controller does not "
                    "watch (declare it with owns() or watch())"
                )
            cache.index(kind, name, func)

    def reconcile(self, func: Callable[..., Any] | None = None, *, every: float | None = None) -> Any:
        """Decorator: ``@ctl.reconcile()`` / ``@ctl.reconcile(every=60)`` on ``def f(obj)``,
        ``def f(obj, ctx)`` or a coroutine function. ``every``: also reconcile each object that many
        seconds after its last successful reconcile."""
        if every is not None and (isinstance(every, bool) or not isinstance(every, (int, float)) or every <= 0):
            raise ValueError(f"reconcile(every=...) must be a number of seconds > 0, got {every!r}")
        if func is not None:
            self._set_reconcile(func, every)
            return func

        def register(f: F) -> F:
            self._set_reconcile(f, every)
            return f

        return register

    def finalize(self, name: str) -> Callable[[F], F]:
        """Decorator: ``@ctl.finalize("example.com/cleanup")`` on ``def f(obj)``, ``def f(obj, ctx)``
        or a coroutine function. The controller adds the finalizer to every live object it
        reconciles; once an object is being deleted it calls ``f`` (not the reconcile function) and
        removes the finalizer when ``f`` returns (an exception retries with the key's backoff)."""
        check_finalizer_name(name)
        self._check_not_started("finalize()")
        if name in self._finalizers:
            raise ValueError(f"controller {self.name!r}: finalizer {name!r} is declared twice")

        def register(func: F) -> F:
            if not callable(func):
                raise TypeError(f"a finalize function must be callable, got {type(func).__name__}")
            self._finalizers[name] = Reconciler.of(func)
            return func

        return register

    # The Application reads what the controller needs (RBAC) from these.
    @property
    def owned_kinds(self) -> tuple[Any, ...]:
        """The kinds declared with ``owns()``."""
        return tuple(self._owned)

    @property
    def watched_kinds(self) -> tuple[Any, ...]:
        """The kinds declared with ``watch()`` (each once)."""
        return tuple(dict.fromkeys(kind for kind, _ in self._watches))

    @property
    def finalizers(self) -> tuple[str, ...]:
        """The finalizer names declared with ``finalize()``."""
        return tuple(self._finalizers)

    @property
    def status_updates(self) -> bool:
        """May the controller write its primaries' status (the status subresource)?"""
        return self._writes.status_updates

    @property
    def events(self) -> bool:
        """Does the controller record Events (events.k8s.io)?"""
        return self._writes.events

    @property
    def field_manager(self) -> str:
        """The field manager of the controller's writes (server-side apply of children)."""
        return self._writes.field_manager

    def _set_reconcile(self, func: Callable[..., Any], every: float | None) -> None:
        if not callable(func):
            raise TypeError(f"a reconcile function must be callable, got {type(func).__name__}")
        self._check_not_started("reconcile()")
        self._reconciler = Reconciler.of(func, every)

    def stage(self, name: str | None = None, *, condition: str | None = None, depends: Any = ()) -> StageScope:
        """Decorator: ``@ctl.stage("Configure", condition="Configured", depends=other)`` on ``def f(obj)``
        or ``def f(obj, ctx)`` (or ``async def``) returning None or ``Wait``; or a scope for cases:
        ``s = ctl.stage(...)`` then ``@s.case(when=...)`` / ``@s.otherwise()``. Every pass runs the
        stages in the one order ``depends`` gives (stages, their functions or names). See ``Flow``."""
        self._check_not_started("stage()")
        return self._flow.stage(name, condition=condition, depends=depends)

    def case(self, *, when: Callable[..., Any], after: Any = None) -> Callable[[F], F]:
        """Decorator: a top-level case, run when ``when(obj)`` / ``when(obj, ctx)`` is the first to return
        True (cases in the one order ``after=`` gives); ``@ctl.otherwise()`` runs when none does."""
        self._check_not_started("case()")
        return self._flow.branches.case(when=when, after=after)

    def otherwise(self) -> Callable[[F], F]:
        """Decorator: what runs when no top-level case matches (required with cases)."""
        self._check_not_started("otherwise()")
        return self._flow.branches.otherwise()

    def _check_not_started(self, what: str) -> None:
        run: ControllerRun | None = getattr(self, "_run", None)
        if run is not None and run.started:
            raise RuntimeError(f"controller {self.name!r}: {what} after the controller started")

    def enqueue(self, key: Any) -> None:
        """Queue a key (a ``ResourceKey``, ``"namespace/name"``, a ``(namespace, name)`` pair or an
        object). Keys queued while the controller's workers are not running (a standby replica) are
        dropped: every object is queued when they start."""
        key = self._normalize(key)
        outside = self._outside_scope(key)
        if outside is not None:  # it could never be reconciled: every pass would fail and back off
            raise ValueError(
                f"controller {self.name!r} reconciles namespace {self._primary_namespace!r} only: "
                f"cannot enqueue {key!r} (namespace {outside!r})"
            )
        workers = self._run.running
        if workers is not None:
            workers.queue.add(key)

    def _normalize(self, key: Any) -> str:
        """``key`` (a string, a pair or an object) as a key, with the default namespace."""
        return normalize_key(key, namespaced=self.kind.namespaced, default_namespace=self._default_namespace())

    def _outside_scope(self, key: str) -> str | None:
        """The namespace of ``key`` when it is not the one this controller reconciles, else None."""
        if not self.kind.namespaced:
            return None
        namespace = split_key(key)[0] or ""
        return None if in_scope(self._primary_namespace, namespace) else namespace

    # -------------------------------------------------------------- scope
    def _default_namespace(self) -> str | None:
        if not self.kind.namespaced or self.all_namespaces:
            return None
        if self.namespace:
            return self.namespace
        config = self.config
        return config.namespace if config is not None else None

    def _scope_namespace(self, config: Config) -> str | None:
        if self.all_namespaces:
            return None
        cache = config.cache
        if not self.namespace and cache is not None and cache.namespace_set(self.kind) is not None:
            return None  # a cache over a set of namespaces: every namespace of the set
        return self.namespace or config.namespace

    def in_scope(self, obj: Any) -> bool:
        """Is ``obj`` one of this controller's primaries (namespace and label selector)?"""
        if self.kind.namespaced and self._primary_namespace and obj.metadata.namespace != self._primary_namespace:
            return False
        return self._selector.empty or self._selector.matches(obj.metadata.labels)

    # ----------------------------------------------------------- the run
    @property
    def run(self) -> ControllerRun:
        """The controller's run (a run group: its informers, then its workers)."""
        return self._run

    @property
    def sources(self) -> dict[Any, Source]:
        return self._run.sources

    def cached(self, cls: Any) -> CachedKind[Any]:
        """Reads of ``cls`` from the controller's informers (for mappers and tests)."""
        return Context(self.name, "", self._write_config(), self.sources, self.logger).cached(cls)

    def _write_config(self) -> Config:
        source = self.sources.get(self.kind)
        if source is None:
            raise RuntimeError(f"controller {self.name!r} is not started")
        return source.config

    # -------------------------------------------------------------- events
    def keys_for(self, obj: Any) -> list[str]:
        """The keys an event for ``obj`` queues: itself if it is a primary, the primary named by its
        controller ownerReference (owned kinds), and what the mappers of its kind return."""
        return self._mapping.keys_for(obj)

    # -------------------------------------------------------------- workers
    @property
    def running(self) -> bool:
        """Are the workers running (this replica leads)?"""
        return self._run.running is not None

    def status(self) -> ControllerStatus:
        """A snapshot: synced, running/leading, the queue, reconcile counts, the last error per key."""
        workers = self._run.running
        sources = self.sources
        synced = bool(sources) and all(s.view.status().synced for s in sources.values())
        return snapshot(
            self.name,
            synced,
            workers is not None,
            workers.queue.stats() if workers is not None else None,
            workers.deadline.abandoned if workers is not None and workers.deadline is not None else 0,
            self._counts,
            sharding=self.sharding.status_for(self) if self.sharding is not None else None,
        )

    @property
    def ready(self) -> bool:
        """Informers synced and workers running (cloudcoil 0.8's ``ready``)."""
        return self.status().ready

    def wait_ready(self, timeout: float | None = 30) -> bool:
        """Wait up to ``timeout`` seconds (None: no limit) for the informers to be started and synced;
        True when they are, False on timeout."""
        return self._run.synced.wait(timeout) and self.status().synced

    def queue_stats(self) -> QueueStats | None:
        """The current run's queue measurements (None while the workers are not running)."""
        workers = self._run.running
        return workers.queue.stats() if workers is not None else None

    def threads(self) -> list[threading.Thread]:
        """The worker and event-loop threads of the current run."""
        return self._run.threads()

    # ---------------------------------------------------- standalone use
    def start(self, config: Config | None = None) -> Controller:
        """Start the informers (waiting for their sync) and the workers, without a Manager."""
        self._run.start_informers(config)
        self._run.start()  # the run group: the informers (started above), then the workers
        return self

    def stop(self) -> bool:
        """Stop the workers (waiting up to ``shutdown_timeout``), then the informers."""
        self._run.finished = True  # (nothing running: nothing late)
        self._run.close()
        return self._run.finished

    def __enter__(self) -> Controller:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
