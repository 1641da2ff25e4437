"""One registered handler (a route): its checked options, its default path, the ``mutating``/``validating`` marks."""

from __future__ import annotations

import inspect
import re
from typing import Any, Callable, Literal, Mapping, Sequence

import attrs

__all__ = ["OPERATIONS", "Route", "RouteKind", "default_path", "make_route", "marked", "mutating", "validating"]

RouteKind = Literal["mutate", "validate"]
OPERATIONS = ("CREATE", "UPDATE", "DELETE")
_SEGMENT = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_MARK = "__cloudcoil_admission__"
_CHOICES = {
    "failure_policy": ("Fail", "Ignore"),
    "side_effects": ("None", "NoneOnDryRun"),
    "reinvocation_policy": ("Never", "IfNeeded"),
    "match_policy": ("Exact", "Equivalent"),
}

_OPTIONS = frozenset(
    {"target", "resource", "path", "operations", "subresource", "scope", "namespace_selector", "object_selector"}
    | {"timeout_seconds", *_CHOICES}
)


@attrs.frozen
class Route:
    """A handler and how it is registered with kube-apiserver."""

    kind: RouteKind
    model: Any  # the resource the rule names
    target: Any  # the class the object is decoded as (``model`` unless a subresource's, e.g. Scale)
    handler: Callable[..., Any]
    path: str
    resource: str  # plural
    operations: tuple[str, ...]
    subresource: str
    scope: str | None
    namespace_selector: Mapping[str, Any] | None
    object_selector: Mapping[str, Any] | None
    timeout_seconds: int
    failure_policy: str
    side_effects: str
    reinvocation_policy: str
    match_policy: str

    @property
    def is_async(self) -> bool:
        return is_coroutine_function(self.handler)

    @property
    def group(self) -> str:
        return group_version(self.model)[0]

    @property
    def version(self) -> str:
        return group_version(self.model)[1]

    @property
    def target_kind(self) -> tuple[str, str, str]:
        group, version = group_version(self.target)
        return group, version, self.target.kind


def is_coroutine_function(func: Any) -> bool:
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(getattr(func, "__call__", None))


def group_version(cls: Any) -> tuple[str, str]:
    group, _, version = str(cls.api_version).rpartition("/")
    return group, version


def _name(func: Any) -> str:
    return str(getattr(func, "__name__", type(func).__name__))


def default_path(kind: RouteKind, model: Any, resource: str, subresource: str, func: Any) -> str:
    """``/{mutate|validate}/{group or core}/{version}/{plural}[/{subresource}]/{handler name}``."""
    group, version = group_version(model)
    parts = [kind, group or "core", version, resource, *([subresource] if subresource else []), _name(func)]
    return "/" + "/".join(re.sub(r"[^a-z0-9.-]+", "-", p.lower()).strip("-.") or "handler" for p in parts)


def check_path(path: str) -> None:
    segments = path.split("/")
    if not path.startswith("/") or len(segments) < 2 or not all(_SEGMENT.match(s) for s in segments[1:]):
        raise ValueError(
            f"admission path {path!r}: expected '/' and segments of lower-case letters, digits, '-' and '.' "
            "(DNS subdomains)"
        )
    if path in ("/healthz", "/readyz", "/metrics"):
        raise ValueError(f"admission path {path!r} is reserved for the server")


def _check_choice(option: str, value: Any) -> None:
    if value not in _CHOICES[option]:
        raise ValueError(f"{option}={value!r}: expected one of {list(_CHOICES[option])}")


def _check_selector(option: str, value: Any) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or set(value) - {"matchLabels", "matchExpressions"}:
        raise ValueError(f"{option}: expected a label selector dict with matchLabels and/or matchExpressions")
    return dict(value)


def _check_operations(operations: Any) -> tuple[str, ...]:
    if isinstance(operations, str):
        operations = (operations,)
    ops = tuple(operations or ())
    if not ops or any(op not in OPERATIONS for op in ops) or len(set(ops)) != len(ops):
        raise ValueError(f"operations={operations!r}: expected distinct values of {list(OPERATIONS)}")
    return ops


def _check_resource_class(option: str, cls: Any, needs: tuple[str, ...] = ("api_version", "kind", "plural")) -> None:
    if not all(isinstance(getattr(cls, a, None), str) for a in needs) or not callable(getattr(cls, "from_dict", None)):
        raise TypeError(f"{option}={cls!r}: expected a resource class (with {', '.join(needs)})")


def _check_timeout(timeout_seconds: Any) -> int:
    if isinstance(timeout_seconds, bool) or not isinstance(timeout_seconds, int) or not 1 <= timeout_seconds <= 30:
        raise ValueError(f"timeout_seconds={timeout_seconds!r}: expected an integer from 1 to 30")
    return timeout_seconds


def _check_scope(scope: Any) -> None:
    if scope not in (None, "Namespaced", "Cluster", "*"):
        raise ValueError(f"scope={scope!r}: expected None, 'Namespaced', 'Cluster' or '*'")


def make_route(kind: RouteKind, model: Any, handler: Callable[..., Any], options: Mapping[str, Any]) -> Route:
    """A checked route (``options`` are ``mutating()``'s keywords); ValueError/TypeError name the bad one."""
    _check_resource_class("model", model)
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise TypeError(f"unknown admission option(s) {unknown}; expected any of {sorted(_OPTIONS)}")
    if not callable(handler):
        raise TypeError(f"admission handler {handler!r} is not callable")
    target = options.get("target") or model
    _check_resource_class("target", target, ("api_version", "kind"))  # a subresource's kind (Scale) has no plural
    subresource = options.get("subresource", "")
    if not isinstance(subresource, str) or (subresource and not _SEGMENT.match(subresource)):
        raise ValueError(f"subresource={subresource!r}: expected '' or a subresource name such as 'status'")
    if options.get("target") is not None and not subresource:
        raise ValueError(f"target={target.kind} needs subresource= (the subresource whose object it is)")
    resource = options.get("resource") or model.plural
    if not isinstance(resource, str) or not _SEGMENT.match(resource):
        raise ValueError(f"resource={resource!r}: expected a plural resource name")
    path = options.get("path") or default_path(kind, model, resource, subresource, handler)
    check_path(path)
    for option in _CHOICES:
        _check_choice(option, options.get(option, _CHOICES[option][0]))
    _check_scope(options.get("scope"))
    return Route(
        kind=kind,
        model=model,
        target=target,
        handler=handler,
        path=path,
        resource=resource,
        operations=_check_operations(options.get("operations", ("CREATE", "UPDATE"))),
        subresource=subresource,
        scope=options.get("scope"),
        namespace_selector=_check_selector("namespace_selector", options.get("namespace_selector")),
        object_selector=_check_selector("object_selector", options.get("object_selector")),
        timeout_seconds=_check_timeout(options.get("timeout_seconds", 5)),
        failure_policy=options.get("failure_policy", "Fail"),
        side_effects=options.get("side_effects", "None"),
        reinvocation_policy=options.get("reinvocation_policy", "Never"),
        match_policy=options.get("match_policy", "Exact"),
    )


# ------------------------------------------------------------------ decorators on resource classes
def _mark(kind: RouteKind, options: dict[str, Any]) -> Callable[[Any], Any]:
    def decorate(func: Any) -> Any:
        inner = getattr(func, "__func__", func)  # a classmethod or staticmethod: mark its function
        setattr(inner, _MARK, (kind, options))
        return func

    return decorate


def mutating(
    *,
    path: str | None = None,
    operations: Sequence[str] = ("CREATE", "UPDATE"),
    subresource: str = "",
    timeout_seconds: int = 5,
    failure_policy: str = "Fail",
    **options: Any,
) -> Callable[[Any], Any]:
    """Mark a classmethod/staticmethod of a resource class as its mutator (``AdmissionWebhook.register``)."""
    options.update(
        path=path,
        operations=operations,
        subresource=subresource,
        timeout_seconds=timeout_seconds,
        failure_policy=failure_policy,
    )
    return _mark("mutate", options)


def validating(
    *,
    path: str | None = None,
    operations: Sequence[str] = ("CREATE", "UPDATE"),
    subresource: str = "",
    timeout_seconds: int = 5,
    failure_policy: str = "Fail",
    **options: Any,
) -> Callable[[Any], Any]:
    """Mark a classmethod/staticmethod of a resource class as its validator (``AdmissionWebhook.register``)."""
    options.update(
        path=path,
        operations=operations,
        subresource=subresource,
        timeout_seconds=timeout_seconds,
        failure_policy=failure_policy,
    )
    return _mark("validate", options)


def marked(model: Any) -> list[Route]:
    """The routes the ``mutating()``/``validating()`` marks on ``model``'s methods describe."""
    _check_resource_class("register()", model)
    routes = []
    for name, attr in vars(model).items():
        inner = getattr(attr, "__func__", attr)
        mark = getattr(inner, _MARK, None)
        if mark is None:
            continue
        kind, options = mark
        routes.append(make_route(kind, model, getattr(model, name), options))
    return routes
