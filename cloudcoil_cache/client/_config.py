"""Config: the composition root (connection → transport → cache) and its reference-counted scopes."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import inspect
import logging
import threading
import weakref
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Literal, Mapping, TypeVar, overload

from cloudcoil_cache import _fork
from cloudcoil_cache._threads import hold_executor, release_executor, run_control, submit_control
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client._async_client import AsyncApi
from cloudcoil_cache.client._auth import bearer_token
from cloudcoil_cache.client._discovery import refresh_bindings
from cloudcoil_cache.client._kubeconfig import Connection, build_transport, check_connection, load_connection
from cloudcoil_cache.client._resource_client import Api
from cloudcoil_cache.errors import CloudcoilError, ConfigError

if TYPE_CHECKING:
    from cloudcoil_cache.caching._owner import Scopes

__all__ = ["Config", "api_in_scope", "cached_api", "current_config"]

#: The connection arguments of ``Config(...)`` (everything but ``cache``).
_CONNECTION_ARGS = (
    "kubeconfig",
    "server",
    "namespace",
    "token",
    "cafile",
    "certfile",
    "keyfile",
    "context",
    "skip_verify",
)

log = logging.getLogger(__name__)

T = TypeVar("T")

# The stack of (config, token) of the scopes entered in this thread/task, innermost last.
_scopes: contextvars.ContextVar[tuple[tuple[Config, contextvars.Token[_Scope | None]], ...]] = contextvars.ContextVar(
    "cloudcoil_cache_scopes", default=()
)


class _Scope:
    """One scope of a Config in a thread/task: the Config, and the cached clients made for it.

    ``Pod.get()`` in a scope reads through the scope's cached ``ResourceClient`` of ``Pod``, made
    at its first read and dropped with the scope (``api_in_scope``). The Config does not know
    its scopes: no reference cycle (a Config -> client memo would be one, which the GC freeze
    would keep forever; tests/lifetimes).
    """

    __slots__ = ("clients", "config")

    def __init__(self, config: Config) -> None:
        self.config = config
        self.clients: dict[type, Api[Any]] = {}


#: The innermost scope of this thread/task (``with config:``), and the process default's (``set_default()``):
#: where ``Pod.get`` finds its cached ``Api`` (``_resource.Resource.get`` reads both on every read).
active: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar("cloudcoil_cache_config", default=None)
_default_lock = threading.Lock()
_default: Config | None = None  # set_default(): the process-wide config
# the default's cached clients (as a scope keeps its own): module -> clients -> config, no cycle
default_scope: _Scope | None = None
_implicit: Config | None = None  # discovered from the environment on first use without any config

# Scopes open in any thread or task (pushed, not yet popped). current_config() reads it without
# the lock (one int read on every call's path); a read racing a scope's entry or exit can at worst
# miss or give that thread's one warning.
_open_scopes = 0
_open_scopes_lock = threading.Lock()
_fork.renew_locks(globals(), _default_lock=threading.Lock, _open_scopes_lock=threading.Lock)
_thread_state = threading.local()  # .warned: this thread was told it has no Config of its own


def _make_client(cls: type[T], config: Config, cached: bool) -> Api[T]:
    return Api(cls, config, cached=cached)


def api_in_scope(cls: type[T], config: Config | None = None, cached: bool = False) -> Api[T]:
    """The ``Api`` that ``Pod.get()``, ``pod.create()``... use: of ``cls`` through ``config``, else
    through ``current_config()``.

    A cached ``Api`` of the innermost scope's Config (``Pod.get``, ``Pod.list``) is made once per
    scope and class: the scope keeps it (an ``Api`` holds nothing but its class, its Config and memos); so is
    one of the process default's (``set_default()``), outside every scope.
    """
    if config is None and cached:
        scope = active.get() or default_scope
        if scope is not None:
            api: Api[T] | None = scope.clients.get(cls)
            if api is None:
                api = scope.clients[cls] = _make_client(cls, scope.config, True)
            return api
    return _make_client(cls, config or current_config(), cached)


def cached_api(cls: type[T]) -> Api[T]:
    """``api_in_scope(cls, None, True)``, kept short: what ``Pod.get`` and ``Pod.list`` call on every read."""
    scope = active.get() or default_scope
    if scope is not None:
        api: Api[T] | None = scope.clients.get(cls)
        if api is not None:
            return api
    return api_in_scope(cls, None, True)


def current_config() -> Config:
    """The config of the innermost scope, else the process default, else one from the environment.

    A thread that gets the environment's config while a scope is open in another thread (threads
    do not inherit context variables) is told so once, by a warning on this module's logger.
    """
    scope = active.get()
    if scope is not None:
        return scope.config
    if _default is not None:
        return _default
    if _open_scopes and not getattr(_thread_state, "warned", False):
        _warn_no_config_in_thread()
    global _implicit
    with _default_lock:
        if _implicit is None:
            _implicit = Config()
        return _implicit


def _warn_no_config_in_thread() -> None:
    _thread_state.warned = True
    if _in_event_loop():
        log.warning(
            "an asyncio task in thread %r has no Config of its own (no `async with config:` in it and no "
            "process default) while a Config scope is active in another task: tasks do not inherit the "
            "context of a task that is not their parent (an ASGI server's lifespan is not the parent of "
            "its request tasks), so its resource calls use the Config discovered from the environment "
            "(KUBECONFIG, ~/.kube/config or in-cluster), which may be another cluster and has no cache. "
            "In an ASGI app, use the config's lifespan (Starlette/FastAPI: `lifespan=config.lifespan`, "
            "or `async with config.lifespan():` inside yours): it makes the config the process default, "
            "which every task reads. Logged once per thread.",
            threading.current_thread().name,
        )
        return
    log.warning(
        "thread %r has no Config of its own (no `with config:` in it and no process default) while a "
        "Config scope is active in another thread: threads do not inherit context variables, so its "
        "resource calls use the Config discovered from the environment (KUBECONFIG, ~/.kube/config or "
        "in-cluster), which may be another cluster. Call config.set_default() to give every thread "
        "that config, or run the thread's function in contextvars.copy_context() taken inside the "
        "scope (copy_context().run(func)). Logged once per thread.",
        threading.current_thread().name,
    )


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _scope_opened() -> None:
    global _open_scopes
    with _open_scopes_lock:
        _open_scopes += 1


def _scope_closed() -> None:
    global _open_scopes
    with _open_scopes_lock:
        _open_scopes -= 1


def _chosen_cache(cache: Cache | bool) -> Cache | None:
    """The Cache that ``Config(cache=...)`` means; ConfigError for anything else."""
    if cache is True:
        return Cache()
    if cache is False or cache is None:
        return None
    if isinstance(cache, Cache):
        return cache
    raise ConfigError(f"Config(cache=...): expected True, False or a Cache, got {type(cache).__name__}")


class Config:
    """Where and how to reach the API server, and (optionally) the cache in front of it.

    ``with config:`` / ``async with config:`` make it the active config of the current thread or
    task and start its cache; scopes are reference-counted, so nested scopes share the cache, which
    stops when the last one exits. A cached Config serves sync scopes or async scopes at one time.

    The arguments and the kubeconfig they lead to are read and checked at construction (files
    only, no network): a malformed kubeconfig raises ``ConfigError`` (a ``ValueError``) here, and
    the connection read then is the one used (the kubeconfig is not read again at first use; only
    a 401 reloads the user's credentials from it). Without a kubeconfig or ``server=``, discovery
    (in-cluster files) is lazy: it happens on the first scope, the first request, an explicit
    ``initialize()`` / ``await async_initialize()``, or reading ``server`` / ``namespace`` /
    ``token``. Exec plugins run at the first request.
    """

    def __init__(
        self,
        kubeconfig: str | None = None,
        server: str | None = None,
        namespace: str | None = None,
        token: str | None = None,
        cafile: str | None = None,
        certfile: str | None = None,
        keyfile: str | None = None,
        context: str | None = None,
        skip_verify: bool | None = None,
        cache: Cache | bool = False,
        *,
        warning_handler: Callable[[str], None] | None = None,
    ) -> None:
        """``warning_handler(text)`` gets each warning the API server sends (``Warning: 299`` headers:
        admission webhooks' warnings, deprecated APIs); by default each distinct text is logged once at
        WARNING on the ``cloudcoil_cache.warnings`` logger, as kubectl prints them."""
        args: dict[str, Any] = dict(
            kubeconfig=kubeconfig,
            server=server,
            namespace=namespace,
            token=token,
            cafile=cafile,
            certfile=certfile,
            keyfile=keyfile,
            context=context,
            skip_verify=skip_verify,
        )
        chosen = _chosen_cache(cache)
        checked = check_connection(**args)  # None: in-cluster or nothing, found at first use
        self._setup(args, chosen, checked, warning_handler)

    def _setup(
        self,
        args: dict[str, Any],
        chosen: Cache | None,
        checked: Connection | None = None,
        warning_handler: Callable[[str], None] | None = None,
    ) -> None:
        self._args = args
        self._warning_handler = warning_handler
        #: Labels a ``create`` through this Config adds to what it sends (never to the caller's object),
        #: the caller's own labels winning: set by a sharded controller on its own Config, so that a child
        #: its reconcile creates carries its owner's shard label (as the ring's webhook would add). None: none.
        self.create_labels: Callable[[Any], Mapping[str, str] | None] | None = None
        self._cache: Cache | None = chosen
        # what this Config drives of its cache (the owner interface, caching._owner): nothing else
        self._cache_scopes: Scopes | None = None if chosen is None else chosen._adopt(self)
        self._lock = threading.RLock()
        self._connection: Connection | None = None
        self._checked = checked  # read at construction; becomes _connection at first use
        self._transport: Any = None
        self._refcount = 0
        self._scope_kind: str | None = None  # "sync" or "async" while scopes are open
        self._is_default = False
        self._default_start = threading.Lock()  # one set_default() at a time starts this config
        self._closed = False
        self._reopenable = False  # inherited across fork: close() in the child does not end it for good
        _fork.on_fork(self._after_fork_in_child)

    def _after_fork_in_child(self) -> None:
        """In a fork child (``_fork``: one thread, no I/O): new locks, and the transport abandoned
        (its pooled connections, TLS state included, are the parent's too: a new one is built from
        the same connection settings at the next use). The cache re-arms itself."""
        self._lock = threading.RLock()
        self._default_start = threading.Lock()
        if self._transport is not None:
            _fork.abandon(self._transport)
            self._transport = None
        self._reopenable = not self._closed

    # ------------------------------------------------------------- discovery
    def _discovered(self) -> Connection:
        """The connection settings, discovered on first use (no transport is built)."""
        with self._lock:
            if self._connection is None:  # else discovered, or adopted from the Config cloned
                self._check_open_locked()
                checked, self._checked = self._checked, None
                self._connection = checked if checked is not None else load_connection(**self._args)
            return self._connection

    def _check_open_locked(self) -> None:
        """Refuse a closed Config, unless it was inherited across fork and closed in this process
        (a worker's post-fork ``close(); set_default()``): that one opens again."""
        if self._closed:
            if not self._reopenable:
                raise CloudcoilError("this Config was closed")
            self._closed = False

    def initialize(self) -> Config:
        """Discover the connection (kubeconfig, in-cluster, arguments) and build the transport."""
        with self._lock:
            if self._transport is None:
                self._check_open_locked()
                self._transport = build_transport(self._discovered(), warning_handler=self._warning_handler)
                if self._cache_scopes is not None:
                    self._cache_scopes.bind(self._transport)
        return self

    async def async_initialize(self) -> Config:
        """``initialize()`` without blocking the event loop (no thread hop once initialized)."""
        if self._transport is None:
            await run_control(self.initialize)
        return self

    def refresh_api_resources(self) -> None:
        """Read the server's API discovery again now (cloudcoil's name): after a CRD is established,
        or changed, its kind is usable at once.

        Every ``get_dynamic_resource`` class, and every class without a plural of its own that
        discovery bound, is looked up again (one GET per group version they use): a kind served now
        is bound — again, when its plural, scope or subresources changed; a kind the server does not
        serve keeps what it had (a class never bound stays unbound and is bound at its first use, as
        always). Classes that declare their plural, and informers already running, are not changed.

        Raises:
            APIError: a group version's discovery failed (other than 404: nothing served there);
                every other group version is refreshed first.
            TransportError: the server could not be reached.
        """
        refresh_bindings(self)

    async def async_refresh_api_resources(self) -> None:
        """``refresh_api_resources()`` without blocking the event loop (it runs off the loop)."""
        await run_control(self.refresh_api_resources)

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
        explicit: str | None = self._args["namespace"]
        if explicit:
            return explicit
        connection = self._connection  # once discovered, read without the lock (every cached get reads it)
        return (connection or self._discovered()).namespace or "default"

    @property
    def server(self) -> str:
        """The API server's URL (without a trailing slash)."""
        return self._discovered().server

    @property
    def token(self) -> str | None:
        """The bearer token requests carry now: the ``token=`` argument, the kubeconfig user's token
        or token file, the service account's token; ``None`` for client certificates, basic auth
        and exec plugins (as in cloudcoil). Never shown by ``repr()``."""
        return bearer_token(self._discovered().credentials)

    @property
    def cache(self) -> Cache | None:
        return self._cache

    @property
    def cached(self) -> bool:
        return self._cache is not None and self._cache.enabled

    def __repr__(self) -> str:  # never the token: only where, never how
        connection = self._connection
        source = connection.source if connection is not None else "not initialized"
        server = connection.server if connection is not None else self._args["server"]
        namespace = self._args["namespace"] or (connection.namespace if connection is not None else None)
        return f"Config(server={server!r}, namespace={namespace!r}, source={source!r}, cache={self._cache!r})"

    # --------------------------------------------- cloudcoil-compatible names
    def clone(self, **overrides: Any) -> Config:
        """A new Config with this one's constructor arguments, ``overrides`` replacing any of them.

        Without a ``cache`` override the clone gets a new Cache with the same settings (no
        informers, handlers or state are shared, as in cloudcoil). When no connection argument
        changes (or only ``namespace``, to another namespace), the clone reuses this config's
        discovered connection and credentials instead of discovering again; it always has its
        own connection pool, closed by its own ``close()``.

        Raises:
            TypeError: an override that is not a ``Config`` argument.
        """
        unknown = sorted(set(overrides) - set(_CONNECTION_ARGS) - {"cache"})
        if unknown:
            raise TypeError(
                f"Config.clone() got unknown argument(s) {unknown}; "
                f"expected any of {list(_CONNECTION_ARGS) + ['cache']}"
            )
        args: dict[str, Any] = dict(self._args)
        args.update((k, v) for k, v in overrides.items() if k != "cache")
        cache: Cache | bool = overrides["cache"] if "cache" in overrides else _copy_cache(self._cache)
        changed = set(overrides) - {"cache"}
        with self._lock:
            connection = self._connection
        if connection is not None and (not changed or (changed == {"namespace"} and overrides["namespace"])):
            # The same connection: adopted as it is, the kubeconfig is neither checked nor read again.
            new = Config.__new__(Config)
            new._setup(args, _chosen_cache(cache), warning_handler=self._warning_handler)
            new._connection = connection
            return new
        return Config(**args, cache=cache, warning_handler=self._warning_handler)

    def with_cache(self, cache: Cache | bool) -> Config:
        """A new Config with the same connection settings (and credentials) and ``cache``.

        ``cache`` is what the constructor takes: ``True`` (``Cache()`` defaults), ``False`` or a
        ``Cache``. A Cache belongs to one Config: give each its own.
        """
        return self.clone(cache=cache)

    @overload
    def client_for(self, cls: type[T], sync: Literal[True] = ..., cached: bool | None = ...) -> Api[T]: ...
    @overload
    def client_for(self, cls: type[T], sync: Literal[False], cached: bool | None = ...) -> AsyncApi[T]: ...
    @overload
    def client_for(self, cls: type[T], sync: bool, cached: bool | None = ...) -> Api[T] | AsyncApi[T]: ...

    def client_for(self, cls: type[T], sync: bool = True, cached: bool | None = None) -> Api[T] | AsyncApi[T]:
        """The ``Api`` of resource class ``cls`` through this config (cloudcoil's ``client_for``).

        ``sync=True`` gives an ``Api`` (also named ``ResourceClient``), ``sync=False`` an ``AsyncApi``
        (``AsyncResourceClient``). ``cached=None`` routes reads through the cache when this config
        has an enabled cache (and it is not paused in the current thread/task); ``cached=False``
        gives a live client; ``cached=True`` a cached one. A cached client's reads follow the
        cache's read policy at read time (see docs/contract.md "What the cache can serve"); writes
        always go to the API server.

        Raises:
            ConfigError: ``cached=True`` on a config without an enabled cache, or ``cls`` is not
                a resource class.
        """
        api = _make_client(cls, self, self._use_cache(cls, cached))
        return api if sync else AsyncApi(api)

    async def async_client_for(self, cls: type[T], cached: bool | None = None) -> AsyncApi[T]:
        """``client_for(cls, sync=False, cached=cached)`` (an ``AsyncApi``) after discovery, which
        runs off the loop."""
        return await AsyncApi(_make_client(cls, self, self._use_cache(cls, cached))).ready()

    def _use_cache(self, cls: type, cached: bool | None) -> bool:
        """Whether a client made with ``cached`` routes its reads through the cache."""
        if cached is None:
            return self.cached
        if cached:
            cache = self._cache
            if cache is None or not (cache.enabled or getattr(cache, "paused", False)):
                raise ConfigError(
                    f"cannot create a cached client for {getattr(cls, '__name__', cls)}: this "
                    "Config has no enabled cache (Config(cache=True) or a Cache)"
                )
            return True
        return False

    # ----------------------------------------------------------------- scopes
    def _enter_kind(self, kind: str) -> None:
        with self._lock:
            if self.cached and self._scope_kind not in (None, kind):
                raise RuntimeError(
                    f"this cached Config is in use by {self._scope_kind} scopes; it cannot also be entered "
                    f"with {'async with' if kind == 'async' else 'with'}. Use two Configs: one for sync "
                    "code and one for async code."
                )
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
        token = active.set(_Scope(self))
        _scopes.set(_scopes.get() + ((self, token),))
        _scope_opened()

    def _pop(self) -> None:
        stack = _scopes.get()
        if not stack:
            # Entered in another context (an async fixture's set-up and teardown run in different
            # tasks): nothing to reset here, but the reference must still be released.
            with self._lock:
                entered = self._refcount > (1 if self._is_default else 0)
            if not entered:
                raise RuntimeError(f"Config@{id(self):x} exited a scope it was not in")
            _scope_closed()
            return
        if stack[-1][0] is not self:
            raise RuntimeError(
                f"Config scopes exited out of order: exiting Config@{id(self):x} while the innermost "
                f"scope of this thread/task is Config@{id(stack[-1][0]):x}; exit the inner scope first"
            )
        _, token = stack[-1]
        _scopes.set(stack[:-1])
        active.reset(token)
        _scope_closed()

    def _start(self) -> None:
        """Blocking part of entering a scope: discovery and the cache's first reference."""
        self.initialize()
        if self._cache_scopes is not None:
            self._cache_scopes.acquire()

    def handler_context(self) -> contextvars.Context:
        """A fresh context for the cache's handlers to run in: this Config active, nothing else of any
        thread's (threads do not inherit context variables), so a handler's own ``Pod.get()`` reads
        through it."""
        context = contextvars.Context()
        context.run(active.set, _Scope(self))
        return context

    def _stop(self) -> None:
        if self._cache_scopes is not None:
            self._cache_scopes.release()

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
        if self._cache_scopes is not None:
            self._cache_scopes.loop = asyncio.get_running_loop()
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
            if self._cache_scopes is not None:
                self._cache_scopes.wake()
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
        if self._cache_scopes is not None:
            self._cache_scopes.acquire(cancel=cancel)

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
        global _default, default_scope
        _fork.check()
        with self._default_start:  # request threads calling it at once: the others wait for the first
            with _default_lock:
                is_default = _default is self
            if is_default:
                if self._cache is not None:
                    self._cache.resume_after_fork()  # a fork child's post_fork hook: resume now
                return self
            self._enter_kind("sync")  # refuses a config in use by async scopes, before anything changes
            try:
                self._start()
            except BaseException:
                self._leave_kind()
                raise
            with _default_lock:
                previous, _default = _default, self
                default_scope = _Scope(self)
            self._is_default = True
        if previous is not None and previous is not self:
            previous._release_default()
        atexit.register(_close_at_exit, weakref.ref(self))
        return self

    def lifespan(self, app: Any = None) -> contextlib.AbstractAsyncContextManager[dict[str, Any]]:
        """An ASGI lifespan: ``Starlette(lifespan=config.lifespan)``, ``FastAPI(lifespan=config.lifespan)``,
        or ``async with config.lifespan():`` inside an application's own lifespan.

        On start-up it makes this Config the process default (``set_default()``, off the event loop:
        the cache starts and syncs without blocking it), so every request task reads through it:
        an ASGI server runs each request in a task that does not inherit the lifespan's context
        variables, so ``async with config:`` there would reach no handler. It yields the lifespan
        state ``{"cloudcoil_config": config}`` (``request.state.cloudcoil_config``). On shutdown it
        closes the config: the cache stops and its threads are joined, also off the loop.
        ``app`` is accepted (and ignored) so that the method itself is a lifespan function.
        """
        return self._lifespan()

    @contextlib.asynccontextmanager
    async def _lifespan(self) -> AsyncIterator[dict[str, Any]]:
        if self._cache_scopes is not None:
            self._cache_scopes.loop = asyncio.get_running_loop()  # async handlers run on this loop
        await run_control(self.set_default)
        try:
            yield {"cloudcoil_config": self}
        finally:
            await asyncio.shield(asyncio.ensure_future(run_control(self.close)))

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
        global _default, default_scope
        with self._lock:
            open_scopes = self._refcount - (1 if self._is_default else 0)
        if open_scopes > 0:
            raise RuntimeError(f"Config.close() while {open_scopes} scope(s) of it are open: exit them first")
        with _default_lock:
            if _default is self:
                _default = None
                default_scope = None
        self._release_default()
        with self._lock:
            self._closed = True
            transport, self._transport = self._transport, None
        if transport is not None:
            transport.close()
        if self._cache_scopes is not None:
            self._cache_scopes.close()  # its handlers often hold this Config: no cycle left (tests/lifetimes)


_MISSING = object()


def _copy_cache(cache: Cache | None) -> Cache | bool:
    """A new Cache with the settings of ``cache`` (no informers, handlers or state), or False."""
    if cache is None:
        return False
    copier = getattr(cache, "copy_settings", None)
    if callable(copier):
        copied = copier()
        assert isinstance(copied, Cache)
        return copied
    # Rebuilt from the validated options: each constructor argument by its name there, so
    # options added later carry over without a change here.
    options = cache.options
    if isinstance(options, Mapping):
        get = options.get
    else:

        def get(name: str, default: Any = None) -> Any:
            return getattr(options, name, default)

    kwargs: dict[str, Any] = {}
    for name in list(inspect.signature(type(cache).__init__).parameters)[1:]:
        if name == "namespaces":
            namespace = get("namespace")
            kwargs[name] = None if namespace is None else [namespace]
        elif name == "max_items_per_resource":
            kwargs[name] = get("max_items", _MISSING)
        elif name == "tuning":
            kwargs[name] = cache.tuning
        elif name in ("label_selector", "field_selector"):
            kwargs[name] = get(name) or None
        elif name == "mode":
            kwargs[name] = getattr(cache, "_mode", None) or get("mode", _MISSING)
        else:
            kwargs[name] = get(name, _MISSING)
    return Cache(**{k: v for k, v in kwargs.items() if v is not _MISSING})


def _close_at_exit(ref: weakref.ref[Config]) -> None:
    config = ref()
    if config is not None:
        try:
            config.close()
        except RuntimeError:  # scopes left open at exit: release the default's reference anyway
            config._release_default()
