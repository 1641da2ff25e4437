"""Cache: the informer registry of one Config, its reference-counted lifecycle, status and read policy."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
import time
import weakref
from typing import Any, Callable, Iterable, Iterator, Mapping

import attrs

from cloudcoil_cache._threads import run_control
from cloudcoil_cache._listwatch import ListWatch
from cloudcoil_cache.caching._informer import Informer, InformerKey, InformerStatus
from cloudcoil_cache.caching._options import (
    CacheOptions,
    KindSettings,
    check_mode,
    check_resource_class,
    kind_settings,
    validate_options,
)
from cloudcoil_cache.caching._policy import CacheFacts, Mode, in_scope
from cloudcoil_cache.caching._reflector import Tuning
from cloudcoil_cache.caching._views import InformerView, SyncInformer
from cloudcoil_cache.caching._writes import WriteTracker
from cloudcoil_cache.errors import (
    APIError,
    CacheSyncTimeout,
    CloudcoilError,
    is_hard_failure,
)

__all__ = ["Cache", "CacheStatus"]

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


class SyncCancelled(CloudcoilError):
    """The wait for a sync was cancelled (an async scope's task was cancelled)."""


class Cache:
    """Informers for a Config, started and stopped by its scopes.

    Args mirror api.md: ``resources``, ``namespaces`` (one or None), ``label_selector``,
    ``field_selector``, ``resync_period``, ``wait_for_sync``, ``sync_timeout``,
    ``max_items_per_resource``, ``per_resource``, ``mode`` ("strict"/"fallback"), ``enabled``,
    ``max_staleness``, ``read_your_writes_timeout``, ``transform``. ``tuning`` (advanced) sets the
    reflectors' timing knobs (backoff, watch timeout, read timeout, clock).

    The Cache keeps the registry of informers and their reference-counted lifecycle; a read is
    answered by ``caching._reads`` (the pure read policy ``caching._policy.decide`` on the facts).

    Thread safety: every method may be called from any thread. ``_lock`` guards the registry and
    the reference count; it is never held while joining threads or waiting for a sync.
    """

    def __init__(self, resources: Iterable[Any] | None = None, namespaces: Iterable[str] | str | None = None,
                 label_selector: str | None = None, field_selector: str | None = None,
                 resync_period: float | None = 300, wait_for_sync: bool = True,
                 sync_timeout: float = 30, max_items_per_resource: int = 0,
                 per_resource: Mapping[Any, Mapping[str, Any] | None] | None = None,
                 mode: str = "fallback", enabled: bool = True, max_staleness: float | None = 60,
                 read_your_writes_timeout: float = 2.0, transform: Callable[[Any], Any] | None = None, *,
                 tuning: Tuning | None = None) -> None:
        self._options: CacheOptions = validate_options(
            resources=resources, namespaces=namespaces, label_selector=label_selector,
            field_selector=field_selector, resync_period=resync_period, wait_for_sync=wait_for_sync,
            sync_timeout=sync_timeout, max_items_per_resource=max_items_per_resource,
            per_resource=per_resource, mode=mode, enabled=enabled, max_staleness=max_staleness,
            read_your_writes_timeout=read_your_writes_timeout, transform=transform)
        self._mode: Mode = self._options.mode
        self.tuning = tuning or Tuning()
        self._settings: dict[Any, KindSettings] = {}
        self._lock = threading.RLock()
        self._informers: dict[InformerKey, Informer[Any]] = {}
        self._write_peers: tuple[Cache, ...] = ()  # caches told about this cache's Config's writes
        self._by_kind: dict[type, Informer[Any]] = {}  # the informer that serves reads of a kind (read lock-free)
        self._cache_facts: dict[tuple[bool, bool, bool, bool], CacheFacts] = {}
        self._refcount = 0
        self._sync_cond = threading.Condition(threading.Lock())  # notified when any informer changes
        self._transport: Any = None
        self._initialize: Callable[[], Any] | None = None
        self._handler_context: Callable[[], contextvars.Context] = contextvars.Context
        self._loop: Any = None  # the event loop of the latest async scope (for async handlers)
        self._mode_var: contextvars.ContextVar[Mode | None] = contextvars.ContextVar(
            f"cloudcoil_cache_mode_{id(self)}", default=None)
        self._pause_var: contextvars.ContextVar[bool] = contextvars.ContextVar(
            f"cloudcoil_cache_paused_{id(self)}", default=False)
        for cls in self._options.resources or ():
            if self.settings_for(cls).enabled:
                self._informer_for_kind_locked(cls)

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
        """The one namespace the cache watches, or None for all."""
        return self._options.namespace

    @property
    def mode(self) -> str:
        """The read policy in force in the current thread/task ("strict" or "fallback").

        Assigning it (``cache.mode = "strict"``) changes the default for every thread; it is checked.
        """
        return (self._mode_var.get() or self._mode).value

    @mode.setter
    def mode(self, value: str) -> None:
        self._mode = check_mode(value, "cache.mode = ...: Cache")

    def _mode_now(self) -> Mode:
        return self._mode_var.get() or self._mode

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
        cls = getattr(cls, "__editable_class__", cls)  # a cached object's read-only class is its kind's
        settings = self._settings.get(cls)
        if settings is None:  # options never change: compute once per kind
            settings = self._settings[cls] = kind_settings(self._options, cls)
        return settings

    def __repr__(self) -> str:
        kinds = "all kinds (on first use)" if self.resources is None else \
            [getattr(c, "kind", c) for c in self.resources]
        return (f"Cache(resources={kinds}, namespace={self.namespace!r}, mode={self._mode.value!r}, "
                f"enabled={self._options.enabled}, started={self._refcount > 0})")

    # ---------------------------------------------------------------- binding
    def _attach(self, initialize: Callable[[], Any],
                handler_context: Callable[[], contextvars.Context] | None = None) -> None:
        """The owning Config's discovery (called by ``start()`` before the first scope), and the
        context its handlers run in (a fresh one per lane start: the Config's scope, nothing else).

        ``initialize`` is held until the transport is bound (``Cache.start()`` of a cache whose
        Config the application did not keep still discovers through it, as in cloudcoil), then
        dropped; the handler context is held weakly (the Config owns the cache, not the reverse:
        see ``_weakly``).
        """
        self._initialize = initialize
        if handler_context is not None:
            self._handler_context = _weakly(handler_context, contextvars.Context)

    def _context_for_handlers(self) -> contextvars.Context:
        return self._handler_context()

    def _bind(self, transport: Any) -> None:
        """Attach the transport of the Config that owns this cache (once)."""
        with self._lock:
            if self._transport is not None and self._transport is not transport:
                raise CloudcoilError("this Cache already belongs to another Config; give each Config its own")
            self._transport = transport
            self._initialize = None  # bound: no reference back to the Config from here on

    def _source_for(self, key: InformerKey) -> ListWatch[Any]:
        if self._transport is None:
            raise CloudcoilError("the cache is not attached to a Config")
        informer = self._informers.get(key)  # registered before it starts (a GIL-atomic read)
        return ListWatch(self._transport, key.cls, namespace=key.namespace,
                         label_selector=key.label_selector, field_selector=key.field_selector,
                         structure=None if informer is None else informer.structure_function(),
                         refuse_mismatched=True, line_timeouts=True, max_list_bytes=self.tuning.max_list_bytes)

    # --------------------------------------------------------------- registry
    def _key_for(self, cls: Any) -> InformerKey:
        settings = self.settings_for(cls)
        namespace = self.namespace if cls.namespaced else None
        return InformerKey(cls, namespace, settings.label_selector, settings.field_selector)

    def _informer_for_kind_locked(self, cls: Any) -> Informer[Any]:
        informer = self._by_kind.get(cls)
        if informer is None:
            key = self._key_for(cls)
            settings = self.settings_for(cls)
            informer = Informer(key, _weakly(self._source_for, _no_source), capacity=settings.max_items,
                                resync_period=settings.resync_period, tuning=self.tuning,
                                on_change=_weakly(self._wake, _nothing), max_staleness=settings.max_staleness,
                                transform=settings.transform,
                                handler_context=_weakly(self._context_for_handlers, contextvars.Context))
            self._informers[key] = informer
            self._by_kind[cls] = informer
        return informer

    def get_informer(self, cls: Any, sync: bool | None = None,
                     namespace: str | None = None) -> InformerView[Any] | None:
        """A new view over the one informer of ``cls`` (created if needed; started with the scope).

        ``sync=True`` returns a ``SyncInformer`` (handlers on a thread), ``sync=False`` an
        ``AsyncInformer`` (handlers on the event loop); ``None`` picks async when called with a
        running event loop or while the cache is in async use, sync otherwise. ``namespace`` must
        lie inside the cache's scope: the view then sees that namespace only (same informer, no
        second watch). Returns None on a disabled (or paused) cache, as cloudcoil does.
        """
        if not self.enabled:
            return None
        check_resource_class(cls, "get_informer()")
        if not self.settings_for(cls).enabled:
            return None
        if namespace is not None:
            if not isinstance(namespace, str) or not namespace:
                raise ValueError(f"get_informer(namespace={namespace!r}): expected a non-empty string")
            if not cls.namespaced:
                raise ValueError(f"get_informer({cls.kind}, namespace={namespace!r}): {cls.kind} is "
                                 "cluster-scoped")
            if not in_scope(self.namespace, namespace):
                raise ValueError(f"get_informer({cls.kind}, namespace={namespace!r}): the namespace is outside "
                                 f"the cache's scope (it watches only {self.namespace!r})")
        if sync is None:
            sync = not (_running_loop() is not None or (self._loop is not None and self.started
                                                         and not self._loop.is_closed()))
        with self._lock:
            informer = self._informer_for_kind_locked(cls)
            if self._refcount > 0:
                informer.start()  # under _lock: ordered against the last scope's stop
        if sync:
            return SyncInformer(informer, namespace)
        from cloudcoil_cache.caching._async import AsyncInformer
        this = weakref.ref(self)  # the view's lane lives in the informer: no cycle back to the cache

        def loop() -> Any:
            cache = this()
            return None if cache is None else cache._loop

        return AsyncInformer(informer, loop, namespace)

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

    def _acquire(self, cancel: threading.Event | None = None) -> None:
        """One more scope: the first starts every informer and (optionally) waits for their sync.

        On a failed wait in strict mode the scope is not entered: the reference is dropped again
        (stopping the informers if it was the only one) and the error is raised. Setting ``cancel``
        (an async scope's task was cancelled) abandons the wait the same way.
        """
        if not self._options.enabled:
            return
        if cancel is not None and cancel.is_set():
            raise SyncCancelled("the scope was cancelled before its cache started")
        with self._lock:
            self._refcount += 1
            informers = list(self._informers.values())
            if self._refcount == 1:
                # Starting (and, in _release, stopping) under _lock: a scope entering while the
                # last one leaves sees either the old run fully told to stop, or its own run.
                for informer in informers:
                    informer.start()
        if not self.wait_for_sync_on_start:
            return
        # Every scope waits, not only the first: a scope entered while another thread's first
        # scope is still syncing must not see an unsynced cache either.
        try:
            self.wait_synced(informers, self.sync_timeout, cancel)
        except BaseException as exc:
            if (self._mode is Mode.STRICT or not isinstance(exc, CloudcoilError)
                    or isinstance(exc, SyncCancelled)):
                self._release()
                raise
            log.warning("cache: continuing without a synced cache (fallback mode): %s", exc)

    def _release(self) -> None:
        """One scope fewer: the last stops every informer and joins all their threads."""
        if not self._options.enabled:
            return
        with self._lock:
            if self._refcount == 0:
                return
            self._refcount -= 1
            if self._refcount:
                return
            runs = [(informer, informer.signal_stop()) for informer in self._informers.values()]
        for informer, run in runs:  # joined outside the lock; only this run's threads, bounded
            informer.join(run, self.tuning.stop_timeout)

    def _close(self) -> None:
        """The owning Config was closed (for good): forget the handlers, so that what they hold of
        the application (often the Config itself) is no reference cycle through the cache."""
        with self._lock:
            self._initialize = None
            if self._refcount:
                return  # still started (Cache.start()): its handlers still run
            informers = list(self._informers.values())
        for informer in informers:
            informer.forget_handlers()

    def wait_synced(self, informers: list[Informer[Any]], timeout: float,
                    cancel: threading.Event | None = None) -> None:
        """Wait for every informer; a hard failure (401/403/404) of any one fails at once."""
        deadline = time.monotonic() + timeout
        with self._sync_cond:
            while True:
                if cancel is not None and cancel.is_set():
                    raise SyncCancelled("the wait for the cache sync was cancelled")
                pending = [i for i in informers if not i.has_synced()]
                if not pending:
                    return
                for informer in pending:
                    err = informer.last_error
                    if err is not None and is_hard_failure(err):
                        raise _naming(err, informer.key.describe())
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    names = ", ".join(i.key.describe() for i in pending)
                    errors = "; ".join(f"{i.key.describe()}: {i.last_error}" for i in pending
                                       if i.last_error)
                    raise CacheSyncTimeout(f"cache did not sync within {timeout:g}s: {names}"
                                           + (f" (last errors: {errors})" if errors else ""))
                self._sync_cond.wait(remaining)

    def _wake(self) -> None:
        """Wake sync waiters (an informer synced or failed, or a wait was cancelled)."""
        with self._sync_cond:
            self._sync_cond.notify_all()

    # ------------------------------------------------------------------ reads
    def read_facts(self, cls: Any) -> tuple[CacheFacts, Informer[Any] | None, Mode]:
        """What a read of ``cls`` needs from the cache itself (memory only, no waiting, no lock):
        its facts, the informer that would answer, and the mode in force in this thread/task."""
        settings = self._settings.get(cls) or self.settings_for(cls)
        informer = self._by_kind.get(cls)  # clients pass the kind's class (never a read-only twin)
        key = (self._pause_var.get(), self._refcount > 0, settings.enabled, informer is not None)
        cache_facts = self._cache_facts.get(key)
        if cache_facts is None:  # a handful of combinations: made once each
            cache_facts = self._cache_facts[key] = CacheFacts(
                enabled=self._options.enabled, paused=key[0], started=key[1], kind_enabled=key[2],
                kind_cached=key[3], lazy=self.resources is None)
        return cache_facts, informer, self._mode_var.get() or self._mode

    def sync_lazily(self, cls: Any) -> None:
        """``resources=None``: create and start the informer of ``cls`` and wait for its first sync.

        Errors are left for the policy to report (the read's next decision sees them).
        """
        with self._lock:
            if self._refcount == 0:
                return
            informer = self._informer_for_kind_locked(cls)
            informer.start()
        try:
            informer.wait_for_sync(self.sync_timeout)
        except CloudcoilError:
            pass  # a hard failure: recorded on the informer, reported by the policy

    def will_write(self, cls: Any) -> None:
        """A write of ``cls`` is about to be sent: from now on its informer's ``WriteTracker``
        remembers recent events, so a write whose event arrives before the writer notes it is not
        waited for."""
        if self._options.read_your_writes_timeout > 0:
            informer = self.informer_for(cls)
            if informer is not None:
                informer.writes.will_write()

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
            tracker = cache._tracker_for(cls)
            if tracker is not None:
                tracker.note_object(obj, deleted=deleted)

    def note_delete(self, cls: Any, namespace: str | None, name: str) -> None:
        """A delete through this cache's Config answered with a Status: reads wait for the deletion."""
        for cache in (self, *self._write_peers):
            tracker = cache._tracker_for(cls)
            if tracker is not None:
                tracker.note_deleted(namespace, name)

    def _tracker_for(self, cls: Any) -> WriteTracker | None:
        if self._options.read_your_writes_timeout <= 0:
            return None
        informer = self.informer_for(cls)
        return None if informer is None else informer.writes

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
        informers = self.informers()
        statuses = [i.status() for i in informers]
        errors: dict[str, str] = {}
        for st in statuses:
            if st.started and st.state != "current":
                name = f"{st.kind}@{st.namespace or '*'}"
                detail = st.last_error or st.state
                if st.state in ("degraded", "stale") and st.seconds_since_current is not None:
                    detail = f"{st.state} for {st.seconds_since_current:.0f}s: {detail}"
                errors[name] = detail
            elif st.last_error:
                errors[f"{st.kind}@{st.namespace or '*'}"] = st.last_error
        started = self.started
        return CacheStatus(
            enabled=self.enabled, started=started,
            ready=started and all(s.synced for s in statuses),
            mode=self.mode, resource_count=sum(s.object_count for s in statuses),
            informer_count=len(statuses), errors=errors, informers=statuses)

    # ----------------------------------------------- cloudcoil's lifecycle names
    def start(self) -> None:
        """Start every informer without a Config scope (one reference; pair with ``stop()``).

        The cache must belong to a Config (``Config(cache=...)``), which gives it its connection.
        Does not wait for the sync: call ``wait()``.
        """
        if self._transport is None and self._initialize is not None:
            self._initialize()  # discovery, as cloudcoil's start() does
        if self._transport is None:
            raise CloudcoilError("Cache.start(): the cache belongs to no Config; create "
                                 "Config(cache=cache) first (or use `with config:`)")
        with self._lock:
            if not self._options.enabled:
                return
            self._refcount += 1
            if self._refcount == 1:
                for informer in self._informers.values():
                    informer.start()

    def stop(self) -> None:
        """Drop the reference taken by ``start()`` (the last one stops and joins every thread)."""
        self._release()

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
        self._loop = asyncio.get_running_loop()
        await run_control(self.start)

    async def async_stop(self) -> None:
        await run_control(self.stop)

    async def async_wait(self, timeout: float | None = None) -> bool:
        return await run_control(self.wait, timeout)


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


def _nothing(*_: Any) -> None:
    """What a call through a weak reference does once its object is gone."""


def _no_source(key: InformerKey) -> Any:
    raise CloudcoilError(f"{key.describe()}: its cache was garbage-collected")


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _naming(err: BaseException, what: str) -> BaseException:
    """The same error, its message prefixed with the informer it came from (type and fields kept)."""
    if isinstance(err, APIError):
        named = type(err)(f"{what}: {err.message}", code=err.code, reason=err.reason, status=err.status,
                          retry_after=err.retry_after)
        named.__cause__ = err
        return named
    return err
