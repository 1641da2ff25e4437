"""CRUD on resources: request checks, dry runs, field validation, and the verb table of endpoints."""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping

from ..machinery import status as _status
from ..machinery.resources import ResourceType
from ..machinery.status import StatusError
from ..registry.admission import request_context
from ..storage.store import APPLY_PATCH
from .admitted import admitted_write
from .context import ServerContext
from .list import list_body, parse_filters, parse_rv, wait_not_too_large
from .partial import check_partial, partial_object
from .request import Request, Responder, method_not_allowed
from .reviews import review
from .routing import subresource_ok
from .scale import serve_scale
from .tables import to_table
from .watch import serve_watch

__all__ = ["serve_resource"]

_WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})
# Writes admission webhooks are called for (deletecollection and /scale are not: KNOWN_DIFFERENCES.md).
_WEBHOOK_VERBS = frozenset({"create", "update", "patch", "delete"})
# Kinds whose registry answers a DELETE with the deleted object (others answer a Status).
_RETURN_DELETED = frozenset({("", "Pod"), ("", "Service"), ("", "Namespace")})

Endpoint = Callable[[ServerContext, Request, Responder, ResourceType], None]


def serve_resource(ctx: ServerContext, req: Request, out: Responder) -> None:
    """Answer a request for a resource or its subresource (raises ``StatusError``)."""
    route, verb = req.route, req.verb
    if route.subresource is not None and route.rtype is not None and not subresource_ok(route.subresource, route.rtype):
        # a custom resource's subresource its CRD does not declare (kube-apiserver's CRD handler)
        raise _status.not_found(route.rtype, route.name or "")
    _check_body_type(req)
    if route.subresource is not None and verb not in ("get", "update", "patch"):
        raise method_not_allowed()
    dry_run = _dry_run(req)
    validation = req.query.get("fieldValidation", "")
    if validation not in ("", "Ignore", "Warn", "Strict"):
        raise _status.bad_request(
            f'fieldValidation parameter unsupported: "{validation}". Supported values are: "Ignore", "Warn", "Strict"'
        )
    with request_context(validation) as warnings:
        sent = warnings if validation != "Ignore" else []
        out.set_warnings(sent)
        if dry_run and verb in _WRITES:
            with ctx.store.dry_run():
                _route(ctx, req, out, sent, dry_run=True)
        else:
            _route(ctx, req, out, sent, dry_run=False)


def _check_body_type(req: Request) -> None:
    """415 for a body the fake cannot decode (protobuf, CBOR), as content negotiation does."""
    ctype, method = req.content_type, req.method
    if method in ("POST", "PUT", "PATCH") and (
        ctype in ("application/cbor", "application/apply-patch+cbor") or (method == "PATCH" and "protobuf" in ctype)
    ):
        raise StatusError(
            415,
            _status.status_body(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types "
                "include: application/json, application/yaml",
            ),
        )


def _dry_run(req: Request) -> bool:
    """Whether the request is a dry run (``dryRun=All``, also in DeleteOptions); 400 for others."""
    dry_run = req.query.get("dryRun")
    if dry_run is not None and dry_run != "All":
        raise _status.bad_request(f'Invalid dryRun: Unsupported value: "{dry_run}": supported values: "All"')
    if req.verb in ("delete", "deletecollection") and req.body.strip():
        options = req.json_body()  # DeleteOptions may carry dryRun too
        if isinstance(options, dict) and "All" in (options.get("dryRun") or ()):
            dry_run = "All"
    return bool(dry_run)


def _route(ctx: ServerContext, req: Request, out: Responder, warnings: list[str], *, dry_run: bool) -> None:
    """The verb table: a create-only kind's review, the scale subresource, else one endpoint per
    verb (writes through the admission webhooks when webhook configurations are stored)."""
    rtype = req.route.rtype
    assert rtype is not None
    if req.route.subresource is None and req.verb not in rtype.served_verbs:
        raise method_not_allowed()
    if req.verb == "create" and rtype.verbs == ("create",):
        out.send_obj(201, review(ctx, rtype, req.json_body(), req.route.namespace, req.user or "system:admin"))
        return
    if req.route.subresource == "scale":
        serve_scale(ctx.store, req, out)
        return
    endpoint = _VERBS.get(req.verb)
    if endpoint is None:
        raise method_not_allowed()
    if req.verb in ("get", "list", "watch") and not req.table:
        check_partial(req.partial, req.verb)  # writes answer whole objects
    if req.verb in _WEBHOOK_VERBS and ctx.webhooks.configured():
        admitted_write(ctx, req, out, rtype, endpoint, ctx.webhooks, warnings, dry_run)
        return
    endpoint(ctx, req, out, rtype)


def _watch(ctx: ServerContext, req: Request, out: Responder, rtype: ResourceType) -> None:
    route = req.route
    partial = None if req.table or req.partial is None else req.partial[1]
    serve_watch(out, ctx, rtype, route.namespace, route.name, req.query, table=req.table, partial=partial)


def _list(ctx: ServerContext, req: Request, out: Responder, rtype: ResourceType) -> None:
    partial = None if req.table or req.partial is None else req.partial[1]
    data = list_body(ctx, rtype, req.route.namespace, req.query, partial)
    if req.table:
        listed = json.loads(data)
        out.send_obj(
            200,
            to_table(
                rtype.group,
                rtype.kind,
                rtype.builtin,
                listed.get("items") or [],
                listed.get("metadata", {}),
                req.query.get("includeObject", "Metadata"),
            ),
        )
        return
    out.send_bytes(200, data)


def _get(ctx: ServerContext, req: Request, out: Responder, rtype: ResourceType) -> None:
    route, query = req.route, req.query
    assert route.name is not None
    if query.get("resourceVersion", "") not in ("", "0"):
        wait_not_too_large(ctx, parse_rv(query["resourceVersion"]))
    entry = ctx.store.get(rtype, route.name, route.namespace)
    if req.table and route.subresource is None:
        out.send_obj(
            200,
            to_table(
                rtype.group,
                rtype.kind,
                rtype.builtin,
                [entry.obj],
                {"resourceVersion": entry.obj["metadata"].get("resourceVersion", "")},
                query.get("includeObject", "Metadata"),
            ),
        )
        return
    if req.partial is not None and route.subresource is None:
        out.send_obj(200, partial_object(entry.obj, req.partial[1]))
        return
    out.send_bytes(200, entry.full())


def _create(ctx: ServerContext, req: Request, out: Responder, rtype: ResourceType) -> None:
    route = req.route
    if route.name is not None or (rtype.namespaced and route.namespace is None):
        raise method_not_allowed()
    obj = req.object_body()
    _check_kind(rtype, obj)
    out.send_obj(201, ctx.store.create(rtype, obj, route.namespace, manager=req.manager(), reset_status=True))


def _update(ctx: ServerContext, req: Request, out: Responder, rtype: ResourceType) -> None:
    route = req.route
    obj = req.object_body()
    _check_kind(rtype, obj)
    assert route.name is not None
    out.send_obj(
        200,
        ctx.store.replace(
            rtype, route.name, route.namespace, obj, subresource=route.subresource, manager=req.manager()
        ),
    )


def _patch(ctx: ServerContext, req: Request, out: Responder, rtype: ResourceType) -> None:
    route, query = req.route, req.query
    assert route.name is not None
    force = query.get("force")
    if req.content_type == APPLY_PATCH:
        manager = query.get("fieldManager", "")
        if not manager:
            raise _status.field_manager_required()
        obj, created = ctx.store.apply(
            rtype,
            route.name,
            route.namespace,
            req.yaml_body(),
            manager,
            route.subresource,
            force=force in ("true", "1"),
        )
        out.send_obj(201 if created else 200, obj)
        return
    if force is not None:
        raise _status.invalid_options("force", "may not be specified for non-apply patch", kind="PatchOptions")
    result = ctx.store.patch(
        rtype, route.name, route.namespace, req.content_type, req.json_body(), route.subresource, manager=req.manager()
    )
    out.send_obj(200, result)


def _delete(ctx: ServerContext, req: Request, out: Responder, rtype: ResourceType) -> None:
    route, query, store = req.route, req.query, ctx.store
    name, ns = route.name, route.namespace
    assert name is not None
    options = req.json_body() if req.body.strip() else {}
    if not isinstance(options, dict):
        raise _status.bad_request("DeleteOptions must be a JSON object")
    policy = options.get("propagationPolicy")
    if policy is not None and policy not in ("Foreground", "Background", "Orphan"):
        raise _status.bad_request(
            f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported '
            f'value: "{policy}": supported values: "Foreground", "Background", "Orphan"'
        )
    preconditions = options.get("preconditions")
    result = store.delete(
        rtype,
        name,
        ns,
        preconditions if isinstance(preconditions, dict) else None,
        grace_period=_grace_period(options, query),
        kubelet=ctx.settings.kubelet,
    )
    out.send_obj(200, _deleted_answer(rtype, result, store.exists(rtype, name, ns) and not query.get("dryRun")))


def _delete_collection(ctx: ServerContext, req: Request, out: Responder, rtype: ResourceType) -> None:
    """kube-apiserver answers the <Kind>List of the objects it deleted, as it listed them before
    deleting (no deletionTimestamp yet), also for a dry run and when none matched."""
    ns, query, store = req.route.namespace, req.query, ctx.store
    filters = parse_filters(rtype, ns, query)
    with_kind = ctx.settings.list_items_have_kind or not rtype.builtin
    with store.lock:
        revision = store.revision
        matched = sorted(
            (
                e
                for e in store.all_objects(rtype)
                if (ns is None or e.obj["metadata"].get("namespace") == ns) and filters.matches(e.obj)
            ),
            key=lambda e: (e.obj["metadata"].get("namespace") or "", e.obj["metadata"]["name"]),
        )
        items = [json.loads(e.full() if with_kind else e.bare()) for e in matched]
        for entry in matched:
            meta = entry.obj["metadata"]
            store.delete(
                rtype,
                meta["name"],
                meta.get("namespace"),
                grace_period=_grace_period({}, query),
                kubelet=ctx.settings.kubelet,
            )
    out.send_obj(
        200,
        {
            "kind": f"{rtype.kind}List",
            "apiVersion": rtype.api_version,
            "metadata": {"resourceVersion": str(revision)},
            "items": items,
        },
    )


_VERBS: dict[str, Endpoint] = {
    "get": _get,
    "list": _list,
    "watch": _watch,
    "create": _create,
    "update": _update,
    "patch": _patch,
    "delete": _delete,
    "deletecollection": _delete_collection,
}


def _grace_period(options: dict[str, Any], query: Mapping[str, str]) -> int | None:
    """``gracePeriodSeconds`` from DeleteOptions or the query (None: the object's default)."""
    value = options.get("gracePeriodSeconds", query.get("gracePeriodSeconds"))
    if value is None or value == "":
        return None
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        raise _status.bad_request(f"invalid gracePeriodSeconds {value!r}") from None


def _deleted_answer(rtype: ResourceType, obj: dict[str, Any], kept: bool) -> dict[str, Any]:
    """What a DELETE answers: the object when it is kept (finalizers, graceful termination) or
    its kind returns deleted objects, else a success Status naming it."""
    # Custom resources: kube-apiserver answers a Status too; the object is kept for now
    # (KNOWN_DIFFERENCES.md).
    if kept or not rtype.builtin or (rtype.group, rtype.kind) in _RETURN_DELETED:
        return obj
    details: dict[str, Any] = {"name": obj["metadata"].get("name", "")}
    if rtype.group:
        details["group"] = rtype.group
    details["kind"] = rtype.plural
    details["uid"] = obj["metadata"].get("uid", "")
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


def _check_kind(rtype: ResourceType, obj: dict[str, Any]) -> None:
    """400 for a body of another kind than the URL's (the real decoder cannot convert it)."""
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if not rtype.builtin or not kind or (kind == rtype.kind and api_version in (None, "", rtype.api_version)):
        return
    version = str(api_version or rtype.api_version).rsplit("/", 1)[-1]
    internal = (rtype.group or "core").split(".")[0]
    raise _status.bad_request(
        f'{kind} in version "{version}" cannot be handled as a {rtype.kind}: converting '
        f"({version}.{kind}) to ({internal}.{rtype.kind}): unknown conversion"
    )
