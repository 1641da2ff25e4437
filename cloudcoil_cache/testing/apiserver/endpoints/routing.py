"""URL routing for the fake server: a request path to a discovery document or a resource route."""

from __future__ import annotations

from dataclasses import dataclass

from ..machinery.resources import ResourceRegistry, ResourceType

__all__ = ["Route", "derive_verb", "has_scale", "parse_route", "subresource_ok"]


@dataclass(frozen=True)
class Route:
    """Where a request goes. ``discovery`` is set for discovery paths; otherwise ``rtype`` is."""

    discovery: str | None = None
    group: str = ""
    version: str = ""
    rtype: ResourceType | None = None
    namespace: str | None = None
    name: str | None = None
    subresource: str | None = None
    watch_path: bool = False


_DISCOVERY = {"/version", "/api", "/apis", "/healthz", "/livez", "/readyz"}
# Built-in kinds with a ``scale`` subresource: (group, kind).
_SCALABLE = frozenset(
    {("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "StatefulSet"), ("", "ReplicationController")}
)


def has_scale(rtype: ResourceType) -> bool:
    """Whether ``rtype`` serves the ``scale`` subresource."""
    return (rtype.builtin and (rtype.group, rtype.kind) in _SCALABLE) or any(
        s[0] == "scale" for s in rtype.subresources
    )


def subresource_ok(subresource: str, rtype: ResourceType) -> bool:
    """Whether ``rtype`` serves ``subresource`` (``status`` or ``scale``)."""
    return (subresource == "status" and rtype.has_status) or (subresource == "scale" and has_scale(rtype))


def parse_route(path: str, registry: ResourceRegistry) -> Route | None:
    """Parse a URL path; ``None`` when nothing is served there (the caller answers 404)."""
    path = path.rstrip("/") or "/"
    if path in _DISCOVERY:
        return Route(discovery=path)
    if path == "/openapi/v2" or path == "/openapi/v3" or path.startswith("/openapi/v3/"):
        return Route(discovery="openapi", group=path[len("/openapi/") :])
    parts = path.strip("/").split("/")
    if parts[0] == "api" and len(parts) >= 2:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[0] == "apis" and len(parts) >= 2:
        if len(parts) == 2:
            return Route(discovery="group", group=parts[1])
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    if not rest:
        return Route(discovery="resources", group=group, version=version)
    return _resource_route(group, version, rest, registry)


def _resource_route(group: str, version: str, rest: list[str], registry: ResourceRegistry) -> Route | None:
    """The route of a resource path under ``/api/<version>`` or ``/apis/<group>/<version>``:
    ``rest`` is the non-empty remainder (``[watch/][namespaces/<ns>/]<plural>[/<name>[/<sub>]]``).
    """
    watch_path = rest[0] == "watch"
    if watch_path:
        rest = rest[1:]
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        candidate = registry.get(group, version, rest[2])
        if candidate is not None and candidate.namespaced:
            namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        return None
    rtype = registry.get(group, version, rest[0])
    if rtype is None:
        return None
    if rtype.namespaced is False and namespace is not None:
        return None
    name = rest[1] if len(rest) >= 2 else None
    if rtype.namespaced and namespace is None and name is not None:
        return None
    subresource = rest[2] if len(rest) == 3 else None
    if subresource is not None and not subresource_ok(subresource, rtype) and rtype.builtin:
        return None  # a custom resource's unknown subresource is a NotFound naming the object
    if watch_path and subresource is not None:
        return None
    return Route(
        group=group,
        version=version,
        rtype=rtype,
        namespace=namespace,
        name=name,
        subresource=subresource,
        watch_path=watch_path,
    )


def derive_verb(method: str, route: Route | None, query: dict[str, str]) -> str:
    """The Kubernetes verb of a request (what RBAC and ``fail_next`` see)."""
    is_collection = route is not None and route.rtype is not None and route.name is None
    if method == "GET":
        if route is not None and (route.watch_path or query.get("watch") in ("true", "1")):
            return "watch"
        return "list" if is_collection else "get"
    if method == "DELETE":
        return "deletecollection" if is_collection else "delete"
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())
