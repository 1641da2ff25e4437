"""Cache: the informer registry of one Config, its reference-counted lifecycle, status and read policy."""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
import time
from typing import Any, Iterable, Iterator, Mapping

import attrs

from cloudcoil_cache._listwatch import ListWatch, parse_field_selector, parse_label_selector
from cloudcoil_cache.caching._informer import Informer, InformerKey, InformerStatus
from cloudcoil_cache.caching._options import (
    KindSettings,
    check_resource_class,
    kind_settings,
    validate_options,
)
from cloudcoil_cache.caching._reflector import Tuning
from cloudcoil_cache.caching._views import InformerView, SyncInformer
from cloudcoil_cache.errors import (
    APIError,
    CacheSyncTimeout,
    CacheUnavailableError,
    CloudcoilError,
    is_hard_failure,
)

__all__ = ["Cache", "CacheStatus", "CannotServe", "NeedsBlocking"]

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


class NeedsBlocking(Exception):
    """Internal: answering needs a blocking wait (a lazily created informer must sync first)."""


class CannotServe(Exception):
    """Internal: the cache cannot serve a read; ``reason`` is the user-facing explanation."""

    def __init__(self, reason: str, last_error: BaseException | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.last_error = last_error

    def to_error(self, what: str) -> CacheUnavailableError:
        return CacheUnavailableError(f"cannot serve {what} from the cache: {self.reason}",
                                     reason=self.reason, last_error=self.last_error)


class Cache:
    """Informers for a Config, started and stopped by its scopes.

    Args mirror api.md: ``resources``, ``namespaces`` (one or None), ``label_selector``,
    ``field_selector``, ``resync_period``, ``wait_for_sync``, ``sync_timeout``,
    ``max_items_per_resource``, ``per_resource``, ``mode`` ("strict"/"fallback"), ``enabled``.
    ``tuning`` (advanced) sets the reflectors' timing knobs (backoff, watch timeout, read timeout).

    Thread safety: every method may be called from any thread. ``_lock`` guards the registry and
    the reference count; it is never held while joining threads or waiting for a sync.
    """

    def __init__(self, resources: Iterable[Any] | None = None, namespaces: Iterable[str] | str | None = None,
                 label_selector: str | None = None, field_selector: str | None = None,
                 resync_period: float | None = 300, wait_for_sync: bool = True,
                 sync_timeout: float = 30, max_items_per_resource: int = 0,
                 per_resource: Mapping[Any, Mapping[str, Any] | None] | None = None,
                 mode: str = "fallback", enabled: bool = True, *, tuning: Tuning | None = None) -> None:
        self._options = validate_options(
            resources=resources, namespaces=namespaces, label_selector=label_selector,
            field_selector=field_selector, resync_period=resync_period, wait_for_sync=wait_for_sync,
            sync_timeout=sync_timeout, max_items_per_resource=max_items_per_resource,
            per_resource=per_resource, mode=mode, enabled=enabled)
        self.tuning = tuning or Tuning()
        self._settings: dict[Any, KindSettings] = {}
        self._lock = threading.RLock()
        self._informers: dict[InformerKey, Informer[Any]] = {}
        self._kinds: dict[type, InformerKey] = {}  # the informer that serves reads of a kind
        self._refcount = 0
        self._sync_cond = threading.Condition(threading.Lock())  # notified when any informer changes
        self._transport: Any = None
        self._loop: Any = None  # the event loop of the latest async scope (for async handlers)
        self._mode_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
            f"cloudcoil_cache_mode_{id(self)}", default=None)
        self._pause_var: contextvars.ContextVar[bool] = contextvars.ContextVar(
            f"cloudcoil_cache_paused_{id(self)}", default=False)
        for cls in self._options["resources"] or ():
            if self.settings_for(cls).enabled:
                self._informer_for_kind_locked(cls)

    # ---------------------------------------------------------------- options
    @property
    def enabled(self) -> bool:
        return self._options["enabled"]

    @property
    def namespace(self) -> str | None:
        """The one namespace the cache watches, or None for all."""
        return self._options["namespace"]

    @property
    def mode(self) -> str:
        """The read policy in force in the current thread/task."""
        return self._mode_var.get() or self._options["mode"]

    @property
    def paused(self) -> bool:
        return self._pause_var.get()

    @property
    def wait_for_sync_on_start(self) -> bool:
        return self._options["wait_for_sync"]

    @property
    def sync_timeout(self) -> float:
        return self._options["sync_timeout"]

    @property
    def resources(self) -> list[Any] | None:
        return self._options["resources"]

    def settings_for(self, cls: Any) -> KindSettings:
        settings = self._settings.get(cls)
        if settings is None:  # options never change: compute once per kind
            settings = self._settings[cls] = kind_settings(self._options, cls)
        return settings

    def __repr__(self) -> str:
        kinds = "all kinds (on first use)" if self.resources is None else \
            [getattr(c, "kind", c) for c in self.resources]
        return (f"Cache(resources={kinds}, namespace={self.namespace!r}, mode={self._options['mode']!r}, "
                f"enabled={self.enabled}, started={self._refcount > 0})")

    # ---------------------------------------------------------------- binding
    def _bind(self, transport: Any) -> None:
        """Attach the transport of the Config that owns this cache (once)."""
        with self._lock:
            if self._transport is not None and self._transport is not transport:
                raise CloudcoilError("this Cache already belongs to another Config; give each Config its own")
            self._transport = transport

    def _source_for(self, key: InformerKey) -> ListWatch[Any]:
        if self._transport is None:
            raise CloudcoilError("the cache is not attached to a Config")
        return ListWatch(self._transport, key.cls, namespace=key.namespace,
                         label_selector=key.label_selector, field_selector=key.field_selector)

    # --------------------------------------------------------------- registry
    def _key_for(self, cls: Any) -> InformerKey:
        settings = self.settings_for(cls)
        namespace = self.namespace if cls.namespaced else None
        return InformerKey(cls, namespace, settings.label_selector, settings.field_selector)

    def _informer_for_kind_locked(self, cls: Any) -> Informer[Any]:
        key = self._kinds.get(cls) or self._key_for(cls)
        informer = self._informers.get(key)
        if informer is None:
            settings = self.settings_for(cls)
            informer = Informer(key, self._source_for, capacity=settings.max_items,
                                resync_period=settings.resync_period, tuning=self.tuning,
                                on_change=self._wake)
            self._informers[key] = informer
            self._kinds[cls] = key
        return informer

    def get_informer(self, cls: Any, sync: bool = True) -> InformerView[Any]:
        """A view over the one informer of ``cls`` (created if needed; started with the scope).

        ``sync=True`` returns a ``SyncInformer`` (handlers on threads); ``sync=False`` an async
        informer (coroutine handlers on the event loop).
        """
        if not self.enabled:
            raise CloudcoilError("the cache is disabled (Cache(enabled=False))")
        check_resource_class(cls, "get_informer()")
        if not self.settings_for(cls).enabled:
            raise CloudcoilError(f"caching of {cls.kind} is disabled by per_resource")
        with self._lock:
            informer = self._informer_for_kind_locked(cls)
            if self._refcount > 0:
                informer.start()  # under _lock: ordered against the last scope's stop
        if sync:
            return SyncInformer(informer)
        from cloudcoil_cache.caching._async import AsyncInformer
        return AsyncInformer(informer, lambda: self._loop)

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
        if not self.enabled:
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
            if (self._options["mode"] == "strict" or not isinstance(exc, CloudcoilError)
                    or isinstance(exc, SyncCancelled)):
                self._release()
                raise
            log.warning("cache: continuing without a synced cache (fallback mode): %s", exc)

    def _release(self) -> None:
        """One scope fewer: the last stops every informer and joins all their threads."""
        if not self.enabled:
            return
        with self._lock:
            if self._refcount == 0:
                return
            self._refcount -= 1
            if self._refcount:
                return
            runs = [(informer, informer.signal_stop()) for informer in self._informers.values()]
        for informer, run in runs:  # joined outside the lock; only this run's threads
            informer.join(run)

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
    def informer_for_read(self, cls: Any, namespace: str | None, *, all_namespaces: bool,
                          label_selector: str | None, field_selector: str | None,
                          for_list: bool, lazy_start: bool = True) -> Informer[Any]:
        """The informer that can serve this read, or ``CannotServe`` naming why not.

        Pure memory work, except for a kind seen for the first time with ``resources=None``: its
        informer is created, started and awaited here (``lazy_start=False`` raises
        ``NeedsBlocking`` instead, so an async caller can move the wait off the event loop).
        """
        if not self.enabled:
            raise CannotServe("the cache is disabled")
        settings = self.settings_for(cls)
        if not settings.enabled:
            raise CannotServe(f"kind not cached: caching of {cls.kind} is disabled by per_resource")
        with self._lock:
            if self._refcount == 0:
                raise CannotServe("the cache is not started (enter a `with config:` scope)")
            known = cls in self._kinds
            lazy = self.resources is None
            if not known and not lazy:
                raise CannotServe(f"kind not cached: {cls.kind} is not in Cache(resources=...)")
            if not known and not lazy_start:
                raise NeedsBlocking()
            informer = self._informer_for_kind_locked(cls)
        if lazy and not informer.has_synced() and informer.last_error is None:
            # resources=None: the first read of a kind starts its informer and waits for its sync.
            if not lazy_start:
                raise NeedsBlocking()
            with self._lock:
                if self._refcount == 0:
                    raise CannotServe("the cache is not started (enter a `with config:` scope)")
                informer.start()
            try:
                informer.sync_or_raise(self.sync_timeout)
            except CacheSyncTimeout as exc:
                raise CannotServe(f"not synced yet: {exc}", informer.last_error) from None
            except CloudcoilError as exc:
                raise CannotServe(f"informer failing: {exc}", exc) from None
        key = informer.key
        if cls.namespaced and key.namespace is not None:
            if all_namespaces or not namespace:
                raise CannotServe(f"namespace outside the cache: the cache watches only {key.namespace!r}, "
                                  "not all namespaces")
            if namespace != key.namespace:
                raise CannotServe(f"namespace outside the cache: {namespace!r} (the cache watches "
                                  f"{key.namespace!r})")
        if not informer.has_synced():
            err = informer.last_error
            if err is not None:
                raise CannotServe(f"informer failing: {type(err).__name__}: {err}", err)
            raise CannotServe(f"not synced yet: {key.describe()}")
        err = informer.last_error
        if err is not None:
            raise CannotServe(f"informer failing: {type(err).__name__}: {err}", err)
        if not for_list:
            return informer  # a get is answered by key: what the informer holds matches its selector
        _check_selector_servable(key, label_selector, field_selector)
        if not informer.complete:
            raise CannotServe(informer.incomplete_reason())
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
        token = self._mode_var.set("strict")
        try:
            yield
        finally:
            self._mode_var.reset(token)

    @contextlib.contextmanager
    def fallback_mode(self) -> Iterator[None]:
        """Reads in this block (this thread/task only) the cache cannot serve go to the API server."""
        token = self._mode_var.set("fallback")
        try:
            yield
        finally:
            self._mode_var.reset(token)

    # ------------------------------------------------------------------ status
    def status(self) -> CacheStatus:
        informers = self.informers()
        statuses = [i.status() for i in informers]
        errors = {f"{s.kind}@{s.namespace or '*'}": s.last_error for s in statuses if s.last_error}
        started = self.started
        return CacheStatus(
            enabled=self.enabled, started=started,
            ready=started and all(s.synced for s in statuses),
            mode=self.mode, resource_count=sum(s.object_count for s in statuses),
            informer_count=len(statuses), errors=errors, informers=statuses)


def _check_selector_servable(key: InformerKey, label_selector: str | None,
                             field_selector: str | None) -> None:
    """Serve selectors in memory when the informer has none, or exactly the same one."""
    # Compared as sets of requirements: "a=1,b=2" and "b=2, a=1" are the same selector.
    pairs = ((key.label_selector, label_selector, "label",
              lambda t: frozenset(parse_label_selector(t).requirements)),
             (key.field_selector, field_selector, "field",
              lambda t: frozenset(parse_field_selector(t).terms)))
    for have, want, what, parse in pairs:
        if have and parse(have) != parse(want):
            raise CannotServe(f"selector not servable: the informer watches only {what} selector "
                              f"{have!r}, the read asks for {(want or 'everything')!r}")



def _naming(err: BaseException, what: str) -> BaseException:
    """The same error, its message prefixed with the informer it came from (type and fields kept)."""
    if isinstance(err, APIError):
        named = type(err)(f"{what}: {err.message}", code=err.code, reason=err.reason, status=err.status,
                          retry_after=err.retry_after)
        named.__cause__ = err
        return named
    return err
