"""The seam between a Cache and the Config that owns it: the CacheOwner protocol and the scopes it drives."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
import weakref
from typing import Any, Callable, Literal, Protocol

from cloudcoil_cache import _fork
from cloudcoil_cache._listwatch import ListWatch
from cloudcoil_cache._runnable import deadline_after, remaining
from cloudcoil_cache.caching._informer import Decoder, Informer, InformerKey
from cloudcoil_cache.caching._options import CacheOptions
from cloudcoil_cache.caching._reflector import Tuning
from cloudcoil_cache.errors import APIError, CacheSyncTimeout, CloudcoilError, ConfigError, is_hard_failure

__all__ = ["CacheOwner", "Scopes", "SyncCancelled"]

log = logging.getLogger(__name__)


class SyncCancelled(CloudcoilError):
    """The wait for a sync was cancelled (an async scope's task was cancelled)."""


class CacheOwner(Protocol):
    """What a Cache asks of the Config that owns it (``Config(cache=...)``), and nothing else.

    The Config, for its part, drives the cache only through the ``Scopes`` that ``Cache._adopt``
    returns it: ``bind``, ``acquire``/``release`` per scope, ``loop``, ``wake`` and ``close``.
    """

    @property
    def transport(self) -> Any:
        """The owner's connection, discovered and built on first use (``Cache.start()`` outside any
        scope reaches the API server through it, as cloudcoil's ``start()`` does)."""

    def handler_context(self) -> contextvars.Context:
        """A fresh context for a handler lane: the owner's scope active, nothing of any thread's."""

    def client_for(self, cls: type[Any], sync: Literal[True] = ..., cached: bool | None = ...) -> Any:
        """A client of ``cls``: its ``bind()`` gives a kind listed in ``Cache(resources=...)`` that
        still waits for discovery its plural and scope, when the cache starts."""


class Scopes:
    """A cache's reference-counted run, as the scopes of its owning Config drive it.

    The first ``acquire`` starts every informer and (optionally) waits for their sync; the last
    ``release`` stops them and joins all their threads. It also holds what the cache has of its
    owner: the owner itself until its transport is bound (so that ``Cache.start()`` of a cache
    whose Config the application did not keep still connects through it), weakly after (the
    Config owns the cache, not the reverse: see ``_gc``), and the event loop of the latest async
    scope (for async handlers).

    Thread safety: every method may be called from any thread. ``lock`` (the cache's registry
    lock, shared) guards ``count`` and the owner fields; it is never held while joining threads
    or waiting for a sync. ``sync_cond`` is notified whenever an informer's sync or error changes.
    """

    def __init__(
        self,
        lock: threading.RLock,
        informers: dict[InformerKey, Informer[Any]],
        options: CacheOptions,
        tuning: Callable[[], Tuning],
        strict: Callable[[], bool],
        prepare: Callable[[], None] = lambda: None,
        resume: Callable[[], None] = lambda: None,
        settle: Callable[[list[Informer[Any]]], list[Informer[Any]]] = lambda _: [],
    ) -> None:
        self.lock = lock
        self._informers = informers  # the cache's registry (the same dict), read under ``lock``
        self._options = options
        self._tuning = tuning  # the cache's Tuning as it is now (``cache.tuning`` is assignable)
        self._strict = strict  # whether a failed sync refuses the scope (the cache's default mode)
        self._prepare = prepare  # before a start: the cache makes the informers of kinds found by discovery
        self._resume = resume  # before a start: the cache resumes informers inherited across fork here
        #: after a wait: the informers to wait for next (the set a NamespaceSelector made meanwhile), or []
        self._settle = settle
        self.count = 0
        self.sync_cond = threading.Condition(threading.Lock())
        self._owner: CacheOwner | None = None  # held until the transport is bound
        self._owner_ref: Callable[[], CacheOwner | None] = lambda: None
        self._transport: Any = None
        #: the event loop of the latest async scope (the default loop of async handlers)
        self.loop: asyncio.AbstractEventLoop | None = None

    def after_fork(self, lock: threading.RLock) -> None:
        """In a fork child: the cache's new registry lock, a new condition, and no transport (the
        inherited one is the parent's: the owner builds another at the next ``connect()``)."""
        self.lock = lock
        self.sync_cond = threading.Condition(threading.Lock())
        self._transport = None
        self._owner = self._owner or self._owner_ref()
        self.loop = None  # an event loop does not survive a fork

    # ------------------------------------------------------------------ owner
    def adopt(self, owner: CacheOwner) -> None:
        """``owner`` is the Config this cache belongs to (its transport is bound later, once)."""
        with self.lock:
            self._owner = owner
            self._owner_ref = weakref.ref(owner)

    def bind(self, transport: Any) -> None:
        """Attach the owner's transport (once); from then on the owner is held weakly."""
        with self.lock:
            if self._transport is not None and self._transport is not transport:
                raise CloudcoilError("this Cache already belongs to another Config; give each Config its own")
            self._transport = transport
            self._owner = None

    def connect(self) -> None:
        """The transport, through the owner if it is not bound yet (``Cache.start()``)."""
        owner = self._owner
        if self._transport is None and owner is not None:
            self.bind(owner.transport)
        if self._transport is None:
            raise CloudcoilError(
                "Cache.start(): the cache belongs to no Config; create "
                "Config(cache=cache) first (or use `with config:`)"
            )

    def owner(self) -> CacheOwner | None:
        """The Config this cache belongs to (None once it is gone, or before it is adopted)."""
        return self._owner or self._owner_ref()

    def handler_context(self) -> contextvars.Context:
        """The context a handler lane starts in: the owner's scope (a fresh empty one without an owner)."""
        owner = self._owner or self._owner_ref()
        return contextvars.Context() if owner is None else owner.handler_context()

    def source_for(self, key: InformerKey, decoder: Decoder[Any]) -> ListWatch[Any]:
        """The list/watch source of the informer of ``key``, through the bound transport."""
        if self._transport is None:
            raise CloudcoilError("the cache is not attached to a Config")
        return ListWatch(
            self._transport,
            key.cls,
            namespace=key.namespace,
            label_selector=key.label_selector,
            field_selector=key.field_selector,
            structure=decoder,
            refuse_mismatched=True,
            line_timeouts=True,
            max_list_bytes=self._tuning().max_list_bytes,
            metadata_only=getattr(key.cls, "metadata_of", None) is not None,  # PartialObjectMetadata.of(kind)
        )

    # -------------------------------------------------------------------- run
    def start(self) -> None:
        """One reference without waiting for the sync (``Cache.start()``): the first starts every informer."""
        self.connect()
        if not self._options.enabled:
            return
        self._resume()
        _refuse_without_threads()
        self._prepare()
        with self.lock:
            self._hold_locked()

    def acquire(self, cancel: threading.Event | None = None) -> None:
        """One more scope: the first starts every informer and (optionally) waits for their sync.

        On a failed wait in strict mode the scope is not entered: the reference is dropped again
        (stopping the informers if it was the only one) and the error is raised. Setting ``cancel``
        (an async scope's task was cancelled) abandons the wait the same way.
        """
        if not self._options.enabled:
            return
        if cancel is not None and cancel.is_set():
            raise SyncCancelled("the scope was cancelled before its cache started")
        self._resume()
        _refuse_without_threads()
        self._prepare()  # may fail (a kind the server does not serve): the scope is not entered
        with self.lock:
            informers = self._hold_locked()
        if not self._options.wait_for_sync:
            return
        # Every scope waits, not only the first: a scope entered while another thread's first
        # scope is still syncing must not see an unsynced cache either.
        try:
            self.wait_synced(informers, self._options.sync_timeout, cancel)
        except BaseException as exc:
            if self._strict() or not isinstance(exc, CloudcoilError) or isinstance(exc, SyncCancelled):
                self.release()
                raise
            log.warning("cache: continuing without a synced cache (fallback mode): %s", exc)

    def _hold_locked(self) -> list[Informer[Any]]:
        """One more reference; the first starts every informer. The informers it holds."""
        self.count += 1
        informers = list(self._informers.values())
        if self.count == 1:
            # Starting (and, in release, stopping) under the lock: a scope entering while the
            # last one leaves sees either the old run fully told to stop, or its own run.
            for informer in informers:
                informer.start()
        return informers

    def release(self) -> None:
        """One scope fewer: the last stops every informer and joins all their threads."""
        if not self._options.enabled:
            return
        with self.lock:
            if self.count == 0:
                return
            self.count -= 1
            if self.count:
                return
            # in the reverse of their start, against one deadline (``Tuning.stop_timeout`` for the
            # whole stop, however many informers: each is joined with what is left of it)
            runs = [(informer, informer.signal_stop()) for informer in reversed(self._informers.values())]
        deadline = deadline_after(self._tuning().stop_timeout)
        for informer, run in runs:  # joined outside the lock; only this run's threads, bounded
            informer.join(run, remaining(deadline))

    def close(self) -> None:
        """The owning Config was closed (for good): forget the handlers, so that what they hold of
        the application (often the Config itself) is no reference cycle through the cache."""
        with self.lock:
            self._owner = None
            if self.count:
                return  # still started (Cache.start()): its handlers still run
            informers = list(self._informers.values())
        for informer in informers:
            informer.forget_handlers()

    def wait_synced(
        self, informers: list[Informer[Any]], timeout: float, cancel: threading.Event | None = None
    ) -> None:
        """Wait for every informer; a hard failure (401/403/404) of any one fails at once. Then for
        those the cache made meanwhile (a ``NamespaceSelector``'s namespaces), within ``timeout``."""
        deadline = time.monotonic() + timeout
        while informers:
            self._wait_listed(informers, deadline, timeout, cancel)
            informers = self._settle(informers)

    def _wait_listed(
        self, informers: list[Informer[Any]], deadline: float, timeout: float, cancel: threading.Event | None
    ) -> None:
        """``wait_synced`` of the informers given (one stopped and dropped from the cache meanwhile: not waited for)."""
        with self.sync_cond:
            while True:
                if cancel is not None and cancel.is_set():
                    raise SyncCancelled("the wait for the cache sync was cancelled")
                pending = [i for i in informers if not i.has_synced() and self._informers.get(i.key) is i]
                if not pending:
                    return
                for informer in pending:
                    err = informer.last_error
                    if err is not None and is_hard_failure(err):
                        raise _naming(err, informer.key.describe())
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    names = ", ".join(i.key.describe() for i in pending)
                    errors = "; ".join(f"{i.key.describe()}: {i.last_error}" for i in pending if i.last_error)
                    raise CacheSyncTimeout(
                        f"cache did not sync within {timeout:g}s: {names}"
                        + (f" (last errors: {errors})" if errors else "")
                    )
                self.sync_cond.wait(remaining)

    def wake(self) -> None:
        """Wake sync waiters (an informer synced or failed, or a wait was cancelled)."""
        with self.sync_cond:
            self.sync_cond.notify_all()


def _refuse_without_threads() -> None:
    """A cache cannot start where its threads would never run (uWSGI without threads)."""
    problem = _fork.threads_unavailable()
    if problem is not None:
        raise ConfigError(problem)


def _naming(err: BaseException, what: str) -> BaseException:
    """The same error, its message prefixed with the informer it came from (type and fields kept)."""
    if isinstance(err, APIError):
        named = type(err)(
            f"{what}: {err.message}", code=err.code, reason=err.reason, status=err.status, retry_after=err.retry_after
        )
        named.__cause__ = err
        return named
    return err
