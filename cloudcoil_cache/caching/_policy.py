"""The read policy as pure functions: informer state from its health facts, and serve / read live / wait / refuse."""

from __future__ import annotations

import enum
from typing import Any, Callable, NamedTuple, Union

import attrs

from cloudcoil_cache.caching._pages import decode_token, is_cache_token
from cloudcoil_cache.errors import Forbidden, ResourceNotFound

__all__ = [
    "CacheFacts",
    "Decision",
    "InformerFacts",
    "InformerState",
    "Mode",
    "ReadLive",
    "ReadRequest",
    "Refuse",
    "Serve",
    "WaitForSync",
    "WaitForWrites",
    "decide",
    "get_request",
    "in_scope",
    "informer_facts",
    "informer_state",
    "refuses_reads",
    "serves_at",
    "serving_verdict",
]


class Mode(str, enum.Enum):
    """What a read does when the cache cannot serve it."""

    STRICT = "strict"  # raise CacheUnavailableError naming the reason
    FALLBACK = "fallback"  # read from the API server

    def __str__(self) -> str:
        return self.value


def in_scope(watched: str | None, namespace: str | None) -> bool:
    """Whether ``namespace`` lies inside what is watched: ``watched`` None/"" is every namespace;
    else only ``namespace == watched`` (``namespace`` None/"" asks for all namespaces: outside)."""
    return not watched or namespace == watched


def refuses_reads(exc: BaseException | None) -> bool:
    """403 (permission revoked) and 404 (the resource type is gone): the data must not be read any more."""
    return isinstance(exc, (Forbidden, ResourceNotFound))


class InformerState(str, enum.Enum):
    """An informer's state (``InformerStatus.state``); each member equals its string (``"current"``)."""

    #: not started, or stopped
    STOPPED = "stopped"
    #: the first list is not in yet
    SYNCING = "syncing"
    #: a healthy open watch
    CURRENT = "current"
    #: a transient failure, within ``max_staleness``: still serving
    DEGRADED = "degraded"
    #: unhealthy for longer than ``max_staleness``
    STALE = "stale"
    #: the server refuses the kind (403/404): the data must not be read
    FAILING = "failing"

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


def informer_state(
    *,
    started: bool,
    synced: bool,
    last_error: BaseException | None,
    unhealthy_since: float | None,
    max_staleness: float | None,
    now: float,
) -> tuple[InformerState, float | None]:
    """``(state, seconds since the informer was last current)``.

    States: ``stopped``, ``syncing`` (first list not in yet), ``current`` (a healthy open watch),
    ``degraded`` (a transient failure, within ``max_staleness``: still serving), ``stale`` (past
    it), ``failing`` (403/404: the data must not be read).
    """
    elapsed = None if unhealthy_since is None else max(0.0, now - unhealthy_since)
    if not started:
        return InformerState.STOPPED, elapsed
    if refuses_reads(last_error):
        return InformerState.FAILING, elapsed
    if not synced:
        return InformerState.SYNCING, elapsed
    if last_error is None and unhealthy_since is None:
        return InformerState.CURRENT, 0.0
    if max_staleness is not None and elapsed is not None and (max_staleness == 0 or elapsed > max_staleness):
        return InformerState.STALE, elapsed
    return InformerState.DEGRADED, elapsed


#: ``serving_verdict``'s answer: ``True`` (the informer serves reads at any time), ``None`` (it does
#: not: the policy decides) or ``(unhealthy_since, max_staleness)`` (degraded: it serves until then).
Verdict = Union[bool, tuple[float, float], None]


def serving_verdict(
    *,
    started: bool,
    synced: bool,
    last_error: BaseException | None,
    unhealthy_since: float | None,
    max_staleness: float | None,
) -> Verdict:
    """``informer_state`` decided ahead of the clock: whether the informer is "current" or "degraded"
    (the two states the policy serves from), for every ``now`` at once.

    ``serves_at(verdict, now)`` is True exactly when ``informer_state(..., now=now)`` is "current"
    or "degraded" (tests/trust/test_read_policy.py checks it on every combination). An informer
    keeps its verdict built (``Informer.serving``), rebuilt at each change of these facts, so a get
    need not gather them: the time-dependent part is the deadline it carries.
    """
    if not started or refuses_reads(last_error) or not synced:
        return None  # stopped, failing, syncing
    if last_error is None and unhealthy_since is None:
        return True  # current
    if max_staleness is None or unhealthy_since is None:
        return True  # degraded for good: no staleness limit, or no time to count from
    if max_staleness <= 0:
        return None  # stale at the first error (0; informer_state counts a negative limit as passed)
    return (unhealthy_since, max_staleness)  # degraded until max_staleness has passed


def serves_at(verdict: Verdict, now: float) -> bool:
    """Whether an informer with this ``serving_verdict`` is current or degraded at ``now`` (its clock)."""
    if verdict is True or verdict is None or verdict is False:
        return bool(verdict)
    since, limit = verdict
    # informer_state's test: stale once max(0.0, now - since) > limit, which for limit > 0 is this
    return not now - since > limit


class ReadRequest(NamedTuple):
    """One cached read: a get (``name`` set) or a list, in a namespace or all of them.

    ``limit``, ``continue_``: a list's page size and continue token (the cache's own, or the API
    server's). ``mode``: the read's own mode (None: the cache's, in the current thread/task).
    ``selector_is_scope``: the reader sees only what the informer's selectors select (a
    controller's ``ctx.cached``), so a get of an object outside them is "not found", not unservable.
    """

    kind: str
    namespace: str | None
    name: str | None = None
    all_namespaces: bool = False
    label_selector: str | None = None
    field_selector: str | None = None
    limit: int | None = None
    continue_: str | None = None
    mode: Mode | None = None
    selector_is_scope: bool = False

    @property
    def what(self) -> str:
        if self.name is not None:
            return f"get {self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"
        return f"list {self.kind} in {self.namespace or 'all namespaces'}"


class InformerFacts(NamedTuple):
    """What the policy needs to know about the informer that would answer (read in one step)."""

    key: Any  # the InformerKey (``describe()`` for messages)
    namespace: str | None  # the informer's scope (None: all namespaces)
    synced: bool
    state: InformerState
    seconds_since_current: float | None
    max_staleness: float | None
    last_error: BaseException | None
    complete: bool
    incomplete_reason: Callable[[], str]
    selector_problem: str | None  # why the request's selectors cannot be answered, if they cannot
    pending_write: bool  # a write through this Config in the request's scope is not seen yet
    found: bool = True  # a get: the informer holds the object

    @property
    def describe(self) -> str:
        return str(self.key.describe())


class CacheFacts(NamedTuple):
    """What the policy needs to know about the cache itself."""

    enabled: bool
    paused: bool
    started: bool
    kind_enabled: bool
    kind_cached: bool  # an informer exists for the kind
    lazy: bool  # Cache(resources=None): a first read creates the informer and waits for it
    metadata_only: bool = False  # the kind is cached as its metadata only: a typed read is not served


_new_tuple = tuple.__new__


def get_request(
    kind: str, namespace: str | None, name: str, mode: Mode | None = None, selector_is_scope: bool = False
) -> ReadRequest:
    """A get's ``ReadRequest``, built as the tuple it is: on every cached get's path, where
    ``ReadRequest(..., mode=...)`` (NamedTuple's keywords and defaults) costs ~1 µs."""
    request: ReadRequest = _new_tuple(
        ReadRequest, (kind, namespace, name, False, None, None, None, None, mode, selector_is_scope)
    )
    return request


def informer_facts(
    key: Any,
    synced: bool,
    state: InformerState,
    seconds_since_current: float | None,
    max_staleness: float | None,
    last_error: BaseException | None,
    complete: bool,
    incomplete_reason: Callable[[], str],
    selector_problem: str | None,
    pending_write: bool,
    found: bool,
) -> InformerFacts:
    """``InformerFacts`` built as the tuple it is (on every cached read's path)."""
    facts: InformerFacts = _new_tuple(
        InformerFacts,
        (
            key,
            key.namespace,
            synced,
            state,
            seconds_since_current,
            max_staleness,
            last_error,
            complete,
            incomplete_reason,
            selector_problem,
            pending_write,
            found,
        ),
    )
    return facts


@attrs.frozen
class Serve:
    """Answer from the informer's store."""


@attrs.frozen
class ReadLive:
    """Read from the API server; ``bypass``: the cache is off for this read (disabled or paused)."""

    reason: str
    bypass: bool = False


@attrs.frozen
class Refuse:
    """Raise ``CacheUnavailableError`` (strict mode) naming the reason."""

    reason: str
    last_error: BaseException | None = None
    continuing: bool = False  # the read continues a page the cache served (refused in both modes)


@attrs.frozen
class WaitForSync:
    """A lazily created informer must sync first (start it, wait at most ``sync_timeout``, decide again)."""


@attrs.frozen
class WaitForWrites:
    """A write through this Config is not delivered yet: wait (``read_your_writes_timeout``), decide again."""


Decision = Union[Serve, ReadLive, Refuse, WaitForSync, WaitForWrites]

_SERVE = Serve()
_WAIT_FOR_SYNC = WaitForSync()
_WAIT_FOR_WRITES = WaitForWrites()


def _cannot(reason: str, mode: Mode, last_error: BaseException | None = None) -> Decision:
    return Refuse(reason, last_error) if mode is Mode.STRICT else ReadLive(reason)


def decide(
    cache: CacheFacts, informer: InformerFacts | None, request: ReadRequest, mode: Mode, *, writes_waited: bool = False
) -> Decision:
    """The read policy (docs/contract.md "What the cache can serve"): one pure function of the facts."""
    decision = _decide(cache, informer, request, mode, writes_waited)
    if request.continue_ and isinstance(decision, ReadLive) and is_cache_token(request.continue_):
        # The API server cannot continue a page the cache started: refused in both modes.
        return Refuse(decision.reason, continuing=True)
    return decision


def _decide(
    cache: CacheFacts, informer: InformerFacts | None, request: ReadRequest, mode: Mode, writes_waited: bool
) -> Decision:
    if not cache.enabled:
        return ReadLive("the cache is disabled", bypass=True)
    if cache.paused:
        return ReadLive("the cache is paused", bypass=True)
    if not cache.kind_enabled:
        return _cannot(f"kind not cached: caching of {request.kind} is disabled by per_resource", mode)
    if cache.metadata_only:
        return _cannot(
            f"kind cached as metadata only: the cache holds PartialObjectMetadata of {request.kind}, "
            f"not whole objects (read them with PartialObjectMetadata.of({request.kind}))",
            mode,
        )
    if not cache.started:
        return _cannot("the cache is not started (enter a `with config:` scope)", mode)
    if informer is None or (cache.lazy and not informer.synced and informer.last_error is None):
        if cache.lazy:
            return _WAIT_FOR_SYNC
        return _cannot(f"kind not cached: {request.kind} is not in Cache(resources=...)", mode)
    scope = informer.namespace
    if not in_scope(scope, None if request.all_namespaces else request.namespace):
        if request.all_namespaces or not request.namespace:
            return _cannot(f"namespace outside the cache: the cache watches only {scope!r}, not all namespaces", mode)
        return _cannot(f"namespace outside the cache: {request.namespace!r} (the cache watches {scope!r})", mode)
    err = informer.last_error
    if not informer.synced:
        if err is not None:
            return _cannot(f"informer failing: {type(err).__name__}: {err}", mode, err)
        return _cannot(f"not synced yet: {informer.describe}", mode)
    if informer.state == InformerState.FAILING:
        return _cannot(f"informer failing: {type(err).__name__}: {err}", mode, err)
    if informer.state == InformerState.STALE:
        since = informer.seconds_since_current or 0.0
        return _cannot(
            f"informer stale: no healthy watch for {since:.0f} s (max_staleness "
            f"{informer.max_staleness:g} s); last error: {type(err).__name__}: {err}"
            if err is not None
            else f"informer stale: no healthy watch for {since:.0f} s",
            mode,
            err,
        )
    if request.name is None:
        if informer.selector_problem is not None:
            return _cannot(informer.selector_problem, mode)
        if not informer.complete:
            return _cannot(informer.incomplete_reason(), mode)
    if informer.pending_write:
        if writes_waited:
            return _cannot(
                f"write not yet observed: a write made through this Config to "
                f"{informer.describe} was not delivered by the watch in time "
                "(read_your_writes_timeout)",
                mode,
            )
        return _WAIT_FOR_WRITES
    if request.name is not None:
        return _SERVE if informer.found else _miss(informer, request, mode)
    token = request.continue_
    if token:
        if not is_cache_token(token):  # the API server's token: only it can continue
            return _cannot("the continue token comes from the API server, not from the cache", mode)
        try:
            decode_token(token)
        except ValueError as exc:
            return Refuse(str(exc), continuing=True)
    return _SERVE


def _miss(informer: InformerFacts, request: ReadRequest, mode: Mode) -> Decision:
    """A get of an object the informer does not hold: "not found" (served) only if it would hold it."""
    key = informer.key
    if key.label_selector or key.field_selector:  # the object may exist and not match
        if request.selector_is_scope:
            return _SERVE
        return _cannot(
            f"selector not servable: {informer.describe} holds only objects matching its "
            f"selector, and {request.name!r} is not among them",
            mode,
        )
    if not informer.complete:  # it may have been evicted: the cache cannot say "not found"
        return _cannot(informer.incomplete_reason(), mode)
    return _SERVE
