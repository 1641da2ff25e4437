"""The ``admission.k8s.io/v1`` AdmissionReview on the wire: the request checked against its route, the answers built."""

from __future__ import annotations

import base64
import json
from typing import Any, Literal, Mapping

import attrs

from cloudcoil_cache.admission._routes import Route, group_version

__all__ = ["BadReview", "Review", "http_error", "parse_review", "review_answer"]

API_VERSION = "admission.k8s.io/v1"

#: The operations a review is routed for (CONNECT is not).
_OPERATIONS: dict[str, Literal["CREATE", "UPDATE", "DELETE"]] = {
    "CREATE": "CREATE",
    "UPDATE": "UPDATE",
    "DELETE": "DELETE",
}


class BadReview(ValueError):
    """The body is not a well-formed AdmissionReview for this route (answered HTTP 400)."""


@attrs.frozen
class Review:
    """The parts of ``request`` a handler's AdmissionRequest is built from."""

    uid: str
    operation: Literal["CREATE", "UPDATE", "DELETE"]
    name: str
    namespace: str
    subresource: str
    dry_run: bool
    user_info: Any
    options: Mapping[str, Any] | None
    object: dict[str, Any] | None
    old_object: dict[str, Any] | None


def _str(request: Mapping[str, Any], key: str, *, required: bool = False) -> str:
    value = request.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise BadReview(f"request.{key} must be a {'non-empty ' if required else ''}string")
    return value


def _gvk(data: Any, what: str, keys: tuple[str, str, str]) -> tuple[str, str, str]:
    if not isinstance(data, Mapping):
        raise BadReview(f"request.{what} is missing")
    first, second, third = (data.get(k) for k in keys)
    if not (isinstance(first, str) and isinstance(second, str) and isinstance(third, str)):
        raise BadReview(f"request.{what} must have string {', '.join(keys)}")
    return first, second, third


def _check_route(request: Mapping[str, Any], route: Route) -> None:
    kind = _gvk(request.get("kind"), "kind", ("group", "version", "kind"))
    if kind != route.target_kind:
        raise BadReview(f"request.kind {'/'.join(kind)} is not this route's {'/'.join(route.target_kind)}")
    resource = _gvk(request.get("resource"), "resource", ("group", "version", "resource"))
    group, version = group_version(route.model)
    if resource != (group, version, route.resource):
        raise BadReview(f"request.resource {'/'.join(resource)} is not this route's {group}/{version}/{route.resource}")
    if _str(request, "subResource") != route.subresource:
        raise BadReview(f"request.subResource {request.get('subResource')!r} is not this route's {route.subresource!r}")
    namespace = _str(request, "namespace")
    if route.model.namespaced != bool(namespace) and route.scope != "*":
        expected = "a namespace" if route.model.namespaced else "no namespace"
        raise BadReview(f"request.namespace {namespace!r}: this route's {route.model.kind} has {expected}")


def _check_objects(operation: str, obj: Any, old: Any) -> None:
    wants_object = operation in ("CREATE", "UPDATE")
    wants_old = operation in ("UPDATE", "DELETE")
    if wants_object != isinstance(obj, dict) or (obj is not None and not isinstance(obj, dict)):
        raise BadReview(f"request.object must be {'an object' if wants_object else 'absent'} for {operation}")
    if wants_old != isinstance(old, dict) or (old is not None and not isinstance(old, dict)):
        raise BadReview(f"request.oldObject must be {'an object' if wants_old else 'absent'} for {operation}")


def parse_review(body: bytes, route: Route) -> Review:
    """The checked request of an AdmissionReview whose kind, resource, operation, subresource, scope and
    objects match ``route``; ``BadReview`` saying what does not."""
    try:
        review = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise BadReview("the body is not JSON") from None
    if not isinstance(review, dict) or review.get("kind") != "AdmissionReview":
        raise BadReview("the body is not an AdmissionReview")
    if review.get("apiVersion") != API_VERSION:
        raise BadReview(f"apiVersion {review.get('apiVersion')!r}: only {API_VERSION} is served")
    request = review.get("request")
    if not isinstance(request, dict):
        raise BadReview("the AdmissionReview has no request")
    uid = _str(request, "uid", required=True)
    given = _str(request, "operation", required=True)
    operation = _OPERATIONS.get(given)
    if operation is None or operation not in route.operations:
        raise BadReview(f"request.operation {given!r} is not one of this route's {list(route.operations)}")
    _check_route(request, route)
    obj, old = request.get("object"), request.get("oldObject")
    _check_objects(operation, obj, old)
    dry_run = request.get("dryRun", False)
    options = request.get("options")
    if not isinstance(dry_run, bool) or (options is not None and not isinstance(options, dict)):
        raise BadReview("request.dryRun must be a boolean and request.options an object")
    return Review(
        uid=uid,
        operation=operation,
        name=_str(request, "name"),
        namespace=_str(request, "namespace"),
        subresource=_str(request, "subResource"),
        dry_run=dry_run,
        user_info=request.get("userInfo"),
        options=options,
        object=obj,
        old_object=old,
    )


def review_answer(
    uid: str,
    *,
    allowed: bool,
    status: Mapping[str, Any] | None = None,
    patch: list[dict[str, Any]] | None = None,
    warnings: list[str] | None = None,
    audit: Mapping[str, str] | None = None,
) -> bytes:
    """An AdmissionReview response body (HTTP 200)."""
    response: dict[str, Any] = {"uid": uid, "allowed": allowed}
    if status is not None:
        response["status"] = dict(status)
    if patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(patch, separators=(",", ":")).encode()).decode()
    if warnings:
        response["warnings"] = list(warnings)
    if audit:
        response["auditAnnotations"] = dict(audit)
    return json.dumps({"apiVersion": API_VERSION, "kind": "AdmissionReview", "response": response}).encode()


def http_error(message: str) -> bytes:
    """The body of an HTTP error answer (not a review): ``{"message": ...}``."""
    return json.dumps({"message": message}).encode()
