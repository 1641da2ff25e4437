"""One reader per kind, bound once by its cache (``CacheReader``); cloudcoil's ``CachedResources``, a view of one."""

from __future__ import annotations

import contextvars
import weakref
from typing import Any, Callable, Generic, Mapping, Protocol, TypeVar

from cloudcoil_cache import _fork
from cloudcoil_cache.caching._informer import Informer
from cloudcoil_cache.caching._policy import (
    CacheFacts,
    InformerFacts,
    InformerState,
    Mode,
    ReadRequest,
    Serve,
    decide,
    get_request,
    informer_facts,
    serves_at,
)
from cloudcoil_cache.caching._reads import ReadSource, list_selector_problem, policy_get
from cloudcoil_cache.caching._views import InformerView

__all__ = ["CacheReader", "CachedResources", "Covered", "Running", "SetReader", "copies", "hit_facts"]

T = TypeVar("T")

#: ``CacheReader``'s pause flag when it belongs to no cache: never paused.
_NEVER: contextvars.ContextVar[bool] = contextvars.ContextVar("cloudcoil_cache_never_paused", default=False)


class Running(Protocol):
    """A cache's reference-counted run, as a reader sees it (``caching._owner.Scopes``)."""

    count: int


class _NotRunning:
    """The run of a reader of no cache: never started (its hits are off anyway)."""

    count = 0


_NOT_RUNNING = _NotRunning()


def _no_cache() -> None:
    return None


def hit_facts(cache: CacheFacts, informer: Informer[Any]) -> tuple[bool, bool]:
    """Whether the read policy serves, in both modes, (1) a get of a stored object and (2) a list
    of one namespace (or of every namespace the informer watches) without selectors, page or
    continue token, whenever the cache is as ``cache`` says and the informer's verdict serves
    ("current" or "degraded"), the read lies in the informer's scope, no write is pending there
    and the store is complete.

    ``decide`` itself answers, once per reader, on those facts: a reader's hit path then only
    checks that each fact that can change from one read to the next is still the one decided on
    (the cache's pause and run, the informer's verdict at this moment, the scope, the writes
    pending, the object in the store, the store's completeness). Anything else goes to ``decide``.
    """
    key = informer.key
    cls: Any = key.cls
    scope = key.namespace
    namespace = scope or ("default" if cls.namespaced else None)  # a namespace inside the scope
    gets = [get_request(cls.kind, namespace, "name")]
    lists = [ReadRequest(cls.kind, namespace, None, namespace is None)]
    if cls.namespaced and not scope:
        lists.append(ReadRequest(cls.kind, None, None, True))  # every namespace
    served = [
        all(
            isinstance(decide(cache, _serving_facts(informer, state, request), request, mode), Serve)
            for request in requests
            for state in (InformerState.CURRENT, InformerState.DEGRADED)
            for mode in Mode
        )
        for requests in (gets, lists)
    ]
    return served[0], served[1]


def _serving_facts(informer: Informer[Any], state: InformerState, request: ReadRequest) -> InformerFacts:
    """The facts of an informer whose verdict serves (``state``), as the hit path finds them."""
    key = informer.key
    return informer_facts(
        key,
        True,  # synced: a verdict that serves is never built for an informer that is not
        state,
        0.0,
        informer.max_staleness,
        None,
        True,  # complete: the hit path checks it for lists
        informer.incomplete_reason,
        None if request.name is not None else list_selector_problem(key, request),
        False,  # no write pending: the hit path checks it
        True,  # found: the hit path serves only what the store holds
    )


class CacheReader(Generic[T]):
    """The reads of one kind through one cache (controller-runtime's ``CacheReader``, kube-rs's
    ``Store`` handle): its informer, the informer's store and write tracker, and the informer's
    serving verdict (``Informer.serving``, rebuilt by the informer at each change of its state).

    The cache binds one per informer, once (``Cache.reader(cls)``). ``hit()`` and ``hit_list()``
    answer what the read policy serves at once, without building a request or gathering facts;
    ``get()`` asks the policy (``caching._reads.read``: ``decide``) about anything else. Every
    other reader of a kind (``Pod.get``, ``ctx.cached``, ``request.cached``, ``KindReader``,
    ``CachedResources``) is a view of it: shared objects or copies, falling back or raising.

    Thread safety: every method may be called from any thread; nothing here takes a lock but the
    store's (an unbounded store's ``get`` takes none) and the write tracker's.
    """

    def __init__(
        self,
        informer: Informer[T],
        cache: ReadSource | None = None,
        *,
        facts: CacheFacts | None = None,
        paused: contextvars.ContextVar[bool] = _NEVER,
        run: Running = _NOT_RUNNING,
    ) -> None:
        """Bound by ``cache`` (held weakly): ``facts``, the cache's facts when it serves (enabled,
        not paused, started: ``hit_facts`` asks ``decide`` about them once); ``paused``, its pause
        flag (per thread/task); ``run``, its reference-counted run (``count``: started when > 0).
        Without a cache, a reader of a bare informer: no hits, no policy (``CachedResources``'s)."""
        key = informer.key
        cls: Any = key.cls
        self.cls: Any = cls
        self.informer = informer
        self.store = informer.store
        self.writes = informer.writes
        #: whether the kind is namespaced (a get then needs a namespace; a list may cover them all)
        self.namespaced: bool = bool(cls.namespaced)
        #: the namespace the informer watches (None: all)
        self.scope: str | None = key.namespace
        self._clock = informer.clock
        self._epoch = _fork.epoch
        self._cache: Callable[[], ReadSource | None] = _no_cache if cache is None else weakref.ref(cache)
        self._paused = paused
        self._run = run
        self._hits, self._lists = (False, False) if cache is None or facts is None else hit_facts(facts, informer)
        #: reads answered by ``hit``/``hit_list`` (the cache's ``status().reads``): a plain increment
        #: without a lock, so approximate under threads (an increment may be lost, never invented)
        self.hits = 0

    def __repr__(self) -> str:
        return f"<CacheReader {self.informer.key.describe()}>"

    # ---------------------------------------------------------------- hits
    def hit(self, name: str, namespace: str | None = None) -> T | None:
        """The stored object (shared, read-only) when the read policy serves this get at once, else
        None: then ``get()`` (the policy) answers: a miss, a refusal, a wait or a live read.

        ``namespace``: the request's (a namespaced kind's must be given: None or "" is never a hit;
        a cluster-scoped kind's is ignored).
        """
        if not self._hits or self._paused.get() or not self._run.count:
            return None
        if _fork.epoch != self._epoch:
            self._resume()
        verdict = self.informer.serving
        if verdict is not True and (verdict is None or not serves_at(verdict, self._clock.now())):
            return None
        if self.namespaced:
            scope = self.scope
            if namespace.__class__ is not str or not namespace or (scope and namespace != scope):
                return None
        elif namespace is None or namespace.__class__ is str:
            namespace = None
        else:
            return None  # the caller's checks name the type
        if name.__class__ is not str or self.writes.pending(namespace, name):
            return None
        return self.store.get(namespace, name)

    def hit_list(self, namespace: str | None) -> tuple[list[T], str] | None:
        """The objects of ``namespace`` (None: of every namespace the informer watches; None for a
        cluster-scoped kind) and the resourceVersion that describes them, when the read policy
        serves a list without selectors, page or continue token at once; else None (then
        ``read()`` answers). The list is new; its objects are shared, read-only."""
        if not self._serves_list(namespace):
            return None
        objs, rv = self.store.snapshot(namespace)
        self.hits += 1
        return objs, rv or ""

    def hit_index(self, namespace: str | None, name: str, value: str) -> tuple[list[T], str] | None:
        """``hit_list`` through the informer's index ``name``: the objects whose index holds
        ``value`` (O(matches)), when the read policy serves such a list at once; else None (then
        ``read()`` answers, and names an index the informer lacks)."""
        if not self._serves_list(namespace):
            return None
        found = self.store.index_snapshot(name, value, namespace)
        if found is None:
            return None
        self.hits += 1
        return found[0], found[1] or ""

    def _serves_list(self, namespace: str | None) -> bool:
        """Whether the read policy serves a list of ``namespace`` (None: every namespace) at once: the
        facts that change between reads (``hit`` checks the same for a get, written out: it is hotter)."""
        if not self._lists or self._paused.get() or not self._run.count:
            return False
        if _fork.epoch != self._epoch:
            self._resume()
        verdict = self.informer.serving
        if verdict is not True and (verdict is None or not serves_at(verdict, self._clock.now())):
            return False
        if namespace is None:
            if self.scope and self.namespaced:
                return False  # every namespace, from an informer that watches one
        elif not self.namespaced or (self.scope and namespace != self.scope):
            return False
        return self.store.complete and not self.writes.pending(namespace, None)

    def _resume(self) -> None:
        """Forked since the last read: the cache resumes its informers in this process first."""
        cache = self._cache()
        if cache is not None:
            cache.resume_after_fork()
        self._epoch = _fork.epoch

    def serving(self) -> bool:
        """Whether the informer serves reads now: "current", or "degraded" within ``max_staleness``
        (its verdict against its clock; the cache's own state aside)."""
        verdict = self.informer.serving
        return verdict is True or (verdict is not None and serves_at(verdict, self._clock.now()))

    # ------------------------------------------------------------- the policy
    def get(
        self,
        name: str,
        namespace: str | None = None,
        live: Callable[[str, str | None], T] | None = None,
        mode: Mode | None = None,
        selector_is_scope: bool = False,
    ) -> T:
        """A get as the read policy answers it: a hit at once, else ``caching._reads.policy_get``
        (the stored object, ``ResourceNotFound``, ``CacheUnavailableError``, or ``live(name,
        namespace)`` when the policy reads the API server; without ``live`` that is refused).

        ``namespace``: the request's, checked and defaulted by the caller. ``mode``: this read's
        (None: the cache's in this thread/task). ``selector_is_scope``: a get outside the
        informer's selectors is "not found", not unservable (a controller's reads).
        """
        found = self.hit(name, namespace)
        if found is not None:
            return found
        cache = self._cache()
        if cache is None:
            raise RuntimeError(f"{self!r} belongs to no cache: it only reads its informer's store")
        answer: T = policy_get(
            cache, self.cls, name, namespace if self.namespaced else None, live, mode, selector_is_scope
        )
        return answer


class Covered(list[Any]):
    """The objects of a list of every namespace of a set (``SetReader.hit_list(None)``):
    ``namespaces`` names the namespaces it covers (the client makes it a ``CoveringList``)."""

    __slots__ = ("namespaces",)

    def __init__(self, namespaces: tuple[str, ...]) -> None:
        super().__init__()
        self.namespaces = namespaces


class SetReader(CacheReader[T]):
    """The reads of one kind watched over a set of namespaces (one informer each): a get or a list
    of a namespace of the set is the hit of that namespace's reader; a list of every namespace
    merges their hits (``Covered``: the namespaces it covers, the answer the read policy gives,
    resourceVersion ""). Anything else (a namespace outside the set, a miss, selectors) goes to the
    read policy (``get()``: ``caching._reads``, which merges or refuses naming the set).

    The cache binds one per kind, once; ``bind`` replaces the readers per namespace (one tuple
    assignment: a read sees the set before or after a change, never a mix) at each change."""

    def __init__(self, cls: Any, cache: ReadSource, *, count_gets: bool = False) -> None:
        # no informer of its own: the attributes a view of the reader asks for, then the set's readers
        self.cls = cls
        self.namespaced = True
        self.scope = None
        self._cache = weakref.ref(cache)
        self._count_gets = count_gets
        #: (the namespaces of the set, in order, each with a reader; their readers; whether every
        #: namespace of the set has one: else a list of all of them is the policy's)
        self._set: tuple[tuple[str, ...], Mapping[str, CacheReader[T]], bool] = ((), {}, True)
        self.hits = 0

    def __repr__(self) -> str:
        return f"<SetReader {getattr(self.cls, 'kind', self.cls)} over {list(self._set[0])!r}>"

    def bind(self, readers: Mapping[str, CacheReader[T]], whole: bool = True) -> None:
        """The set's readers now (namespace → its informer's reader, in the set's order); ``whole``:
        every namespace of the set has one (else only the lists of one namespace are hits)."""
        self._set = (tuple(readers), dict(readers), whole)

    @property
    def namespaces(self) -> tuple[str, ...]:
        """The namespaces the reader answers for now."""
        return self._set[0]

    def hit(self, name: str, namespace: str | None = None) -> T | None:
        if namespace.__class__ is not str:
            return None
        reader = self._set[1].get(namespace)
        if reader is None:
            return None
        found = reader.hit(name, namespace)
        if found is not None and self._count_gets:
            self.hits += 1
        return found

    @staticmethod
    def _all_serve(whole: bool, readers: Mapping[str, CacheReader[T]]) -> bool:
        """Can every namespace's reader serve a list now (an all-namespaces read merges them)? Not
        without readers: no reader is there to check the cache's run and pause (the policy's)."""
        return whole and bool(readers) and all(reader._serves_list(ns) for ns, reader in readers.items())

    def hit_list(self, namespace: str | None) -> tuple[list[T], str] | None:
        namespaces, readers, whole = self._set
        if namespace is not None:
            reader = readers.get(namespace) if namespace.__class__ is str else None
            found = None if reader is None else reader.hit_list(namespace)
            if found is not None:
                self.hits += 1
            return found
        if not self._all_serve(whole, readers):
            return None
        merged = Covered(namespaces)
        for ns, reader in readers.items():
            merged.extend(reader.store.snapshot(ns)[0])
        self.hits += 1
        return merged, ""

    def hit_index(self, namespace: str | None, name: str, value: str) -> tuple[list[T], str] | None:
        namespaces, readers, whole = self._set
        if namespace is not None:
            reader = readers.get(namespace) if namespace.__class__ is str else None
            return None if reader is None else reader.hit_index(namespace, name, value)
        if not self._all_serve(whole, readers):
            return None
        merged = Covered(namespaces)
        for ns, reader in readers.items():
            found = reader.store.index_snapshot(name, value, ns)
            if found is None:
                return None  # no such index: the policy names it
            merged.extend(found[0])
        return merged, ""

    def serving(self) -> bool:
        return all(reader.serving() for reader in self._set[1].values())


class CachedResources(Generic[T]):
    """Reads of one kind from an informer view, as cloudcoil's ``CachedResources``: a view of a
    ``CacheReader`` of the view's informer that copies and raises.

    ``get``/``list`` return editable deep copies (``obj.copy()``), never call the API server and never
    fall back: a miss is ``None`` / ``[]``. An informer that is not running and synced raises
    ``RuntimeError("Informer is not running and synced")``; one whose watch stopped serving (a hard
    failure, or stale past ``max_staleness``) raises ``RuntimeError("Informer watch failed")`` from
    its error.
    """

    def __init__(self, informer: InformerView[T], namespace: str | None = None) -> None:
        self._view = informer
        self._namespace = namespace
        self._reader: CacheReader[T] = CacheReader(informer._informer)

    def _check(self) -> None:
        reader = self._reader
        if reader.serving():
            return
        informer = reader.informer
        if not informer.started or not informer.has_synced():
            raise RuntimeError("Informer is not running and synced")
        raise RuntimeError("Informer watch failed") from informer.last_error

    def _in(self, namespace: str | None) -> str | None:
        return namespace or self._namespace or self._view.namespace

    def get(self, name: str, namespace: str | None = None) -> T | None:
        """A deep copy of the cached object, or None."""
        self._check()
        reader = self._reader
        if reader.namespaced:
            namespace = self._in(namespace)
            if not namespace:
                raise ValueError("Specify a namespace for a namespaced cache lookup")
        obj = reader.store.get(namespace if reader.namespaced else None, name)
        return None if obj is None else obj.copy()  # type: ignore[attr-defined]

    def list(
        self, namespace: str | None = None, *, all_namespaces: bool = False, labels: Mapping[str, str] | None = None
    ) -> list[T]:
        """Deep copies of the cached objects of a namespace (or all), with labels matching exactly."""
        self._check()
        reader = self._reader
        if namespace and all_namespaces:
            raise ValueError("namespace and all_namespaces are mutually exclusive")
        if reader.namespaced and not all_namespaces:
            namespace = self._in(namespace)
            if not namespace:
                raise ValueError("Specify namespace or all_namespaces=True")
        else:
            namespace = None
        return copies(reader.store.list(namespace), labels)

    def __repr__(self) -> str:
        return f"<CachedResources {self._reader.informer.key.describe()}>"


def copies(objs: list[Any], labels: Mapping[str, str] | None = None) -> list[Any]:
    """Editable deep copies of the objects whose labels include every pair of ``labels``."""
    if labels:
        wanted = dict(labels).items()
        objs = [o for o in objs if all((o.metadata.labels or {}).get(k) == v for k, v in wanted)]
    return [o.copy() for o in objs]
