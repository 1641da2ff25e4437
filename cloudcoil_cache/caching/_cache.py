"""Cache: the informer registry of one Config, its options, status and read policy, over its Scopes."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
import types
import weakref
from typing import Any, Callable, Iterable, Iterator, Mapping

import attrs

from cloudcoil_cache import _fork
from cloudcoil_cache._runnable import deadline_after, remaining
from cloudcoil_cache._threads import run_control
from cloudcoil_cache.caching._async import AsyncInformer, running_loop
from cloudcoil_cache.caching._counts import HIT, ReadCounters, ReadCounts, kind_label, merged, metrics_text
from cloudcoil_cache.caching._informer import Decoder, DecodingSource, Informer, InformerKey, InformerStatus
from cloudcoil_cache.caching._options import (
    CacheOptions,
    KindSettings,
    NamespaceSelector,
    awaits_discovery,
    check_index,
    check_mode,
    check_namespace_name,
    check_resource_class,
    kind_settings,
    validate_options,
)
from cloudcoil_cache.caching._owner import CacheOwner, Scopes
from cloudcoil_cache.caching._policy import CacheFacts, InformerState, Mode, in_scope
from cloudcoil_cache.caching._reader import CacheReader, SetReader
from cloudcoil_cache.caching._reflector import Tuning
from cloudcoil_cache.caching._selector import NamespaceFollower, NamespaceKind
from cloudcoil_cache.caching._views import InformerView, SyncInformer
from cloudcoil_cache.caching._writes import WriteTracker
from cloudcoil_cache.errors import (
    CacheSyncTimeout,
    CloudcoilError,
)
from cloudcoil_cache.models._partial import is_metadata_class, metadata_class

__all__ = ["Cache", "CacheStatus", "after_fork"]

log = logging.getLogger(__name__)


@attrs.frozen
class CacheStatus:
    """What ``Cache.status()`` reports. ``errors`` holds the current error of every failing informer."""

    enabled: bool
    started: bool
    ready: bool
    mode: str
    resource_count: int
    informer_count: int
    errors: dict[str, str]
    informers: list[InformerStatus]
    #: the reads through this cache so far, per kind (``Pod``, ``Deployment.apps``): see ``ReadCounts``
    reads: dict[str, ReadCounts] = attrs.field(factory=dict)


class Cache:
    """Informers for a Config, started and stopped by its scopes.

    Args mirror docs/contract.md: ``resources``, ``namespaces`` (one or None), ``label_selector``,
    ``field_selector``, ``resync_period``, ``wait_for_sync``, ``sync_timeout``,
    ``max_items_per_resource``, ``per_resource``, ``mode`` ("strict"/"fallback"), ``enabled``,
    ``max_staleness``, ``read_your_writes_timeout``, ``transform``, ``metadata_only`` (kinds whose
    informer lists and watches ``PartialObjectMetadata`` only: see docs/contract.md). ``tuning``
    (advanced) sets the reflectors' timing knobs (backoff, watch timeout, read timeout, clock).
    ``watch_error_handler``: ``handler(informer name, error)`` at each failed list or watch of its
    informers. ``count_hits``: count the gets answered at once too (``status().reads``,
    ``metrics_text()``; ~0.1 µs a get).

    The Cache keeps the registry of informers; their reference-counted run is its ``Scopes``
    (``caching._owner``), which the owning Config drives; a read is answered by ``caching._reads``
    (the pure read policy ``caching._policy.decide`` on the facts).

    Thread safety: every method may be called from any thread. ``_lock`` guards the registry and
    (shared with the Scopes) the reference count; it is never held while joining threads or
    waiting for a sync.
    """

    def __init__(
        self,
        resources: Iterable[Any] | None = None,
        namespaces: Iterable[str] | str | NamespaceSelector | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resync_period: float | None = 300,
        wait_for_sync: bool = True,
        sync_timeout: float = 30,
        max_items_per_resource: int = 0,
        per_resource: Mapping[Any, Mapping[str, Any] | None] | None = None,
        mode: str = "fallback",
        enabled: bool = True,
        max_staleness: float | None = 60,
        read_your_writes_timeout: float = 2.0,
        transform: Callable[[Any], Any] | None = None,
        *,
        metadata_only: Iterable[Any] | None = None,
        tuning: Tuning | None = None,
        watch_error_handler: Callable[[str, BaseException], Any] | None = None,
        count_hits: bool = False,
        indexes: Mapping[Any, Mapping[str, Callable[[Any], Any]]] | None = None,
    ) -> None:
        self._options: CacheOptions = validate_options(
            resources=resources,
            namespaces=namespaces,
            label_selector=label_selector,
            field_selector=field_selector,
            resync_period=resync_period,
            wait_for_sync=wait_for_sync,
            sync_timeout=sync_timeout,
            max_items_per_resource=max_items_per_resource,
            per_resource=per_resource,
            mode=mode,
            enabled=enabled,
            max_staleness=max_staleness,
            read_your_writes_timeout=read_your_writes_timeout,
            transform=transform,
            watch_error_handler=watch_error_handler,
            count_hits=count_hits,
            indexes=indexes,
            metadata_only=metadata_only,
        )
        #: the declared indexes of each kind (``indexes=``, ``index()``), added to its informer when made
        self._indexes: dict[Any, dict[str, Callable[[Any], Any]]] = {
            cls: dict(named) for cls, named in self._options.indexes.items()
        }
        self._mode: Mode = self._options.mode
        self.tuning = tuning or Tuning()
        self._settings: dict[Any, KindSettings] = {}
        self._lock = threading.RLock()
        self._informers: dict[InformerKey, Informer[Any]] = {}
        self._write_peers: tuple[Cache, ...] = ()  # caches told about this cache's Config's writes
        self._by_kind: dict[type, Informer[Any]] = {}  # the informer that serves reads of a kind (read lock-free)
        #: a kind over a set of namespaces: its informer per namespace (replaced whole, read lock-free)
        self._spread: dict[type, dict[str, Informer[Any]]] = {}
        #: the set of namespaces each kind over a set watches now (``add_namespace``/``remove_namespace``)
        self._sets: dict[type, tuple[str, ...]] = {}
        #: the cache's own set (``namespaces=[...]``), followed by every kind without a set of its own
        self._default_set: tuple[str, ...] | None = self._options.namespaces
        self._readers: dict[type, CacheReader[Any]] = {}  # the reader bound to each of them (``readers``)
        #: a kind over a set: the reader of its informer per namespace (its ``SetReader`` hands reads to them)
        self._set_readers: dict[type, dict[str, CacheReader[Any]]] = {}
        #: called with (namespace, added) after each change of a set, outside the lock (``on_namespaces_changed``)
        self._set_listeners: tuple[Callable[[str, bool], None], ...] = ()
        #: The reader of each kind with an informer (``reader(cls)``), read-only, lock-free: one per
        #: informer, bound when the informer is made (``caching._reader.CacheReader``).
        self.readers: Mapping[type, CacheReader[Any]] = types.MappingProxyType(self._readers)
        self._cache_facts: dict[tuple[bool, bool, bool, bool, bool], CacheFacts] = {}
        self._read_counts = ReadCounters()  # the reads the policy answered, per kind (``count_read``)
        this = weakref.ref(self)  # what the cache owns holds no reference back to it
        tuning = self.tuning  # read at each use, as ``cache.tuning`` may be assigned
        self._scopes = Scopes(
            self._lock,
            self._informers,
            self._options,
            tuning=lambda: getattr(this(), "tuning", tuning),
            strict=lambda: (cache := this()) is not None and cache._mode is Mode.STRICT,
            prepare=_weakly(self._bind_discovered, _nothing),
            resume=_weakly(self.resume_after_fork, _nothing),
            settle=_weakly(self._settle, _no_more),
        )
        self._sync_cond = self._scopes.sync_cond  # notified when any informer changes (tests wait on it)
        self._mode_var: contextvars.ContextVar[Mode | None] = contextvars.ContextVar(
            f"cloudcoil_cache_mode_{id(self)}", default=None
        )
        self._pause_var: contextvars.ContextVar[bool] = contextvars.ContextVar(
            f"cloudcoil_cache_paused_{id(self)}", default=False
        )
        #: kinds of ``resources`` whose informers wait for their plural and scope (discovery, at the start)
        self._discovered: list[Any] = []
        self._fork_epoch = _fork.epoch  # the process its informers run in (see resume_after_fork)
        _fork.on_fork(self._after_fork_in_child)
        _caches.add(self)
        for cls in dict.fromkeys([*(self._options.resources or ()), *self._options.metadata_only]):
            if self.settings_for(cls).enabled:
                if awaits_discovery(cls):
                    self._discovered.append(cls)
                else:
                    self._informers_for_kind_locked(cls)
        #: ``namespaces=NamespaceSelector(...)``: the informer of the Namespaces it selects, which the set follows
        self._follower: NamespaceFollower | None = None
        if self._options.namespace_selector is not None and self._options.enabled:
            self._follower = self._namespace_follower(self._options.namespace_selector)

    # ---------------------------------------------------------------- options
    @property
    def options(self) -> CacheOptions:
        """The checked options (frozen)."""
        return self._options

    @property
    def enabled(self) -> bool:
        """False when built disabled, or inside ``pause()`` (for the current thread/task only)."""
        return self._options.enabled and not self._pause_var.get()

    @property
    def namespace(self) -> str | None:
        """The one namespace the cache watches, or None for all (or for a set: see ``namespaces``)."""
        return self._options.namespace

    @property
    def namespaces(self) -> tuple[str, ...] | None:
        """The cache's set of namespaces now (``Cache(namespaces=["a", "b"])``, changed by
        ``add_namespace``/``remove_namespace``), or None when it watches one namespace or all."""
        return self._default_set

    @property
    def namespace_selector(self) -> NamespaceSelector | None:
        """``Cache(namespaces=NamespaceSelector(...))``'s selector (the set follows the Namespaces it
        selects), else None."""
        return self._options.namespace_selector

    def follows_selector(self, cls: Any) -> bool:
        """Does ``cls``'s set of namespaces follow the cache's ``NamespaceSelector``?"""
        if self._options.namespace_selector is None or not getattr(cls, "namespaced", False):
            return False
        return self.settings_for(getattr(cls, "__editable_class__", cls)).namespaces is self._options.namespaces

    def namespace_set(self, cls: Any) -> tuple[str, ...] | None:
        """The namespaces ``cls`` is watched in now when it is watched over a set (one informer per
        namespace), else None (one informer: one namespace or all; every cluster-scoped kind)."""
        cls = getattr(cls, "__editable_class__", cls)
        found = self._sets.get(cls)
        if found is not None:
            return found
        if not getattr(cls, "namespaced", False):
            return None
        if self.settings_for(cls).namespaces is None:
            return None
        with self._lock:
            return self._set_of_locked(cls)

    def _set_of_locked(self, cls: Any) -> tuple[str, ...]:
        found = self._sets.get(cls)
        if found is None:
            own = self.settings_for(cls).namespaces
            assert own is not None
            follows = own is self._options.namespaces
            found = self._sets[cls] = (self._default_set or ()) if follows else own
        return found

    def add_namespace(self, namespace: str, cls: Any = None) -> None:
        """Watch ``namespace`` too: for every kind that follows the cache's set (``cls`` None) or for
        ``cls``'s own set. Its informers are made (and started, if the cache runs): reads of the
        namespace are served once they sync (``wait()``). A ``ValueError`` on a cache (or kind) that
        watches one namespace or all of them: build it with a set (``namespaces=["a", "b"]``)."""
        self._change_set(namespace, cls, add=True)

    def remove_namespace(self, namespace: str, cls: Any = None) -> None:
        """Stop watching ``namespace`` (see ``add_namespace``): its informers are stopped and joined,
        and its objects are no longer served (reads of it are outside the set)."""
        self._change_set(namespace, cls, add=False)

    def _change_set(self, namespace: str, cls: Any, *, add: bool) -> None:
        verb = "add_namespace" if add else "remove_namespace"
        check_namespace_name(namespace, f"Cache.{verb}({namespace!r})")
        stopping: list[Informer[Any]] = []
        changed = False
        with self._lock:
            if cls is None:
                if self._default_set is None:
                    raise ValueError(
                        f"Cache.{verb}({namespace!r}): the cache watches "
                        f"{repr(self.namespace) if self.namespace else 'all namespaces'}, not a set: "
                        "build it with Cache(namespaces=['a', 'b'])"
                    )
                kinds = [
                    k
                    for k in {*self._sets, *self._spread}
                    if self.settings_for(k).namespaces is self._options.namespaces
                ]
                default = _changed(self._default_set, namespace, add)
                changed = default != self._default_set
            else:
                cls = self._cached_class(getattr(cls, "__editable_class__", cls))
                if not cls.namespaced or self.settings_for(cls).namespaces is None:
                    raise ValueError(f"Cache.{verb}({namespace!r}, {cls.kind}): {cls.kind} is not watched over a set")
                kinds = [cls]
            for kind in kinds:
                changed = self._change_kind_locked(kind, namespace, add, stopping) or changed
            if cls is None:  # once its kinds' informers are made: whoever sees the new set finds them
                self._default_set = default
            listeners = self._set_listeners
        for informer in stopping:  # never joined under the lock
            informer.stop(self.tuning.stop_timeout)
        if changed:
            for listener in listeners:  # outside the lock: a listener may read or change the cache
                try:
                    listener(namespace, add)
                except Exception:
                    log.exception("cache: a listener of %s(%r) failed", verb, namespace)

    # ------------------------------------------------------ namespace selector
    def _namespace_follower(self, selector: NamespaceSelector) -> NamespaceFollower:
        """The informer of the Namespaces ``selector`` selects (in the registry: started, stopped,
        waited for and reported with the others) and what makes the set follow it."""
        key = InformerKey(metadata_class(NamespaceKind), None, selector.label_selector, "")
        scopes = self._scopes
        informer: Informer[Any] = Informer(
            key,
            DecodingSource(_weakly(scopes.source_for, _no_source)),
            resync_period=None,
            tuning=_metadata_tuning(self.tuning),
            on_change=_weakly(scopes.wake, _nothing),
            max_staleness=self._options.max_staleness,
            handler_context=_weakly(scopes.handler_context, contextvars.Context),
        )
        informer.watch_error_handler = self._options.watch_error_handler
        self._informers[key] = informer
        return NamespaceFollower(  # what the informer's handler holds refers to the cache weakly
            selector,
            informer,
            current=_weakly(self._current_set, _no_set),
            add=_weakly(self.add_namespace, _nothing),
            remove=_weakly(self.remove_namespace, _nothing),
        )

    def _current_set(self) -> tuple[str, ...]:
        return self._default_set or ()

    def _settle(self, informers: list[Informer[Any]]) -> list[Informer[Any]]:
        """After a wait for ``informers``: the set made to follow the selector, and every informer
        to wait for now when the cache made some meanwhile (else [])."""
        if self._follower is None:
            return []
        self._follower.follow()
        now = self.informers()
        given = {id(informer) for informer in informers}
        return now if any(id(informer) not in given for informer in now) else []

    def settle_namespaces(self, timeout: float | None = None) -> bool:
        """A cache over a ``NamespaceSelector``: wait up to ``timeout`` for its Namespaces to be
        listed and make the set follow them (True), else False; True at once for any other cache.
        A hard failure of the list (no RBAC to list Namespaces) raises."""
        return self._follower is None or self._follower.settle(timeout)

    def namespaces_listed(self) -> bool:
        """False while a ``NamespaceSelector``'s Namespaces are not listed (the set is not known yet)."""
        return self._follower is None or self._follower.listed()

    def _change_kind_locked(self, kind: Any, namespace: str, add: bool, stopping: list[Informer[Any]]) -> bool:
        """``namespace`` added to (or removed from) ``kind``'s set: its informer made and started (or
        dropped, into ``stopping``), its ``SetReader`` rebound. Whether the set changed."""
        current = self._set_of_locked(kind)
        self._sets[kind] = _changed(current, namespace, add)
        if kind in self._spread:  # its informers were asked for: the new namespace's too
            if add:
                informer = self._informer_for_kind_locked(kind, namespace)
                if self._refcount > 0:
                    informer.start()
            else:
                spread = dict(self._spread[kind])
                gone = spread.pop(namespace, None)
                if gone is not None:
                    self._spread[kind] = spread
                    self._informers.pop(gone.key, None)
                    self._set_readers.get(kind, {}).pop(namespace, None)
                    stopping.append(gone)
            self._bind_set_reader_locked(kind)
        return self._sets[kind] != current

    def on_namespaces_changed(self, listener: Callable[[str, bool], None]) -> Callable[[], None]:
        """Call ``listener(namespace, added)`` after each change of a set of namespaces of this cache
        (``add_namespace``/``remove_namespace``, or its ``NamespaceSelector``), once the informers
        are made (and started) or stopped, outside the cache's lock: a controller's informers
        follow the set so. Returns the function that unsubscribes it."""
        with self._lock:
            self._set_listeners = (*self._set_listeners, listener)

        def unsubscribe() -> None:
            with self._lock:
                self._set_listeners = tuple(f for f in self._set_listeners if f is not listener)

        return unsubscribe

    @property
    def mode(self) -> str:
        """The read policy in force in the current thread/task ("strict" or "fallback").

        Assigning it (``cache.mode = "strict"``) changes the default for every thread; it is checked.
        """
        return (self._mode_var.get() or self._mode).value

    @mode.setter
    def mode(self, value: str) -> None:
        self._mode = check_mode(value, "cache.mode = ...: Cache")

    @property
    def paused(self) -> bool:
        return self._pause_var.get()

    @property
    def wait_for_sync_on_start(self) -> bool:
        return self._options.wait_for_sync

    @property
    def sync_timeout(self) -> float:
        return self._options.sync_timeout

    @property
    def read_your_writes_timeout(self) -> float:
        return self._options.read_your_writes_timeout

    @property
    def resources(self) -> list[Any] | None:
        return self._options.resources

    def settings_for(self, cls: Any) -> KindSettings:
        """The kind's effective settings; those of ``PartialObjectMetadata.of(Kind)`` are Kind's,
        metadata only."""
        cls = getattr(cls, "__editable_class__", cls)  # a cached object's read-only class is its kind's
        settings = self._settings.get(cls)
        if settings is None:  # options never change: compute once per kind
            if is_metadata_class(cls):  # its own per_resource entry, else its kind's
                of = cls if cls in self._options.per_resource else cls.metadata_of
                settings = attrs.evolve(kind_settings(self._options, of), metadata_only=True)
            else:
                settings = kind_settings(self._options, cls)
            self._settings[cls] = settings
        return settings

    def _cached_class(self, cls: Any) -> Any:
        """The class the informer of ``cls`` stores: ``PartialObjectMetadata.of(cls)`` for a kind
        cached as metadata only, else ``cls``."""
        if self.settings_for(cls).metadata_only and not is_metadata_class(cls):
            return metadata_class(cls)
        return cls

    def __repr__(self) -> str:
        kinds = (
            "all kinds (on first use)" if self.resources is None else [getattr(c, "kind", c) for c in self.resources]
        )
        return (
            f"Cache(resources={kinds}, namespace={self.namespace!r}, mode={self._mode.value!r}, "
            f"enabled={self._options.enabled}, started={self._refcount > 0})"
        )

    # ------------------------------------------------------------------ owner
    def _adopt(self, owner: CacheOwner) -> Scopes:
        """The owner interface: called once by the Config that owns this cache (``Config(cache=...)``),
        which from then on drives the cache only through the ``Scopes`` returned."""
        self._scopes.adopt(owner)
        return self._scopes

    @property
    def _refcount(self) -> int:
        """How many scopes (and ``start()`` calls) hold the cache started."""
        return self._scopes.count

    # ------------------------------------------------------------------- fork
    def _after_fork_in_child(self) -> None:
        """In a fork child (``_fork``: one thread, no I/O): a new registry lock and scopes state;
        the informers re-arm themselves, and resume at the next use (``resume_after_fork``)."""
        self._lock = threading.RLock()
        follower = getattr(self, "_follower", None)  # (None: forked while it was being made)
        if follower is not None:
            follower.after_fork()
        self._scopes.after_fork(self._lock)
        self._sync_cond = self._scopes.sync_cond

    def resume_after_fork(self) -> None:
        """In a process forked from the one that started this cache: start its informers' runs
        here (each resumes its watch from the objects it inherited: no LIST), through a transport
        of this process's own. Called at the next use of the cache (a read, a scope, ``status()``,
        ``get_informer``) and by ``cloudcoil_cache.after_fork()``; once per fork."""
        _fork.check()
        if self._fork_epoch == _fork.epoch:
            return
        with self._lock:
            if self._fork_epoch == _fork.epoch:
                return
            self._fork_epoch = _fork.epoch
            inherited = [i for i in self._informers.values() if i.inherited]
        if not inherited:
            return
        try:
            self._scopes.connect()  # the owner's new transport: the inherited one is the parent's
        except CloudcoilError as exc:
            log.warning("cache: cannot resume %d informers after fork: %s", len(inherited), exc)
            return
        for informer in inherited:
            informer.resume_after_fork()

    # --------------------------------------------------------------- registry
    def _key_for(self, cls: Any, namespace: str | None = None) -> InformerKey:
        settings = self.settings_for(cls)
        if namespace is None:
            namespace = self.namespace if cls.namespaced else None
        return InformerKey(cls, namespace, settings.label_selector, settings.field_selector)

    def _informers_for_kind_locked(self, cls: Any) -> list[Informer[Any]]:
        """Every informer of ``cls``: its one, or one per namespace of its set (made if needed)."""
        cls = self._cached_class(cls)
        if cls.namespaced and self.settings_for(cls).namespaces is not None:
            if cls not in self._spread:  # its informers are asked for: a set changed from now on makes them too
                self._spread[cls] = {}
                self._bind_set_reader_locked(cls)
            return [self._informer_for_kind_locked(cls, ns) for ns in self._set_of_locked(cls)]
        return [self._informer_for_kind_locked(cls)]

    def _informer_for_kind_locked(self, cls: Any, namespace: str | None = None) -> Informer[Any]:
        """The informer of ``cls`` (of its ``namespace``, for a kind over a set), made if needed."""
        cls = self._cached_class(cls)  # a kind cached as metadata only: its metadata's informer
        if namespace is None and cls.namespaced and self.settings_for(cls).namespaces is not None:
            found = self._informers_for_kind_locked(cls)
            if not found:
                raise ValueError(f"{cls.kind}: its set of namespaces is empty (add_namespace)")
            return found[0]
        informer = self._spread.get(cls, {}).get(namespace) if namespace else self._by_kind.get(cls)
        if informer is None:
            key = self._key_for(cls, namespace)
            settings = self.settings_for(cls)
            scopes = self._scopes
            informer = Informer(
                key,
                DecodingSource(_weakly(scopes.source_for, _no_source)),
                capacity=settings.max_items,
                resync_period=settings.resync_period,
                tuning=_metadata_tuning(self.tuning) if is_metadata_class(cls) else self.tuning,
                on_change=_weakly(scopes.wake, _nothing),
                max_staleness=settings.max_staleness,
                transform=settings.transform,
                handler_context=_weakly(scopes.handler_context, contextvars.Context),
            )
            informer.watch_error_handler = self._options.watch_error_handler
            for name, func in self._indexes.get(cls, {}).items():
                informer.store.add_index(name, func)
            self._informers[key] = informer
            if namespace is not None:  # one of a set: its reader, behind the kind's ``SetReader``
                self._spread[cls] = {**self._spread.get(cls, {}), namespace: informer}
                self._set_readers.setdefault(cls, {})[namespace] = CacheReader(
                    informer,
                    self,
                    facts=self._hit_facts(settings),
                    paused=self._pause_var,
                    run=self._scopes,
                )
                self._bind_set_reader_locked(cls)
                return informer
            self._by_kind[cls] = informer
            self._readers[cls] = (_CountingReader if self._options.count_hits else CacheReader)(
                informer,
                self,
                facts=self._hit_facts(settings),
                paused=self._pause_var,
                run=self._scopes,
            )
        return informer

    def _hit_facts(self, settings: KindSettings) -> CacheFacts:
        """The cache's facts when it serves a kind with ``settings`` (what a reader's hits are decided on)."""
        return CacheFacts(
            enabled=self._options.enabled,
            paused=False,
            started=True,
            kind_enabled=settings.enabled,
            kind_cached=True,
            lazy=self.resources is None,
        )

    def _bind_set_reader_locked(self, cls: Any) -> None:
        """The ``SetReader`` of ``cls`` (a kind over a set; bound once) handed its set's readers now."""
        reader = self._readers.get(cls)
        if not isinstance(reader, SetReader):
            reader = self._readers[cls] = SetReader(cls, self, count_gets=self._options.count_hits)
        per = self._set_readers.get(cls, {})
        wanted = self._sets.get(cls, ())
        reader.bind({ns: per[ns] for ns in wanted if ns in per}, whole=all(ns in per for ns in wanted))

    def _bind_discovered(self) -> None:
        """Before a start: each kind of ``resources`` still waiting for discovery gets its plural and
        scope from the owning Config's server (``client.bind()``: the GET its first call would make,
        never under the lock), then its informer. A kind the server does not serve raises the client's
        ``ConfigError`` ("... is not registered with the server ...") and the start fails."""
        if not self._discovered:
            return
        with self._lock:
            pending = list(self._discovered)
        owner = self._scopes.owner()
        for cls in pending:
            if awaits_discovery(cls):
                if owner is None:
                    raise CloudcoilError(
                        f"Cache(resources=[{cls.kind}]): the cache belongs to no Config, which {cls.kind} "
                        "needs to learn its plural and scope from the API server: create Config(cache=cache)"
                    )
                owner.client_for(cls, sync=True, cached=False).bind()
        with self._lock:
            for cls in pending:
                if cls in self._discovered:
                    self._discovered.remove(cls)
                    for informer in self._informers_for_kind_locked(cls):
                        if self._refcount > 0:
                            informer.start()  # another scope started the cache meanwhile

    def index(self, cls: Any, name: str, func: Callable[[Any], Any]) -> None:
        """Declare an index of ``cls``'s informer: ``func(obj)`` returns one key (str), an iterable
        of keys, or None (pure and fast: it runs under the store's lock). Reads ask it with
        ``Pod.list(index=(name, value))``; a field selector ``name=value`` is served by it too.
        Declared before the start, it is filled as the informer lists; declared later, it is built
        from the stored objects at once. The same declaration again is a no-op; another function
        under a declared name is a ``ValueError``."""
        check_index(cls, name, func, f"Cache.index({getattr(cls, 'kind', cls)!r}, {name!r}, ...)")
        cls = getattr(cls, "__editable_class__", cls)
        with self._lock:
            declared = self._indexes.setdefault(cls, {})
            if name in declared:
                if declared[name] is not func:
                    raise ValueError(f"Cache.index(): {cls.kind} already has an index named {name!r}")
                return
            declared[name] = func
            informer = self._by_kind.get(cls)
            if informer is not None:
                informer.store.add_index(name, func)
            for each in self._spread.get(cls, {}).values():
                each.store.add_index(name, func)

    def get_informer(
        self, cls: Any, sync: bool | None = None, namespace: str | None = None
    ) -> InformerView[Any] | None:
        """A new view over the one informer of ``cls`` (created if needed; started with the scope).

        For a kind cached as metadata only (``metadata_only``), or ``PartialObjectMetadata.of(Kind)``,
        the view is of the kind's metadata informer: its objects are ``PartialObjectMetadata.of(Kind)``.

        ``sync=True`` returns a ``SyncInformer`` (handlers on a thread), ``sync=False`` an
        ``AsyncInformer`` (handlers on the event loop); ``None`` picks async when called with a
        running event loop or while the cache is in async use, sync otherwise. ``namespace`` must
        lie inside the cache's scope: the view then sees that namespace only (same informer, no
        second watch). Returns None on a disabled (or paused) cache, as cloudcoil does.
        """
        if not self.enabled:
            return None
        self.resume_after_fork()
        check_resource_class(cls, "get_informer()")
        if not self.settings_for(cls).enabled:
            return None
        self._check_view_namespace(cls, namespace)
        if sync is None:
            loop = self._scopes.loop
            sync = not (running_loop() is not None or (loop is not None and self.started and not loop.is_closed()))
        if namespace is None and self.namespace_set(cls) is not None:
            raise ValueError(
                f"get_informer({cls.kind}): {cls.kind} is watched over a set of namespaces "
                f"{list(self.namespace_set(cls) or ())!r}, one informer each: name one (namespace=...)"
            )
        with self._lock:
            informer = self._informer_for_kind_locked(cls, namespace if self.namespace_set(cls) else None)
            if self._refcount > 0:
                informer.start()  # under _lock: ordered against the last scope's stop
        if sync:
            return SyncInformer(informer, namespace)
        scopes = weakref.ref(self._scopes)  # the view's lane lives in the informer: no cycle back to the cache

        def latest_loop() -> asyncio.AbstractEventLoop | None:
            alive = scopes()
            return None if alive is None else alive.loop

        return AsyncInformer(informer, latest_loop, namespace)

    def _check_view_namespace(self, cls: Any, namespace: str | None) -> None:
        """``get_informer``'s ``namespace``: inside the cache's scope (or set), of a namespaced kind."""
        if namespace is None:
            return
        if not isinstance(namespace, str) or not namespace:
            raise ValueError(f"get_informer(namespace={namespace!r}): expected a non-empty string")
        if not cls.namespaced:
            raise ValueError(f"get_informer({cls.kind}, namespace={namespace!r}): {cls.kind} is cluster-scoped")
        spread = self.namespace_set(cls)
        if spread is not None and namespace not in spread:
            raise ValueError(
                f"get_informer({cls.kind}, namespace={namespace!r}): the namespace is outside "
                f"the cache's set {list(spread)!r}"
            )
        if spread is None and not in_scope(self.namespace, namespace):
            raise ValueError(
                f"get_informer({cls.kind}, namespace={namespace!r}): the namespace is outside "
                f"the cache's scope (it watches only {self.namespace!r})"
            )

    def informer_for(self, cls: Any) -> Informer[Any] | None:
        """The informer that serves reads of ``cls``, if one exists (no side effect)."""
        return self._by_kind.get(getattr(cls, "__editable_class__", cls))

    def informers(self) -> list[Informer[Any]]:
        with self._lock:
            return list(self._informers.values())

    # -------------------------------------------------------------- lifecycle
    @property
    def started(self) -> bool:
        return self._refcount > 0

    def wait_synced(
        self, informers: list[Informer[Any]], timeout: float, cancel: threading.Event | None = None
    ) -> None:
        """Wait for every informer; a hard failure (401/403/404) of any one fails at once."""
        self._scopes.wait_synced(informers, timeout, cancel)

    # ------------------------------------------------------------------ reads
    def read_facts(self, cls: Any, namespace: str | None = None) -> tuple[CacheFacts, Informer[Any] | None, Mode]:
        """What a read of ``cls`` needs from the cache itself (memory only, no waiting, no lock):
        its facts, the informer that would answer, and the mode in force in this thread/task.
        ``namespace``: for a kind over a set, the namespace whose informer answers."""
        if self._fork_epoch != _fork.epoch:  # one global read: forked since, resume here first
            self.resume_after_fork()
        settings = self._settings.get(cls) or self.settings_for(cls)
        spread = self._spread.get(cls)
        if spread is not None:
            informer = spread.get(namespace) if namespace else None
        else:
            informer = self._by_kind.get(cls)  # clients pass the kind's class (never a read-only twin)
        # a kind cached as metadata only: its typed reads are not served (its informer holds metadata)
        partial = settings.metadata_only and informer is None and not is_metadata_class(cls)
        key = (self._pause_var.get(), self._scopes.count > 0, settings.enabled, informer is not None, partial)
        cache_facts = self._cache_facts.get(key)
        if cache_facts is None:  # a handful of combinations: made once each
            cache_facts = self._cache_facts[key] = CacheFacts(
                enabled=self._options.enabled,
                paused=key[0],
                started=key[1],
                kind_enabled=key[2],
                kind_cached=key[3],
                lazy=self.resources is None,
                metadata_only=partial,
            )
        return cache_facts, informer, self._mode_var.get() or self._mode

    def reader(self, cls: Any) -> CacheReader[Any] | None:
        """The one reader of ``cls`` in this cache (``CacheReader``: its hits, else the read
        policy), bound when its informer was made; None while the kind has no informer."""
        return self._readers.get(getattr(cls, "__editable_class__", cls))

    def sync_lazily(self, cls: Any) -> None:
        """``resources=None``: create and start the informer of ``cls`` and wait for its first sync.

        Errors are left for the policy to report (the read's next decision sees them).
        """
        with self._lock:
            if self._refcount == 0:
                return
            informers = self._informers_for_kind_locked(cls)
            for informer in informers:
                informer.start()
        try:
            for informer in informers:
                informer.wait_for_sync(self.sync_timeout)
        except CloudcoilError:
            pass  # a hard failure: recorded on the informer, reported by the policy

    def will_write(self, cls: Any) -> None:
        """A write of ``cls`` is about to be sent: from now on its informer's ``WriteTracker``
        remembers recent events, so a write whose event arrives before the writer notes it is not
        waited for."""
        if self._options.read_your_writes_timeout > 0:
            informer = self._writes_informer(cls)
            if informer is not None:
                informer.writes.will_write()
            for each in self._spread_of(cls).values():
                each.writes.will_write()

    def share_writes_with(self, other: Cache) -> Callable[[], None]:
        """Tell ``other`` about every write noted here from now on (a controller whose informers live
        in several caches: its reconcile writes through one Config, and reads through all of them).
        Returns the function that stops it."""
        with self._lock:
            self._write_peers = (*self._write_peers, other)

        def stop() -> None:
            with self._lock:
                self._write_peers = tuple(c for c in self._write_peers if c is not other)

        return stop

    def note_write(self, cls: Any, obj: Any, *, deleted: bool = False) -> None:
        """A write through this cache's Config: cached reads of it wait until the watch delivers it
        (the ``WriteTracker`` of the kind's informer, here and in every cache sharing the writes)."""
        for cache in (self, *self._write_peers):
            tracker = cache._tracker_for(cls, getattr(getattr(obj, "metadata", None), "namespace", None))
            if tracker is not None:
                tracker.note_object(obj, deleted=deleted)

    def note_delete(self, cls: Any, namespace: str | None, name: str) -> None:
        """A delete through this cache's Config answered with a Status: reads wait for the deletion."""
        for cache in (self, *self._write_peers):
            tracker = cache._tracker_for(cls, namespace)
            if tracker is not None:
                tracker.note_deleted(namespace, name)

    def _tracker_for(self, cls: Any, namespace: str | None = None) -> WriteTracker | None:
        if self._options.read_your_writes_timeout <= 0:
            return None
        informer = self._writes_informer(cls)
        if informer is None and namespace:
            informer = self._spread_of(cls).get(namespace)
        return None if informer is None else informer.writes

    def _spread_of(self, cls: Any) -> dict[str, Informer[Any]]:
        """The informers per namespace of a kind over a set (its metadata's, cached as metadata only)."""
        cls = getattr(cls, "__editable_class__", cls)
        found = self._spread.get(cls)
        if found is None and not is_metadata_class(cls) and self.settings_for(cls).metadata_only:
            found = self._spread.get(metadata_class(cls))
        return found or {}

    def _writes_informer(self, cls: Any) -> Informer[Any] | None:
        """The informer a write of ``cls`` shows in: the kind's, else its metadata's."""
        informer = self.informer_for(cls)
        if informer is None and not is_metadata_class(cls) and self.settings_for(cls).metadata_only:
            informer = self._by_kind.get(metadata_class(cls))
        return informer

    # ---------------------------------------------------------------- policies
    @contextlib.contextmanager
    def pause(self) -> Iterator[None]:
        """Reads in this block (this thread/task only) bypass the cache and go to the API server."""
        token = self._pause_var.set(True)
        try:
            yield
        finally:
            self._pause_var.reset(token)

    @contextlib.contextmanager
    def strict_mode(self) -> Iterator[None]:
        """Reads in this block (this thread/task only) must be served by the cache."""
        token = self._mode_var.set(Mode.STRICT)
        try:
            yield
        finally:
            self._mode_var.reset(token)

    @contextlib.contextmanager
    def fallback_mode(self) -> Iterator[None]:
        """Reads in this block (this thread/task only) the cache cannot serve go to the API server."""
        token = self._mode_var.set(Mode.FALLBACK)
        try:
            yield
        finally:
            self._mode_var.reset(token)

    # ------------------------------------------------------------------ status
    def status(self) -> CacheStatus:
        """Every informer's state; ``errors`` names each one that is not current (never silently empty)."""
        self.resume_after_fork()
        informers = self.informers()
        statuses = [i.status() for i in informers]
        errors: dict[str, str] = {}
        for st in statuses:
            if st.started and st.state != InformerState.CURRENT:
                name = f"{st.kind}@{st.namespace or '*'}"
                detail = st.last_error or st.state
                if st.state in (InformerState.DEGRADED, InformerState.STALE) and st.seconds_since_current is not None:
                    detail = f"{st.state} for {st.seconds_since_current:.0f}s: {detail}"
                errors[name] = detail
            elif st.last_error:
                errors[f"{st.kind}@{st.namespace or '*'}"] = st.last_error
        started = self.started
        return CacheStatus(
            enabled=self.enabled,
            started=started,
            ready=started and all(s.synced for s in statuses),
            mode=self.mode,
            resource_count=sum(s.object_count for s in statuses),
            informer_count=len(statuses),
            errors=errors,
            informers=statuses,
            reads=self.read_counts(),
        )

    def count_read(self, cls: Any, outcome: int) -> None:
        """Count a read the policy answered (``caching._reads.read``; ``caching._counts`` outcomes)."""
        self._read_counts.count(cls, outcome)

    def read_counts(self) -> dict[str, ReadCounts]:
        """The reads through this cache so far, per kind (``ReadCounts``; approximate under threads)."""
        readers = dict(self._readers)
        rows = []
        for cls in {*readers, *self._read_counts.kinds()}:
            row = self._read_counts.row(cls)
            reader = readers.get(cls)
            if reader is not None:
                row[HIT] += reader.hits
            rows.append((kind_label(cls), row))
        return merged(rows)

    def metrics_text(self) -> str:
        """The read counters in Prometheus' text format, for a web app's ``/metrics`` (no Manager,
        no dependency): ``cloudcoil_cache_reads_total{kind="Pod",outcome="hit"}`` and the other
        outcomes (miss, fallback, live, refused). Serve it as ``text/plain; version=0.0.4``."""
        return metrics_text(self.read_counts())

    # ----------------------------------------------- cloudcoil's lifecycle names
    def start(self) -> None:
        """Start every informer without a Config scope (one reference; pair with ``stop()``).

        The cache must belong to a Config (``Config(cache=...)``), which gives it its connection.
        Does not wait for the sync: call ``wait()``.
        """
        self._scopes.start()

    def stop(self) -> None:
        """Drop the reference taken by ``start()`` (the last one stops and joins every thread)."""
        self._scopes.release()

    def threads(self) -> list[threading.Thread]:
        """Every thread the cache runs now (each informer's reflector and handler lanes)."""
        return [thread for informer in self.informers() for thread in informer.threads()]

    def join(self, timeout: float | None = None) -> None:
        """Wait up to ``timeout`` (for all of them together) for the threads of a stopped cache to end
        (the last ``stop()`` already joins them within ``Tuning.stop_timeout``); at once while started."""
        if self.started:
            return
        deadline = deadline_after(timeout)
        for thread in self.threads():
            thread.join(remaining(deadline))

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every informer synced: True, or False on timeout (a hard failure raises)."""
        if not self._options.enabled:
            return True
        try:
            self.wait_synced(self.informers(), self.sync_timeout if timeout is None else timeout)
        except CacheSyncTimeout:
            return False
        return True

    def wait_for_cache_sync(self, timeout: float | None = None) -> bool:
        """``wait(timeout)`` under cloudcoil's name: True once every informer synced, False on timeout."""
        return self.wait(timeout)

    async def async_wait_for_sync(self, timeout: float | None = None) -> bool:
        """``async_wait(timeout)`` under cloudcoil's name."""
        return await self.async_wait(timeout)

    def ready(self) -> bool:
        """True if disabled; False if not started; else whether every informer has synced."""
        if not self._options.enabled:
            return True
        return self.started and all(i.has_synced() for i in self.informers())

    async def async_start(self) -> None:
        self._scopes.loop = asyncio.get_running_loop()
        await run_control(self.start)

    async def async_stop(self) -> None:
        await run_control(self.stop)

    async def async_wait(self, timeout: float | None = None) -> bool:
        return await run_control(self.wait, timeout)


#: every Cache alive in this process (``after_fork`` resumes them)
_caches: weakref.WeakSet[Cache] = weakref.WeakSet()


def after_fork() -> None:
    """Resume, in this process, every cache inherited across ``fork()`` (each informer watches
    again from the objects it inherited: no LIST). Optional: a cache resumes by itself at its next
    use (a read, a scope, ``status()``); call this from a server's post-fork hook (gunicorn's
    ``post_worker_init``, uWSGI's ``@postfork``, Celery's ``worker_process_init``) to resume before
    the first request, or for a process that only runs event handlers. Harmless anywhere else."""
    _fork.check()
    for cache in list(_caches):
        cache.resume_after_fork()


class _CountingReader(CacheReader[Any]):
    """A reader that counts its gets answered at once (``Cache(count_hits=True)``): a class of its
    own, so the readers of a cache that does not count pay nothing for it."""

    def hit(self, name: str, namespace: str | None = None) -> Any:
        found = CacheReader.hit(self, name, namespace)
        if found is not None:
            self.hits += 1
        return found


def _weakly(method: Callable[..., Any], if_gone: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` (a bound method) called through a weak reference to its object; ``if_gone`` once that is freed.

    What a cache hands to what it owns (its informers, their lanes) and what it keeps of its
    Config: the references back up are weak, so a Config, its cache and its informers hold no
    reference cycle. ``_gc.freeze()`` moves them into the collector's permanent generation,
    where a cycle would never be collected; without one, reference counting frees all of it
    once the application drops a closed Config (``tests/lifetimes``).
    """
    if not hasattr(method, "__self__"):
        return method  # a plain function holds no object of ours
    ref = weakref.WeakMethod(method)

    def call(*args: Any, **kwargs: Any) -> Any:
        bound = ref()
        return if_gone(*args, **kwargs) if bound is None else bound(*args, **kwargs)

    return call


#: The JSON a metadata-only informer's LIST pages (or streamed batches) are sized to: its objects are
#: small, and the room a page's parse leaves in the allocator is what stays resident after the sync
#: (``caching._page_size``); a quarter of ``Tuning.page_bytes``' default costs a few more requests.
METADATA_PAGE_BYTES = 100_000


def _metadata_tuning(tuning: Tuning) -> Tuning:
    """``tuning`` for a metadata-only informer: pages of at most ``METADATA_PAGE_BYTES``."""
    if tuning.page_bytes is None or tuning.page_bytes <= METADATA_PAGE_BYTES:
        return tuning
    return attrs.evolve(tuning, page_bytes=METADATA_PAGE_BYTES)


def _changed(current: tuple[str, ...], namespace: str, add: bool) -> tuple[str, ...]:
    """``current`` with ``namespace`` added (at the end) or removed."""
    if add:
        return current if namespace in current else (*current, namespace)
    return tuple(ns for ns in current if ns != namespace)


def _no_set() -> tuple[str, ...]:
    """The set of a garbage-collected cache."""
    return ()


def _no_more(*_: Any) -> list[Informer[Any]]:
    """What the settle step of a garbage-collected cache finds: nothing more to wait for."""
    return []


def _nothing(*_: Any) -> None:
    """What a call through a weak reference does once its object is gone."""


def _no_source(key: InformerKey, _: Decoder[Any]) -> Any:
    raise CloudcoilError(f"{key.describe()}: its cache was garbage-collected")
