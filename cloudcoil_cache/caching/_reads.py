"""The one read path: a cached read request turned into its answer (facts, decision, serving), as a
flow that yields its waits, then its answer, to a sync or an async driver."""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable, Final, Iterator, NamedTuple, Protocol

from cloudcoil_cache._listwatch import parse_field_selector, parse_label_selector, undecided_field_paths
from cloudcoil_cache._threads import run_control
from cloudcoil_cache.caching._counts import FALLBACK, HIT, LIVE_READ, MISS, REFUSAL
from cloudcoil_cache.caching._informer import Informer, InformerKey
from cloudcoil_cache.caching._pages import cut_page
from cloudcoil_cache.caching._policy import (
    CacheFacts,
    InformerFacts,
    Mode,
    ReadLive,
    ReadRequest,
    Refuse,
    Serve,
    WaitForSync,
    decide,
    get_request,
    informer_facts,
)
from cloudcoil_cache.caching._views import filter_objects
from cloudcoil_cache.errors import CacheUnavailableError, IndexUnavailableError, ResourceNotFound

__all__ = [
    "LIVE",
    "Page",
    "ReadFlow",
    "ReadSource",
    "Wait",
    "drive",
    "drive_async",
    "index_unavailable",
    "list_selector_problem",
    "policy_get",
    "read",
]

log = logging.getLogger(__name__)


class _Live:
    """The answer "read it from the API server" (the cache cannot serve it, in fallback mode)."""

    def __repr__(self) -> str:
        return "LIVE"


LIVE: Final = _Live()


class Page(NamedTuple):
    """A list served from the cache: the objects (shared, read-only) and the list's metadata."""

    items: list[Any]
    metadata: dict[str, Any]


class Wait:
    """A blocking wait the flow needs before it decides again (a lazy sync, a write's delivery):
    a driver calls ``call()`` in its thread, or off the event loop."""

    __slots__ = ("call",)

    def __init__(self, call: Callable[[], object]) -> None:
        self.call = call


#: ``read()``'s generator: yields ``Wait``s, then (last) its answer: the object (a get), a ``Page``
#: (a list) or ``LIVE``. The answer is yielded, not returned: a for loop then ends the flow without
#: a StopIteration carrying a value (~0.6 µs of a ~10 µs cached get).
ReadFlow = Iterator[Any]

#: Rounds of deciding: wait for a lazy sync, then for writes, then decide for good.
_ROUNDS = 3


class ReadSource(Protocol):
    """What the read flow asks of the cache it reads through (a ``Cache``: it binds the readers
    that use this flow, so the flow names only these): its facts, its lazy sync, its wait for
    writes, and resuming in a process forked since."""

    @property
    def read_your_writes_timeout(self) -> float: ...

    def read_facts(self, cls: Any, namespace: str | None = None) -> tuple[CacheFacts, Informer[Any] | None, Mode]: ...

    def namespace_set(self, cls: Any) -> tuple[str, ...] | None: ...

    def sync_lazily(self, cls: Any) -> None: ...

    def resume_after_fork(self) -> None: ...

    def count_read(self, cls: Any, outcome: int) -> None: ...


# ----------------------------------------------------------------- drivers
def drive(flow: ReadFlow) -> Any:
    """Run a read flow in this thread: each wait it yields is called here; the last step is the answer."""
    answer = None
    for step in flow:
        if step.__class__ is Wait:
            step.call()
        else:
            answer = step
    return answer


async def drive_async(flow: ReadFlow) -> Any:
    """Run a read flow on the event loop (memory only, no thread hop); each wait runs off the loop."""
    answer = None
    for step in flow:
        if step.__class__ is Wait:
            await run_control(step.call)
        else:
            answer = step
    return answer


def policy_get(
    cache: ReadSource,
    cls: Any,
    name: str,
    namespace: str | None,
    live: Callable[[str, str | None], Any] | None = None,
    mode: Mode | None = None,
    selector_is_scope: bool = False,
) -> Any:
    """A get as the read policy answers it: the stored object, ``ResourceNotFound``,
    ``CacheUnavailableError``, or (the policy says read the API server) ``live(name, namespace)``.

    ``name`` and ``namespace`` are the request's, checked and defaulted by the caller (``namespace``
    None for a cluster-scoped kind); ``cls`` is bound (its plural known). Without ``live``, a read
    the cache does not serve is refused (``CacheUnavailableError``).
    """
    request = get_request(cls.kind, namespace, name, mode, selector_is_scope)
    answer = drive(read(cache, cls, request))
    if answer is LIVE:
        if live is None:
            raise CacheUnavailableError(
                f"cannot serve {request.what} from the cache: it is bypassed (disabled or paused) "
                "and this reader never reads the API server",
                reason="the cache is bypassed",
            )
        return live(name, namespace)
    return answer


def read(cache: ReadSource, cls: Any, request: ReadRequest, index: tuple[str, str] | None = None) -> ReadFlow:
    """A cached read of ``cls`` (``Pod.get``/``Pod.list``, ``ctx.cached``; an admission request's
    ``request.cached``): every read through a cache goes through here.

    Gathers the facts (memory only, no lock), lets the pure policy decide, and serves from the
    informer's store. Yields a ``Wait`` for what it must wait for (run it with a driver: the wait
    is called in the caller's thread, or off the event loop), and last its answer: the stored
    object (a get), a ``Page`` (a list), or ``LIVE``. Raises ``ResourceNotFound`` (a get the cache
    can answer "not found") and ``CacheUnavailableError`` (refused: strict mode, or a page the API
    server cannot continue).

    ``index``: a list asks the informer's index ``(name, value)`` (O(matches)); a refusal is an
    ``IndexUnavailableError`` naming it, and the answer is never ``LIVE``'s read from the API
    server without the caller knowing (the caller raises: the API server has no index).
    """
    across = _over_set(cache, cls, request, index)
    return _read_one(cache, cls, request, index) if across is None else across


def _read_one(cache: ReadSource, cls: Any, request: ReadRequest, index: tuple[str, str] | None) -> ReadFlow:
    """``read`` through one informer (the kind's, or its namespace's in a set)."""
    waited = False
    for _ in range(_ROUNDS):
        cache_facts, informer, mode = cache.read_facts(cls, request.namespace)
        found = None
        facts = None
        if informer is not None:
            # Pending writes before the store: a write is no longer pending only once its event is in
            # the store, so the object read after is there (read the other way round, the event could
            # land in between: a miss with no write pending, a strict get's ResourceNotFound).
            pending = informer.writes.pending(None if request.all_namespaces else request.namespace, request.name)
            if request.name is not None:
                found = informer.store.get(request.namespace, request.name)
            facts = _facts(informer, request, found is not None, pending)
        decision = decide(cache_facts, facts, request, request.mode or mode, writes_waited=waited)
        if isinstance(decision, Serve):
            assert informer is not None
            cache.count_read(cls, HIT if request.name is None or found is not None else MISS)
            if request.name is None:
                yield _serve_list(informer, request, index)
                return
            if found is None:
                plural = informer.key.cls.plural  # type: ignore[attr-defined]
                where = f' in namespace "{request.namespace}"' if request.namespace else ""  # where it looked
                watched = informer.key.describe()
                raise ResourceNotFound(
                    f'{plural} "{request.name}" not found in cache{where} (the cache watches {watched})',
                    reason="NotFound",
                )
            yield found
            return
        if isinstance(decision, Refuse):
            cache.count_read(cls, REFUSAL)
            raise _refused(decision, request, index)
        if isinstance(decision, ReadLive):
            if index is not None:  # the API server has no index: nothing to fall back to
                cache.count_read(cls, REFUSAL)
                raise index_unavailable(
                    request.kind, index[0], f"{decision.reason}; the API server has no index to read instead"
                )
            cache.count_read(cls, LIVE_READ if decision.bypass else FALLBACK)
            if not decision.bypass:
                log.debug("cache cannot serve %s (%s); reading from the API server", request.what, decision.reason)
            yield LIVE
            return
        if isinstance(decision, WaitForSync):
            yield Wait(functools.partial(cache.sync_lazily, cls))
        else:  # WaitForWrites
            assert informer is not None
            yield Wait(
                functools.partial(
                    informer.writes.wait,
                    None if request.all_namespaces else request.namespace,
                    request.name,
                    cache.read_your_writes_timeout,
                    (request.mode or mode) != Mode.FALLBACK,  # fallback can read live instead of waiting again
                )
            )
            waited = True
    cache.count_read(cls, FALLBACK)
    yield LIVE


def _over_set(cache: ReadSource, cls: Any, request: ReadRequest, index: tuple[str, str] | None) -> ReadFlow | None:
    """The flow of a read of a kind over a set of namespaces that is not one namespace's of the set
    (all of them: merged; one outside: live or refused); None for any other read."""
    spread = cache.namespace_set(cls)
    if spread is None:
        return None
    cache_facts, _, mode = cache.read_facts(cls)
    if not cache_facts.enabled or cache_facts.paused or not cache_facts.kind_enabled:
        return None
    if not spread and not cache_facts.started:  # an empty set (a NamespaceSelector's) of a stopped cache
        return None  # what a stopped cache answers (no informer decides for the set)
    if request.all_namespaces or not request.namespace:
        return _read_across(cache, cls, request, index, spread)
    if request.namespace not in spread:
        return iter((_outside(cache, cls, request, index, spread, request.mode or mode),))
    return None


def _outside(
    cache: ReadSource,
    cls: Any,
    request: ReadRequest,
    index: tuple[str, str] | None,
    spread: tuple[str, ...],
    mode: Mode,
) -> Any:
    """A read of a namespace outside the kind's set: ``LIVE`` (fallback), else refused naming the set."""
    reason = f"namespace {request.namespace!r} is outside the cache's set of namespaces {list(spread)!r}"
    if mode is Mode.STRICT or index is not None:
        cache.count_read(cls, REFUSAL)
        if index is not None:
            raise index_unavailable(request.kind, index[0], reason)
        raise CacheUnavailableError(f"cannot serve {request.what} from the cache: {reason}", reason=reason)
    cache.count_read(cls, FALLBACK)
    log.debug("cache cannot serve %s (%s); reading from the API server", request.what, reason)
    return LIVE


def _read_across(
    cache: ReadSource, cls: Any, request: ReadRequest, index: tuple[str, str] | None, spread: tuple[str, ...]
) -> ReadFlow:
    """A list of every namespace of a kind over a set: each namespace's informer decides on its
    part; served when every one serves (the items merged, ``metadata["namespaces"]`` naming the set
    covered, ``resourceVersion`` "": no one version describes several watches), else the first
    other decision (a refusal, a live read, a wait)."""
    waited = False
    for _ in range(_ROUNDS):
        parts: list[tuple[Informer[Any], ReadRequest]] = []
        decision: Any = None
        for namespace in spread:
            cache_facts, informer, mode = cache.read_facts(cls, namespace)
            part = request._replace(namespace=namespace, all_namespaces=False)
            facts = None
            if informer is not None:
                facts = _facts(informer, part, False, informer.writes.pending(namespace, None))
            decision = decide(cache_facts, facts, part, request.mode or mode, writes_waited=waited)
            if not isinstance(decision, Serve):
                break
            assert informer is not None
            parts.append((informer, part))
        else:
            cache.count_read(cls, HIT)
            objs: list[Any] = []
            for informer, part in parts:
                objs.extend(_select(informer, part, index))
            metadata: dict[str, Any] = {"resourceVersion": "", "namespaces": list(spread)}
            yield Page(cut_page(objs, metadata, request.limit, request.continue_), metadata)
            return
        if isinstance(decision, Refuse):
            cache.count_read(cls, REFUSAL)
            raise _refused(decision, request, index)
        if isinstance(decision, ReadLive):
            if index is not None:
                cache.count_read(cls, REFUSAL)
                raise index_unavailable(request.kind, index[0], decision.reason)
            cache.count_read(cls, LIVE_READ if decision.bypass else FALLBACK)
            yield LIVE
            return
        if isinstance(decision, WaitForSync):
            yield Wait(functools.partial(cache.sync_lazily, cls))
        else:  # WaitForWrites, in the namespace that decided it
            _, informer, mode = cache.read_facts(cls, part.namespace)
            if informer is not None:
                yield Wait(
                    functools.partial(
                        informer.writes.wait,
                        part.namespace,
                        None,
                        cache.read_your_writes_timeout,
                        (request.mode or mode) != Mode.FALLBACK,
                    )
                )
            waited = True
    cache.count_read(cls, FALLBACK)
    yield LIVE


def _refused(decision: Refuse, request: ReadRequest, index: tuple[str, str] | None = None) -> CacheUnavailableError:
    if index is not None:
        return index_unavailable(request.kind, index[0], decision.reason, decision.last_error)
    suffix = " (continuing a page the cache served)" if decision.continuing else ""
    return CacheUnavailableError(
        f"cannot serve {request.what}{suffix} from the cache: {decision.reason}",
        reason=decision.reason,
        last_error=decision.last_error,
    )


def index_unavailable(
    kind: str, name: str, reason: str, last_error: BaseException | None = None
) -> IndexUnavailableError:
    """The error of a list that asked index ``name`` of ``kind`` and cannot be answered (``reason``)."""
    return IndexUnavailableError(
        f"cannot serve a list of {kind} by index {name!r}: {reason}", index=name, reason=reason, last_error=last_error
    )


def _serve_list(informer: Informer[Any], request: ReadRequest, index: tuple[str, str] | None = None) -> Page:
    rv: list[str] = []
    objs = _select(informer, request, index, rv)
    metadata: dict[str, Any] = {"resourceVersion": rv[0] if rv else ""}
    return Page(cut_page(objs, metadata, request.limit, request.continue_), metadata)


def _select(
    informer: Informer[Any], request: ReadRequest, index: tuple[str, str] | None = None, rv: list[str] | None = None
) -> list[Any]:
    """The stored objects ``request`` selects (its namespace, index, selectors; no page cut);
    the snapshot's resourceVersion appended to ``rv``."""
    store = informer.store
    field_selector = request.field_selector
    snapshot = None
    if index is not None:
        snapshot = store.index_snapshot(index[0], index[1], request.namespace)
        if snapshot is None:
            names = ", ".join(store.index_names()) or "none"
            raise index_unavailable(
                request.kind, index[0], f"the informer has no index of that name (its indexes: {names})"
            )
    elif field_selector is not None:
        served = _by_field_index(store, request.namespace, field_selector)
        if served is not None:
            snapshot, field_selector = served
    if snapshot is None:
        snapshot = store.snapshot(request.namespace)  # items and RV in one step
    objs, version = snapshot
    if rv is not None:
        rv.append(version or "")
    return filter_objects(objs, request.label_selector, field_selector)


def _by_field_index(
    store: Any, namespace: str | None, field_selector: str
) -> tuple[tuple[list[Any], str | None], str | None] | None:
    """A field selector with a term ``path=value`` whose path names an index: that index's objects
    and the selector's other terms (None: none), which still apply; None when no term names an
    index. An index named after a field files each object under that field's value (documented)."""
    if "=" not in field_selector:
        return None
    terms = parse_field_selector(field_selector).terms
    for i, (path, op, value) in enumerate(terms):
        if op == "=" and value and store.has_index(path):
            found: tuple[list[Any], str | None] = store.index_snapshot(path, value, namespace)
            rest = ",".join(f"{p}{o}{v}" for p, o, v in terms[:i] + terms[i + 1 :])
            return found, rest or None
    return None


def _facts(informer: Informer[Any], request: ReadRequest, found: bool, writes_pending: bool) -> InformerFacts:
    state, since = informer.state()
    key = informer.key
    name = request.name
    return informer_facts(
        key,
        informer.has_synced(),
        state,
        since,
        informer.max_staleness,
        informer.last_error,
        informer.store.complete,
        informer.incomplete_reason,
        None if name is not None else list_selector_problem(key, request),
        writes_pending,
        found,
    )


def list_selector_problem(key: InformerKey, request: ReadRequest) -> str | None:
    """Why an informer of ``key`` cannot answer the selectors of the list ``request`` (None: it can)."""
    return _undecided_problem(key, request.field_selector) or (
        None
        if not (key.label_selector or key.field_selector)
        else _selector_problem(key, request.label_selector, request.field_selector)
    )


def _selector_problem(key: InformerKey, label_selector: str | None, field_selector: str | None) -> str | None:
    """Selectors are served in memory when the informer has none, or exactly the same one."""
    # Compared as sets of requirements: "a=1,b=2" and "b=2, a=1" are the same selector.
    pairs = (
        (key.label_selector, label_selector, "label", lambda t: frozenset(parse_label_selector(t).requirements)),
        (key.field_selector, field_selector, "field", lambda t: frozenset(parse_field_selector(t).terms)),
    )
    for have, want, what, parse in pairs:
        if have and parse(have) != parse(want):
            return (
                f"selector not servable: the informer watches only {what} selector {have!r}, "
                f"the read asks for {(want or 'everything')!r}"
            )
    return None


def _undecided_problem(key: InformerKey, field_selector: str | None) -> str | None:
    """A custom resource's field the cache cannot vouch for: only its CRD says whether it is selectable."""
    paths = undecided_field_paths(key.cls, field_selector) if field_selector else []
    if not paths:
        return None
    kind = getattr(key.cls, "kind", key.cls.__name__)
    return (
        f"selector not servable: whether {kind} can be selected on {', '.join(paths)} is "
        "up to its CustomResourceDefinition's selectableFields, which only the API server knows"
    )
