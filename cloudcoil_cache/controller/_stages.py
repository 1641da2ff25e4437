"""Stages and cases (cloudcoil 0.8's ``ctl.stage`` / ``ctl.case`` / ``ctl.otherwise``): their order, and one pass."""

from __future__ import annotations

import inspect
import re
from typing import Any, Callable, Generator, TypeVar

from cloudcoil_cache.controller._context import Context
from cloudcoil_cache.controller._outcomes import Wait
from cloudcoil_cache.controller._workers import Reconciler

__all__ = ["Flow", "StageScope"]

F = TypeVar("F", bound=Callable[..., Any])

_CONDITION = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,127}")

#: One pass: yields each handler to call, is sent its return value (or thrown its Wait), returns the Wait
#: that ended the pass early, or None.
_Pass = Generator["_Handler", Any, "Wait | None"]


class _Handler:
    """A stage, case or predicate function: ``f(obj)`` or ``f(obj, ctx)``, plain or (not a predicate) async."""

    def __init__(self, func: Callable[..., Any], *, predicate: bool = False) -> None:
        label = getattr(func, "__qualname__", repr(func))
        if not callable(func):
            raise TypeError(f"{label}: a stage, case or predicate must be callable")
        self.is_async = inspect.iscoroutinefunction(func)
        if predicate and self.is_async:
            raise TypeError(f"{label}: a case predicate (when=) must be a plain function returning a bool")
        try:
            params = list(inspect.signature(func).parameters.values())
        except (TypeError, ValueError):
            params = []
        if len(params) not in (1, 2) or any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
            raise TypeError(f"{label}: use def f(obj) or def f(obj, ctx)")
        self.func = func
        self.pass_ctx = len(params) == 2
        self.name: str = getattr(func, "__name__", "handler")

    def call(self, obj: Any, ctx: Context) -> Any:
        return self.func(obj, ctx) if self.pass_ctx else self.func(obj)


def _refs(value: Any) -> tuple[Any, ...]:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _ordered(nodes: list[Any], label: str) -> list[Any]:
    """``nodes`` in the one order their dependencies allow; ambiguity is an error (as in cloudcoil 0.8:
    registration order never decides). A dependency is a node, its function or its name."""
    known: dict[Any, Any] = {}
    for node in nodes:
        for ref in node.refs():
            known[ref] = node
    deps: dict[int, list[Any]] = {}
    for node in nodes:
        resolved = []
        for ref in node.dependencies:
            target = known.get(ref) if isinstance(ref, str) else next((n for n in nodes if ref in n.refs_by_id()), None)
            if target is None:
                raise ValueError(f"{label} {node.name!r} depends on {ref!r}, which is not a {label} of this controller")
            resolved.append(target)
        deps[id(node)] = resolved
    ordered: list[Any] = []
    remaining = list(nodes)
    while remaining:
        ready = [n for n in remaining if all(any(d is o for o in ordered) for d in deps[id(n)])]
        if not ready:
            raise ValueError(f"{label}s {[n.name for n in remaining]}: their dependencies form a cycle")
        if len(ready) > 1:
            raise ValueError(
                f"{label}s {[n.name for n in ready]} have no order: declare it "
                f"({'depends=' if label == 'stage' else 'after='}), registration order does not decide"
            )
        ordered.append(ready[0])
        remaining.remove(ready[0])
    return ordered


class _Branch:
    """One ``case(when=...)``: its handler, predicate and the cases it comes after."""

    def __init__(self, handler: _Handler, predicate: _Handler, after: tuple[Any, ...]) -> None:
        self.handler = handler
        self.predicate = predicate
        self.dependencies = after
        self.name = handler.name

    def refs(self) -> tuple[Any, ...]:
        return (self.name,)

    def refs_by_id(self) -> list[Any]:
        return [self, self.handler.func]


class _Branches:
    """First-match cases and the ``otherwise()`` fallback (required once any case is registered)."""

    def __init__(self, check: Callable[[], None]) -> None:
        self._check = check
        self.branches: list[_Branch] = []
        self.fallback: _Handler | None = None

    @property
    def populated(self) -> bool:
        return bool(self.branches) or self.fallback is not None

    def case(self, *, when: Callable[..., Any], after: Any = None) -> Callable[[F], F]:
        predicate = _Handler(when, predicate=True)
        dependencies = _refs(after)

        def register(func: F) -> F:
            self._check()
            handler = _Handler(func)
            if any(b.name == handler.name for b in self.branches):
                raise ValueError(f"a case named {handler.name!r} is already registered")
            self.branches.append(_Branch(handler, predicate, dependencies))
            return func

        return register

    def otherwise(self) -> Callable[[F], F]:
        def register(func: F) -> F:
            self._check()
            if self.fallback is not None:
                raise ValueError("only one otherwise() handler may be registered")
            self.fallback = _Handler(func)
            return func

        return register

    def ordered(self) -> list[_Branch]:
        if self.fallback is None:
            raise ValueError("cases need an otherwise() handler (what runs when no case matches)")
        return _ordered(self.branches, "case")

    def handlers(self) -> list[_Handler]:
        return [b.handler for b in self.branches] + ([self.fallback] if self.fallback is not None else [])

    def select(self, ordered: list[_Branch], obj: Any, ctx: Context) -> _Handler:
        """The handler of the first case whose predicate holds, else the fallback."""
        for branch in ordered:
            matches = branch.predicate.call(obj, ctx)
            if type(matches) is not bool:
                raise TypeError(f"case predicate of {branch.name!r} returned {type(matches).__name__}, not a bool")
            if matches:
                return branch.handler
        assert self.fallback is not None
        return self.fallback


class StageScope:
    """One stage of a controller (``@ctl.stage(...)``): a handler, or cases (``.case(when=)`` and
    ``.otherwise()``) of which the first that matches runs. A stage is named by the condition it
    establishes; ``depends`` names the stages (scopes, functions or names) that must succeed first."""

    def __init__(self, flow: Flow, name: str | None, condition: str | None, depends: Any) -> None:
        if condition is not None and (
            not isinstance(condition, str) or not _CONDITION.fullmatch(condition) or condition == "Ready"
        ):
            raise ValueError(
                f"stage(condition=...) must be an identifier (a condition type) other than 'Ready', got {condition!r}"
            )
        name = name or condition
        if not isinstance(name, str) or not name:
            raise ValueError("stage(): give a name or a condition=")
        self.flow = flow
        self.name = name
        self.condition = condition
        self.dependencies = _refs(depends)
        self.handler: _Handler | None = None
        self._branches = _Branches(self._check_cases)
        self._cases: list[_Branch] = []

    def __repr__(self) -> str:
        return f"<StageScope {self.name!r} condition={self.condition!r}>"

    def __call__(self, func: F) -> F:
        self.flow.check()
        if self.handler is not None or self._branches.populated:
            raise ValueError(f"stage {self.name!r} has one handler or cases, not both")
        self.handler = _Handler(func)
        return func

    def _check_cases(self) -> None:
        self.flow.check()
        if self.handler is not None:
            raise ValueError(f"stage {self.name!r} has one handler or cases, not both")

    def case(self, *, when: Callable[..., Any], after: Any = None) -> Callable[[F], F]:
        """Register a case of this stage: ``when(obj)`` / ``when(obj, ctx)`` returns a bool."""
        return self._branches.case(when=when, after=after)

    def otherwise(self) -> Callable[[F], F]:
        """Register what this stage runs when no case matches."""
        return self._branches.otherwise()

    def refs(self) -> tuple[Any, ...]:
        return (self.name,) + ((self.condition,) if self.condition else ())

    def refs_by_id(self) -> list[Any]:
        return [self] + ([self.handler.func] if self.handler is not None else [])

    def validate(self) -> None:
        if self.handler is None:
            if not self._branches.populated:
                raise ValueError(f"stage {self.name!r} has no handler: decorate a function with it, or add cases")
            self._cases = self._branches.ordered()

    def handlers(self) -> list[_Handler]:
        return [self.handler] if self.handler is not None else self._branches.handlers()

    def select(self, obj: Any, ctx: Context) -> _Handler:
        return self.handler or self._branches.select(self._cases, obj, ctx)


class Flow:
    """A controller's stages, or its top-level cases: the reconcile function they make together.

    A pass runs the stages in their order, each from the first, every time (conditions observe, they
    never skip work): a stage returns None (done) or returns/raises ``Wait`` (the pass stops, the key is
    reconciled again after ``Wait.after``); an exception fails the pass (retried with backoff). Before
    each stage the pass checks leadership (``ctx.check_leadership()``). An object being deleted
    (``deletionTimestamp`` set) gets no pass, as in cloudcoil 0.8.

    Conditions (cloudcoil 0.8's mapping), written with ``ctx.condition(type, status, reason=, message=)``
    for stages that declare ``condition=``: a stage done sets its condition True (reason ``Reconciled``,
    or the name of the case that ran); a stage waiting sets it False (reason ``Waiting``, the Wait's
    reason as message), the conditions of the stages after it ``Unknown`` (``DependencyNotReady``) and
    ``Ready`` False; a pass that completes sets ``Ready`` True. A pass whose handlers include a coroutine
    function is a coroutine function (its plain handlers then run on the controller's event loop).
    """

    def __init__(self) -> None:
        self.stages: list[StageScope] = []
        self.branches = _Branches(self.check)
        self.frozen = False
        self._built: Reconciler | None = None  # what the stages or cases made (a controller may start again)

    @property
    def populated(self) -> bool:
        return bool(self.stages) or self.branches.populated

    def check(self) -> None:
        if self.frozen:
            raise RuntimeError("register stages and cases before the controller starts")

    def stage(self, name: str | None = None, *, condition: str | None = None, depends: Any = ()) -> StageScope:
        self.check()
        stage = StageScope(self, name, condition, depends)
        if any(s.name == stage.name for s in self.stages):
            raise ValueError(f"a stage named {stage.name!r} is already registered")
        if condition is not None and any(s.condition == condition for s in self.stages):
            raise ValueError(f"a stage already establishes condition {condition!r}")
        self.stages.append(stage)
        return stage

    def reconciler(self, reconciler: Reconciler | None, controller: str) -> Reconciler:
        """The reconcile function to run: ``reconciler``, or the one the stages or cases make (validated,
        and registration closed). Raises ``ValueError`` for more than one, ``RuntimeError`` for none."""
        if reconciler is not None and reconciler is self._built:
            return reconciler
        if not self.populated:
            if reconciler is None:
                raise RuntimeError(
                    f"controller {controller!r} has no reconcile function: use @ctl.reconcile() "
                    "(or @ctl.stage(), @ctl.case())"
                )
            return reconciler
        if reconciler is not None or (self.stages and self.branches.populated):
            raise ValueError(
                f"controller {controller!r}: register one entrypoint: a reconcile function, stages, or top-level cases"
            )
        self._built = Reconciler.of(self._build(controller))
        return self._built

    def _build(self, controller: str) -> Callable[..., Any]:
        if self.stages:
            ordered: list[StageScope] = _ordered(self.stages, "stage")
            for stage in ordered:
                stage.validate()
            handlers = [h for s in ordered for h in s.handlers()]
            reporting = any(s.condition for s in ordered)
            self.frozen = True
            return _driver(lambda obj, ctx: _stage_pass(ordered, obj, ctx, reporting), handlers)
        cases = self.branches.ordered()
        self.frozen = True
        return _driver(lambda obj, ctx: _case_pass(self.branches, cases, obj, ctx), self.branches.handlers())


def _deleting(obj: Any) -> bool:
    meta = getattr(obj, "metadata", None)
    return meta is not None and meta.deletion_timestamp is not None


def _stage_pass(ordered: list[StageScope], obj: Any, ctx: Context, reporting: bool) -> _Pass:
    if _deleting(obj):  # (as in cloudcoil 0.8: an object being deleted is the finalizers' business)
        return None
    for index, stage in enumerate(ordered):
        ctx.check_leadership()
        handler = stage.select(obj, ctx)
        try:
            wait = _as_wait((yield handler), handler)
        except Wait as raised:
            wait = raised
        if reporting:
            _report(ctx, stage, handler, wait, ordered[index + 1 :])
        if wait is not None:
            return wait
    if reporting:
        _condition(ctx, "Ready", True, "Reconciled", "All required work is current")
    return None


def _case_pass(branches: _Branches, cases: list[_Branch], obj: Any, ctx: Context) -> _Pass:
    if _deleting(obj):
        return None
    handler = branches.select(cases, obj, ctx)
    try:
        return _as_wait((yield handler), handler)
    except Wait as raised:
        return raised


def _as_wait(returned: Any, handler: _Handler) -> Wait | None:
    if returned is None or isinstance(returned, Wait):
        return returned
    raise TypeError(f"stage or case {handler.name!r} returned {type(returned).__name__}: return None, or Wait")


def _report(ctx: Context, stage: StageScope, handler: _Handler, wait: Wait | None, later: list[StageScope]) -> None:
    if wait is None:
        if stage.condition:
            reason = "Reconciled" if stage.handler is not None else _reason(handler.name)
            _condition(ctx, stage.condition, True, reason, f"{handler.name} is up to date")
        return
    if stage.condition:
        _condition(ctx, stage.condition, False, "Waiting", wait.reason)
    for pending in later:
        if pending.condition:
            _condition(ctx, pending.condition, "Unknown", "DependencyNotReady", f"waiting for {stage.name}")
    _condition(ctx, "Ready", False, "Waiting", wait.reason)


def _reason(name: str) -> str:
    """A condition reason (CamelCase) from a case's function name: ``use_cache`` → ``UseCache``; a lambda's
    ``<lambda>`` → ``Reconciled``."""
    camel = "".join(part[:1].upper() + part[1:] for part in name.split("_"))
    return camel if camel.isidentifier() and camel[:1].isalpha() else "Reconciled"


def _condition(ctx: Context, type_: str, status: bool | str, reason: str, message: str) -> None:
    if type_ == "Ready":  # the pass's outcome: with report_status=True the controller writes the same Ready
        ctx._pass_writes().set_condition(type_, status, reason=reason, message=message)  # type: ignore[arg-type]
    else:
        ctx.condition(type_, status, reason=reason, message=message)  # type: ignore[arg-type]


def _driver(make_pass: Callable[[Any, Context], _Pass], handlers: list[_Handler]) -> Callable[..., Any]:
    """A reconcile function ``f(obj, ctx)`` running one pass: plain, or a coroutine function when a
    handler is one."""
    if not any(h.is_async for h in handlers):

        def run(obj: Any, ctx: Context) -> Wait | None:
            return _drive(make_pass(obj, ctx), lambda handler: handler.call(obj, ctx))

        return run

    async def run_async(obj: Any, ctx: Context) -> Wait | None:
        steps = make_pass(obj, ctx)
        try:
            handler = next(steps)
            while True:
                try:
                    returned = handler.call(obj, ctx)
                    if handler.is_async:
                        returned = await returned
                except Wait as wait:
                    handler = steps.throw(wait)
                    continue
                handler = steps.send(returned)
        except StopIteration as end:
            result: Wait | None = end.value
            return result

    return run_async


def _drive(steps: _Pass, call: Callable[[_Handler], Any]) -> Wait | None:
    try:
        handler = next(steps)
        while True:
            try:
                returned = call(handler)
            except Wait as wait:
                handler = steps.throw(wait)
                continue
            handler = steps.send(returned)
    except StopIteration as end:
        result: Wait | None = end.value
        return result
