"""Controller: informer events → keys → a work queue → worker threads → the reconcile function."""

from __future__ import annotations

import concurrent.futures
import inspect
import logging
import threading
import time
from typing import Any, Callable, TypeVar

from cloudcoil_cache._listwatch import parse_label_selector
from cloudcoil_cache.caching._policy import in_scope
from cloudcoil_cache.client import Config, current_config
from cloudcoil_cache.controller._context import CachedResources, Context
from cloudcoil_cache.controller._informers import InformerSet, Scope, Source
from cloudcoil_cache.controller._keys import key_of, normalize_key, split_key
from cloudcoil_cache.controller._loop import LoopThread
from cloudcoil_cache.controller._observe import ControllerObserver
from cloudcoil_cache.controller._outcomes import Result, TerminalError, Wait
from cloudcoil_cache.controller._queue import QueueStats, WorkQueue

__all__ = ["Controller"]

log = logging.getLogger("cloudcoil_cache.controller")

F = TypeVar("F", bound=Callable[..., Any])
Mapper = Callable[[Any], Any]


class Controller:
    """Reconciles objects of ``kind``: each change (of the object, an object it owns, or a watched object
    mapped to it) queues its key, and a worker calls the reconcile function with a deep copy of the
    object as cached now.

    A key is never reconciled by two workers at once; a key changed while it is processed is
    processed once more. See api.md "Controllers" for outcomes and ``ctx.cached``.

    Run it with a ``Manager`` (leader election, health, signals) or alone: ``with controller:``.
    """

    def __init__(self, kind: Any, reconcile: Callable[..., Any] | None = None, *, name: str | None = None,
                 config: Config | None = None, namespace: str | None = None, all_namespaces: bool = False,
                 label_selector: str | None = None, workers: int = 1, resync_period: float | None = 300,
                 shutdown_timeout: float = 10) -> None:
        _check_kind(kind, "Controller()")
        if namespace is not None and all_namespaces:
            raise ValueError("Controller(): namespace and all_namespaces are mutually exclusive")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"Controller(workers=...) must be an int >= 1, got {workers!r}")
        for what, value in (("resync_period", resync_period), ("shutdown_timeout", shutdown_timeout)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
                raise ValueError(f"Controller({what}=...) must be a number of seconds >= 0, got {value!r}")
        self._selector = parse_label_selector(label_selector)  # a bad selector fails here, named
        self.kind = kind
        self.name = name or kind.kind.lower()
        self.config = config
        self.namespace = namespace
        self.all_namespaces = all_namespaces
        self.label_selector = label_selector or None
        self.workers = workers
        self.resync_period = resync_period
        self.shutdown_timeout = float(shutdown_timeout)
        self.logger = log.getChild(self.name)
        self.observer = ControllerObserver()
        self._owned: list[Any] = []
        self._watches: list[tuple[Any, Mapper]] = []
        self._reconcile: Callable[..., Any] | None = None
        self._pass_ctx = False
        self._is_async = False
        self._every: float | None = None
        if reconcile is not None:
            self._set_reconcile(reconcile, None)
        self._lock = threading.Lock()  # guards the run state below
        self._informers: InformerSet | None = None
        self._handles: list[Any] = []
        self._queue: WorkQueue | None = None
        self._threads: list[threading.Thread] = []
        self._loop: LoopThread | None = None
        self._stopping = threading.Event()
        self._active = 0
        self._primary_namespace: str | None = namespace if kind.namespaced else None

    def __repr__(self) -> str:
        return f"<Controller {self.name!r} {self.kind.kind} running={self.running}>"

    # ------------------------------------------------------------ declaring
    def owns(self, *kinds: Any) -> Controller:
        """Objects of ``kinds`` whose controller ownerReference names a cached primary (same kind,
        group and UID) queue that primary."""
        self._check_not_started("owns()")
        for kind in kinds:
            _check_kind(kind, "owns()")
            if kind not in self._owned:
                self._owned.append(kind)
        return self

    def watch(self, kind: Any, mapper: Mapper | None = None) -> Any:
        """Objects of ``kind`` queue the keys ``mapper(obj)`` returns (a key, an iterable of keys, or
        None). The mapper gets a deep copy; an exception in it is logged. Also a decorator:
        ``@ctl.watch(Secret)``."""
        self._check_not_started("watch()")
        _check_kind(kind, "watch()")
        if mapper is None:
            def register(func: F) -> F:
                self.watch(kind, func)
                return func
            return register
        if not callable(mapper):
            raise TypeError(f"watch(mapper=...) expects a callable, got {type(mapper).__name__}")
        self._watches.append((kind, mapper))
        return self

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

    def _set_reconcile(self, func: Callable[..., Any], every: float | None) -> None:
        if not callable(func):
            raise TypeError(f"a reconcile function must be callable, got {type(func).__name__}")
        self._check_not_started("reconcile()")
        self._pass_ctx = _takes_context(func)
        self._is_async = inspect.iscoroutinefunction(func)
        self._reconcile = func
        self._every = every

    def _check_not_started(self, what: str) -> None:
        if getattr(self, "_informers", None) is not None:
            raise RuntimeError(f"controller {self.name!r}: {what} after the controller started")

    def enqueue(self, key: Any) -> None:
        """Queue a key (``"namespace/name"``, a ``(namespace, name)`` pair or an object). Keys queued
        while the controller's workers are not running (a standby replica) are dropped: every object is
        queued when they start."""
        key = normalize_key(key, namespaced=self.kind.namespaced, default_namespace=self._default_namespace())
        outside = self._outside_scope(key)
        if outside is not None:  # it could never be reconciled: every pass would fail and back off
            raise ValueError(f"controller {self.name!r} reconciles namespace {self._primary_namespace!r} only: "
                             f"cannot enqueue {key!r} (namespace {outside!r})")
        queue = self._queue
        if queue is not None:
            queue.add(key)

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
        return self.namespace or config.namespace

    def in_scope(self, obj: Any) -> bool:
        """Is ``obj`` one of this controller's primaries (namespace and label selector)?"""
        if self.kind.namespaced and self._primary_namespace and obj.metadata.namespace != self._primary_namespace:
            return False
        return self._selector.empty or self._selector.matches(obj.metadata.labels)

    # ----------------------------------------------------------- informers
    def _start_informers(self, config: Config | None = None, *, sync_timeout: float = 30.0) -> None:
        """Create the informers (shared with ``config.cache`` where it has the same ones), register the
        event handlers and wait for every informer's sync. Raises the informer's error on failure."""
        if self._reconcile is None:
            raise RuntimeError(f"controller {self.name!r} has no reconcile function: use @ctl.reconcile()")
        with self._lock:
            if self._informers is not None:
                return
            config = self.config or config or current_config()
            self.config = config
            namespace = self._scope_namespace(config)
            self._primary_namespace = namespace if self.kind.namespaced else None
            scopes = [Scope(self.kind, self._primary_namespace, self.label_selector)]
            scopes += [Scope(k, namespace if k.namespaced else None) for k in self._owned]
            scopes += [Scope(k, namespace if k.namespaced else None) for k, _ in self._watches]
            informers = InformerSet(self.name, config, scopes, resync_period=self.resync_period,
                                    sync_timeout=sync_timeout)
            self._informers = informers
        try:
            for cls, source in informers.sources.items():
                self._handles += self._subscribe(cls, source)
            informers.start()
        except BaseException:
            self._stop_informers()
            raise
        self.logger.info("controller %s: informers synced (%s)", self.name,
                         ", ".join(s.scope.describe() + (" shared" if s.shared else "")
                                   for s in informers.sources.values()))

    def _stop_informers(self) -> None:
        with self._lock:
            informers, self._informers = self._informers, None
            handles, self._handles = self._handles, []
        for handle in handles:
            handle.remove()
        if informers is not None:
            informers.stop()
            informers.close()

    @property
    def sources(self) -> dict[Any, Source]:
        informers = self._informers
        return dict(informers.sources) if informers is not None else {}

    def cached(self, cls: Any) -> CachedResources[Any]:
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
        keys: dict[str, None] = {}  # (cached objects are instances of a sealed subclass: isinstance)
        if isinstance(obj, self.kind) and self.in_scope(obj):
            keys[key_of(obj)] = None
        if any(isinstance(obj, kind) for kind in self._owned):
            keys.update(dict.fromkeys(self._owner_keys(obj)))
        for kind, mapper in self._watches:
            if isinstance(obj, kind):
                keys.update(dict.fromkeys(self._mapped_keys(mapper, obj)))
        return list(keys)

    def _subscribe(self, cls: Any, source: Source) -> list[Any]:
        def handle(*objs: Any) -> None:
            if self._queue is None:  # not leading: every object is queued when the workers start
                return
            keys: dict[str, None] = {}
            for obj in objs:
                keys.update(dict.fromkeys(self.keys_for(obj)))
            queue = self._queue
            if queue is not None:
                for key in keys:
                    queue.add(key)

        view = source.view
        return [view.on_add(handle), view.on_update(handle), view.on_delete(handle)]

    def _owner_keys(self, obj: Any) -> list[str]:
        primary = self.sources.get(self.kind)
        if primary is None:
            return []
        keys = []
        for ref in obj.metadata.owner_references or ():
            if not ref.controller or ref.kind != self.kind.kind:
                continue
            group = (ref.api_version or "").rpartition("/")[0]
            if group != (self.kind.group or ""):
                continue
            namespace = obj.metadata.namespace if self.kind.namespaced else None
            if self.kind.namespaced and not namespace:
                continue
            owner = primary.view.get(ref.name, namespace)
            if owner is not None and owner.metadata.uid == ref.uid and self.in_scope(owner):
                keys.append(key_of(owner))
        return keys

    def _mapped_keys(self, mapper: Mapper, obj: Any) -> list[str]:
        try:
            result = mapper(obj.copy())
            if result is None:
                return []
            if isinstance(result, (str, tuple)) or hasattr(result, "metadata"):
                result = [result]
            default = self._default_namespace()
            keys = [normalize_key(k, namespaced=self.kind.namespaced, default_namespace=default)
                    for k in result if k is not None]
        except Exception:
            self.logger.exception("controller %s: mapper %s failed for %s %s", self.name,
                                  getattr(mapper, "__qualname__", mapper), type(obj).__name__,
                                  _describe(obj))
            return []
        outside = [k for k in keys if self._outside_scope(k) is not None]
        if outside:
            self.logger.warning("controller %s: mapper %s returned keys outside namespace %r, dropped: %s",
                                self.name, getattr(mapper, "__qualname__", mapper), self._primary_namespace,
                                ", ".join(outside[:5]))
            keys = [k for k in keys if k not in outside]
        return keys

    # -------------------------------------------------------------- workers
    @property
    def running(self) -> bool:
        """Are the workers running (this replica leads)?"""
        return self._queue is not None

    def _start_workers(self) -> None:
        """Start a run: a new queue, every cached primary queued, ``workers`` threads."""
        informers = self._informers
        if informers is None:
            raise RuntimeError(f"controller {self.name!r}: start the informers first")
        with self._lock:
            if self._queue is not None:
                return
            self._stopping = threading.Event()
            queue = WorkQueue(self.name, hooks=self.observer.queue_hooks())
            loop = LoopThread(f"controller-{self.name}-loop") if self._is_async else None
            if loop is not None:
                loop.start()
            self._loop = loop
            context = informers.context_for(self._write_config())
            threads = [threading.Thread(target=context.copy().run, args=(self._work, queue, self._stopping),
                                        name=f"controller-{self.name}-worker-{i}", daemon=True)
                       for i in range(self.workers)]
            self._threads = threads
            self._queue = queue
        primary = informers.sources[self.kind]
        for obj in primary.view.list():
            if self.in_scope(obj):
                queue.add(key_of(obj))
        for thread in threads:
            thread.start()
        self.logger.info("controller %s: %d worker(s) started", self.name, len(threads))

    def _stop_workers(self, timeout: float | None = None) -> bool:
        """Stop taking keys, wait up to ``timeout`` (default ``shutdown_timeout``) for reconciles in
        flight, join the workers. False when some did not finish in time: coroutine reconciles are
        then cancelled; a plain function cannot be interrupted, its thread is left to end."""
        timeout = self.shutdown_timeout if timeout is None else timeout
        with self._lock:
            queue, self._queue = self._queue, None
            threads, self._threads = self._threads, []
            loop, self._loop = self._loop, None
            stopping = self._stopping
        if queue is None:
            return True
        stopping.set()
        queue.shut_down()
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(deadline - time.monotonic(), 0.0))
        late = [t for t in threads if t.is_alive()]
        in_time = not late
        if loop is not None:
            if late:  # coroutine reconciles still running: cancel them, then the workers end
                loop.cancel_all()
                for thread in late:
                    thread.join(1.0)
                late = [t for t in late if t.is_alive()]
            loop.stop(1.0)
        if late:
            self.logger.warning("controller %s: %d reconcile(s) still running %gs after stop: %s", self.name,
                                len(late), timeout, ", ".join(t.name for t in late))
        elif not in_time:
            self.logger.warning("controller %s: reconciles running past the shutdown timeout (%gs) were "
                                "cancelled", self.name, timeout)
        else:
            self.logger.info("controller %s: workers stopped", self.name)
        return in_time

    def queue_stats(self) -> QueueStats | None:
        """The current run's queue measurements (None while the workers are not running)."""
        queue = self._queue
        return queue.stats() if queue is not None else None

    def threads(self) -> list[threading.Thread]:
        """The worker and event-loop threads of the current run."""
        with self._lock:
            loop_thread = self._loop.thread if self._loop is not None else None
            return self._threads + ([loop_thread] if loop_thread is not None else [])

    def _work(self, queue: WorkQueue, stopping: threading.Event) -> None:
        while True:
            key = queue.get()
            if key is None:
                return
            try:
                if stopping.is_set():
                    return
                self._process(queue, str(key), stopping)
            finally:
                queue.done(key)

    def _process(self, queue: WorkQueue, key: str, stopping: threading.Event) -> None:
        namespace, name = split_key(key)
        sources = self.sources
        primary = sources.get(self.kind)
        if primary is None:
            return
        started = time.monotonic()
        result = "error"
        try:
            obj = CachedResources(primary, namespace).get(name, namespace)
            if obj is None or not self.in_scope(obj):
                queue.forget(key)  # gone: nothing to reconcile
                result = ""
                return
            ctx = Context(self.name, key, primary.config, sources, self.logger, queue.num_requeues(key))
            with self._lock:
                self._active += 1
            self.observer.workers(self._active)
            try:
                outcome = self._call(obj, ctx)
            finally:
                with self._lock:
                    self._active -= 1
                self.observer.workers(self._active)
            result = self._handle_outcome(queue, key, outcome)
        except Wait as wait:
            result = self._handle_outcome(queue, key, wait)
        except TerminalError as exc:
            self.logger.error("controller %s: %s: terminal error (not retried): %s", self.name, key, exc)
            queue.forget(key)
        except concurrent.futures.CancelledError:
            self.logger.warning("controller %s: %s: reconcile cancelled (shutting down)", self.name, key)
        except Exception as exc:
            if stopping.is_set():
                self.logger.warning("controller %s: %s: reconcile failed while stopping: %s", self.name, key, exc)
            else:
                self.logger.error("controller %s: %s: reconcile failed (retry %d): %s: %s", self.name, key,
                                  queue.num_requeues(key) + 1, type(exc).__name__, exc,
                                  exc_info=self.logger.isEnabledFor(logging.DEBUG))
            queue.add_rate_limited(key)
        finally:
            if result:
                self.observer.reconciled(result, time.monotonic() - started)

    def _call(self, obj: Any, ctx: Context) -> Any:
        func = self._reconcile
        assert func is not None
        args = (obj, ctx) if self._pass_ctx else (obj,)
        if not self._is_async:
            return func(*args)
        loop = self._loop
        if loop is None:
            raise RuntimeError(f"controller {self.name!r}: its event loop is not running")
        return loop.submit(func(*args)).result()

    def _handle_outcome(self, queue: WorkQueue, key: str, outcome: Any) -> str:
        if isinstance(outcome, Wait):
            self.logger.info("controller %s: %s: waiting %gs: %s", self.name, key, outcome.after, outcome.reason)
            queue.forget(key)
            queue.add_after(key, outcome.after)
            return "requeue_after"
        if isinstance(outcome, Result):
            if outcome.requeue_after is not None:
                queue.forget(key)
                queue.add_after(key, outcome.requeue_after)
                return "requeue_after"
            if outcome.requeue:
                queue.add_rate_limited(key)
                return "requeue"
            outcome = None
        if outcome is not None:
            raise TypeError(f"reconcile returned {type(outcome).__name__}; expected None, Result or Wait")
        queue.forget(key)
        if self._every is not None:
            queue.add_after(key, self._every)
        return "success"

    # ---------------------------------------------------- standalone use
    def start(self, config: Config | None = None) -> Controller:
        """Start the informers (waiting for their sync) and the workers, without a Manager."""
        self._start_informers(config)
        try:
            self._start_workers()
        except BaseException:
            self._stop_informers()
            raise
        return self

    def stop(self) -> bool:
        """Stop the workers (waiting up to ``shutdown_timeout``), then the informers."""
        finished = self._stop_workers()
        self._stop_informers()
        return finished

    def __enter__(self) -> Controller:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _check_kind(kind: Any, where: str) -> None:
    for attr in ("kind", "plural", "namespaced", "api_version"):
        if getattr(kind, attr, None) is None:
            raise TypeError(f"{where}: {kind!r} is not a resource class (it has no {attr})")


def _takes_context(func: Callable[..., Any]) -> bool:
    """Does ``func`` take ``(obj, ctx)`` rather than ``(obj)``?"""
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return True
    if len(positional) >= 2:
        return True
    if not positional:
        raise TypeError(f"reconcile function {getattr(func, '__qualname__', func)!r} must take the object: "
                        "def f(obj) or def f(obj, ctx)")
    return False


def _describe(obj: Any) -> str:
    try:
        return key_of(obj)
    except Exception:
        return "?"
