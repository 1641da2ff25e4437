"""Config: the composition root (connection → transport → cache) and its reference-counted scopes."""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import logging
import threading
import weakref
from typing import Any

from cloudcoil_cache._threads import hold_executor, release_executor, run_control, submit_control
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client._kubeconfig import Connection, build_transport, load_connection
from cloudcoil_cache.errors import CloudcoilError, ConfigError

__all__ = ["Config", "current_config"]

log = logging.getLogger(__name__)

# The stack of (config, token) of the scopes entered in this thread/task, innermost last.
_scopes: contextvars.ContextVar[tuple[tuple[Config, contextvars.Token[Config | None]], ...]] = \
    contextvars.ContextVar("cloudcoil_cache_scopes", default=())
_active: contextvars.ContextVar[Config | None] = contextvars.ContextVar("cloudcoil_cache_config",
                                                                       default=None)
_default_lock = threading.Lock()
_default: Config | None = None      # set_default(): the process-wide config
_implicit: Config | None = None     # discovered from the environment on first use without any config

def current_config() -> Config:
    """The config of the innermost scope, else the process default, else one from the environment."""
    config = _active.get()
    if config is not None:
        return config
    if _default is not None:
        return _default
    global _implicit
    with _default_lock:
        if _implicit is None:
            _implicit = Config()
        return _implicit


class Config:
    """Where and how to reach the API server, and (optionally) the cache in front of it.

    ``with config:`` / ``async with config:`` make it the active config of the current thread or
    task and start its cache; scopes are reference-counted, so nested scopes share the cache, which
    stops when the last one exits. A cached Config serves sync scopes or async scopes at one time.

    Discovery (reading kubeconfig / in-cluster files) is lazy: it happens on the first scope, the
    first request, or an explicit ``initialize()`` / ``await async_initialize()``.
    """

    def __init__(self, kubeconfig: str | None = None, server: str | None = None,
                 namespace: str | None = None, token: str | None = None, cafile: str | None = None,
                 certfile: str | None = None, keyfile: str | None = None, context: str | None = None,
                 skip_verify: bool | None = None, cache: Cache | bool = False) -> None:
        self._args = dict(kubeconfig=kubeconfig, server=server, namespace=namespace, token=token,
                          cafile=cafile, certfile=certfile, keyfile=keyfile, context=context,
                          skip_verify=skip_verify)
        if cache is True:
            cache = Cache()
        elif cache is False or cache is None:
            cache = None
        elif not isinstance(cache, Cache):
            raise ConfigError(f"Config(cache=...): expected True, False or a Cache, got {type(cache).__name__}")
        self._cache: Cache | None = cache
        self._lock = threading.RLock()
        self._connection: Connection | None = None
        self._transport: Any = None
        self._refcount = 0
        self._scope_kind: str | None = None  # "sync" or "async" while scopes are open
        self._is_default = False
        self._closed = False

    # ------------------------------------------------------------- discovery
    def initialize(self) -> Config:
        """Discover the connection (kubeconfig, in-cluster, arguments) and build the transport."""
        with self._lock:
            if self._transport is None:
                if self._closed:
                    raise CloudcoilError("this Config was closed")
                self._connection = load_connection(**self._args)
                self._transport = build_transport(self._connection)
                if self._cache is not None:
                    self._cache._bind(self._transport)
        return self

    async def async_initialize(self) -> Config:
        """``initialize()`` without blocking the event loop (no thread hop once initialized)."""
        if self._transport is None:
            await run_control(self.initialize)
        return self

    @property
    def transport(self) -> Any:
        return self.initialize()._transport

    @property
    def connection(self) -> Connection:
        self.initialize()
        assert self._connection is not None
        return self._connection

    @property
    def namespace(self) -> str:
        """The default namespace: the argument, else the kubeconfig context's, else "default"."""
        explicit = self._args["namespace"]
        if explicit:
            return explicit
        return self.connection.namespace or "default"

    @property
    def server(self) -> str:
        return self.connection.server

    @property
    def cache(self) -> Cache | None:
        return self._cache

    @property
    def cached(self) -> bool:
        return self._cache is not None and self._cache.enabled

    def __repr__(self) -> str:
        source = self._connection.source if self._connection is not None else "not initialized"
        server = self._connection.server if self._connection is not None else self._args["server"]
        return (f"Config(server={server!r}, namespace={self._args['namespace']!r}, source={source!r}, "
                f"cache={self._cache!r})")

    # ----------------------------------------------------------------- scopes
    def _enter_kind(self, kind: str) -> None:
        with self._lock:
            if self.cached and self._scope_kind not in (None, kind):
                raise RuntimeError(
                    f"this cached Config is in use by {self._scope_kind} scopes; it cannot also be entered "
                    f"with {'async with' if kind == 'async' else 'with'}. Use two Configs: one for sync "
                    "code and one for async code.")
            self._refcount += 1
            self._scope_kind = kind

    def _leave_kind(self) -> bool:
        """Drop one reference; True when it was the last."""
        with self._lock:
            if self._refcount == 0:
                raise RuntimeError(f"Config@{id(self):x} exited a scope it was not in")
            self._refcount -= 1
            if self._refcount == 0:
                self._scope_kind = None
                return True
            return False

    def _push(self) -> None:
        token = _active.set(self)
        _scopes.set(_scopes.get() + ((self, token),))

    def _pop(self) -> None:
        stack = _scopes.get()
        if not stack:
            # Entered in another context (an async fixture's set-up and teardown run in different
            # tasks): nothing to reset here, but the reference must still be released.
            with self._lock:
                entered = self._refcount > (1 if self._is_default else 0)
            if not entered:
                raise RuntimeError(f"Config@{id(self):x} exited a scope it was not in")
            return
        if stack[-1][0] is not self:
            raise RuntimeError(
                f"Config scopes exited out of order: exiting Config@{id(self):x} while the innermost "
                f"scope of this thread/task is Config@{id(stack[-1][0]):x}; exit the inner scope first")
        _, token = stack[-1]
        _scopes.set(stack[:-1])
        _active.reset(token)

    def _start(self) -> None:
        """Blocking part of entering a scope: discovery and the cache's first reference."""
        self.initialize()
        if self._cache is not None:
            self._cache._acquire()

    def _stop(self) -> None:
        if self._cache is not None:
            self._cache._release()

    def activate(self) -> Config:
        """Enter a scope without ``with`` (pair with ``deactivate()``)."""
        self._enter_kind("sync")
        try:
            self._start()
        except BaseException:
            self._leave_kind()
            raise
        self._push()
        return self

    def deactivate(self) -> None:
        """Leave the innermost scope entered with ``activate()`` / ``with``."""
        self._pop()
        self._leave_kind()
        self._stop()

    def __enter__(self) -> Config:
        return self.activate()

    def __exit__(self, *exc_info: object) -> None:
        self.deactivate()

    async def __aenter__(self) -> Config:
        self._enter_kind("async")
        hold_executor()
        if self._cache is not None:
            self._cache._loop = asyncio.get_running_loop()
        cancel = threading.Event()
        future = asyncio.ensure_future(run_control(self._start_cancellable, cancel))
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:
            # Cancelled while syncing: make the blocking start give up (it does at once), then
            # undo whatever it did. The undo is chained to the start's end by callbacks, so a
            # second cancellation cannot skip it; normally we wait for it, so that nothing is
            # left running when the cancellation reaches the caller.
            cancel.set()
            if self._cache is not None:
                self._cache._wake()
            undone = asyncio.get_running_loop().create_future()
            future.add_done_callback(lambda f: self._undo_start(f, undone))
            try:
                await asyncio.shield(undone)
            except asyncio.CancelledError:
                pass
            raise
        except BaseException:
            self._leave_kind()
            release_executor()
            raise
        self._push()
        return self

    def _undo_start(self, future: asyncio.Future[None], undone: asyncio.Future[None]) -> None:
        """Done-callback of a cancelled start: release what it acquired (off the event loop),
        then resolve ``undone`` on its loop."""
        started = not future.cancelled() and future.exception() is None
        loop = undone.get_loop()

        def finish() -> None:  # on the loop: the control thread is idle now, joining it is instant
            release_executor()
            if not undone.done():
                undone.set_result(None)

        def signal(_: object) -> None:
            try:
                loop.call_soon_threadsafe(finish)
            except RuntimeError:  # the loop is closed by now: release from here
                release_executor()

        submit_control(self._undo_start_blocking, started).add_done_callback(signal)

    def _undo_start_blocking(self, started: bool) -> None:
        try:
            if started:
                self._stop()
        finally:
            self._leave_kind()

    def _start_cancellable(self, cancel: threading.Event) -> None:
        self.initialize()
        if self._cache is not None:
            self._cache._acquire(cancel=cancel)

    async def __aexit__(self, *exc_info: object) -> None:
        self._pop()
        self._leave_kind()
        # Shielded, and the executor released in a callback: a cancellation arriving now cannot
        # skip the stop (the cache would keep running with no scope left).
        stop = asyncio.ensure_future(run_control(self._stop))
        stop.add_done_callback(lambda _: release_executor())
        await asyncio.shield(stop)

    # --------------------------------------------------- process-wide default
    def set_default(self) -> Config:
        """Make this the config of every thread and task without an active scope (web apps).

        If it has a cache, the cache is started now (waiting for sync as a scope would) and
        stopped by ``close()``, which also runs at interpreter exit.
        """
        global _default
        with _default_lock:
            if _default is self:
                return self
        self._enter_kind("sync")  # refuses a config in use by async scopes, before anything changes
        try:
            self._start()
        except BaseException:
            self._leave_kind()
            raise
        with _default_lock:
            previous, _default = _default, self
        if previous is not None and previous is not self:
            previous._release_default()
        self._is_default = True
        atexit.register(_close_at_exit, weakref.ref(self))
        return self

    def _release_default(self) -> None:
        if self._is_default:
            self._is_default = False
            self._leave_kind()
            self._stop()

    def close(self) -> None:
        """Stop the cache started by ``set_default()``, join its threads and close the connection pool.

        Raises:
            RuntimeError: ``with``/``async with`` scopes of this config are still open.
        """
        global _default
        with self._lock:
            open_scopes = self._refcount - (1 if self._is_default else 0)
        if open_scopes > 0:
            raise RuntimeError(f"Config.close() while {open_scopes} scope(s) of it are open: "
                               "exit them first")
        with _default_lock:
            if _default is self:
                _default = None
        self._release_default()
        with self._lock:
            self._closed = True
            transport, self._transport = self._transport, None
        if transport is not None:
            transport.close()


def _close_at_exit(ref: weakref.ref[Config]) -> None:
    config = ref()
    if config is not None:
        try:
            config.close()
        except RuntimeError:  # scopes left open at exit: release the default's reference anyway
            config._release_default()
