"""Discovery endpoints: health, ``/version``, ``/api``, ``/apis``, group and resource lists, OpenAPI."""

from __future__ import annotations

from typing import Callable

from ..machinery import status as _status
from ..machinery.status import StatusError
from .context import ServerContext
from .request import Responder
from .routing import Route

__all__ = ["serve_discovery", "serve_openapi"]

_VERSION = {
    "major": "1",
    "minor": "30",
    "gitVersion": "v1.30.2",
    "gitCommit": "fake",
    "gitTreeState": "clean",
    "buildDate": "2024-06-11T00:00:00Z",
    "goVersion": "go1.22.4",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def _not_found() -> StatusError:
    return StatusError(404, _status.status_body(404, "NotFound", "the server could not find the requested resource"))


def _not_acceptable() -> StatusError:
    return StatusError(
        406, _status.status_body(406, "NotAcceptable", "only the following media types are accepted: application/json")
    )


def serve_openapi(ctx: ServerContext, which: str, accepts_json: bool, out: Responder) -> None:
    """``/openapi/v2`` (JSON only: 406 to a protobuf-only Accept) and ``/openapi/v3[/gv]``."""
    if which == "v2":
        if not accepts_json:
            raise _not_acceptable()
        out.send_bytes(200, ctx.openapi.v2())
    elif which == "v3":
        out.send_obj(200, ctx.openapi.v3_root())
    else:
        doc = ctx.openapi.v3(which[len("v3/") :])
        if doc is None:
            raise _not_found()
        out.send_bytes(200, doc)


def serve_discovery(ctx: ServerContext, route: Route, address: str, out: Responder) -> None:
    """Answer a discovery request (``address``: the server's ``host:port``, for ``/api``)."""
    endpoint = _DISCOVERY.get(route.discovery or "", _resource_list)
    endpoint(ctx, route, address, out)


def _health(ctx: ServerContext, route: Route, address: str, out: Responder) -> None:
    out.send_bytes(200, b"ok", content_type="text/plain; charset=utf-8")


def _version(ctx: ServerContext, route: Route, address: str, out: Responder) -> None:
    out.send_obj(200, _VERSION)


def _core(ctx: ServerContext, route: Route, address: str, out: Responder) -> None:
    out.send_obj(200, ctx.registry.api_versions(address))


def _groups(ctx: ServerContext, route: Route, address: str, out: Responder) -> None:
    out.send_obj(200, ctx.registry.group_list())


def _group(ctx: ServerContext, route: Route, address: str, out: Responder) -> None:
    group = next((g for g in ctx.registry.group_list()["groups"] if g["name"] == route.group), None)
    if group is None:
        raise _not_found()
    out.send_obj(200, {"kind": "APIGroup", "apiVersion": "v1", **group})


def _resource_list(ctx: ServerContext, route: Route, address: str, out: Responder) -> None:
    doc = ctx.registry.resource_list(route.group, route.version)
    if doc is None:
        raise _not_found()
    out.send_obj(200, doc)


_DISCOVERY: dict[str, Callable[[ServerContext, Route, str, Responder], None]] = {
    "/healthz": _health,
    "/livez": _health,
    "/readyz": _health,
    "/version": _version,
    "/api": _core,
    "/apis": _groups,
    "group": _group,
}
