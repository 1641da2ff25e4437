"""The AdmissionReview wire: the request sent to a webhook, its answer checked and applied, and the
Status a denial or a failed call becomes (kube-apiserver's wordings)."""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..machinery import status as _status
from ..machinery.patch import PatchError, json_patch
from ..machinery.resources import ResourceType
from .webhook_rules import Target

__all__ = [
    "AdmissionAttributes",
    "CallFailed",
    "internal_error",
    "patched",
    "quote",
    "rejection",
    "review_of",
    "verified",
]

_OPTIONS_KIND = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}
_ADMIN = "system:admin"


@dataclass(frozen=True)
class AdmissionAttributes:
    """What a write is, for the webhooks it calls."""

    rtype: ResourceType
    operation: str  # CREATE, UPDATE or DELETE
    name: str  # "" for a create with generateName
    namespace: str | None
    subresource: str | None
    user: str | None  # the authenticated user, None: the fake's admin
    dry_run: bool
    options: Mapping[str, Any] = field(default_factory=dict)  # the request's options (fieldManager, ...)

    def target(self) -> Target:
        rtype = self.rtype
        namespace = self.namespace or ""
        if rtype.group == "" and rtype.plural == "namespaces":
            namespace = self.name  # a namespace request's namespace is the namespace itself
        return Target(
            group=rtype.group,
            version=rtype.version,
            resource=rtype.plural,
            subresource=self.subresource or "",
            operation=self.operation,
            namespace=namespace,
        )


class CallFailed(Exception):
    """A failure that ``failurePolicy`` decides on (kube-apiserver's ErrCallingWebhook)."""


def internal_error(message: str) -> _status.StatusError:
    """apierrors.NewInternalError."""
    text = f"Internal error occurred: {message}"
    return _status.StatusError(500, _status.status_body(500, "InternalError", text, {"causes": [{"message": message}]}))


def rejection(name: str, result: Any) -> _status.StatusError:
    """webhookerrors.ToStatusErr: the webhook's Status, its message prefixed with who denied."""
    result = dict(result) if isinstance(result, dict) else {}
    code = result.get("code")
    code = code if isinstance(code, int) and code >= 400 else 400
    denied = f"admission webhook {quote(name)} denied the request"
    if result.get("message"):
        message = f"{denied}: {result['message']}"
    elif result.get("reason"):
        message = f"{denied}: {result['reason']}"
    else:
        message = f"{denied} without explanation"
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
    body["message"] = message
    if result.get("reason"):
        body["reason"] = result["reason"]
    if isinstance(result.get("details"), dict):
        body["details"] = result["details"]
    body["code"] = code
    return _status.StatusError(code, body)


def quote(text: str) -> str:
    """Go's ``%q`` for the names and uids quoted here."""
    return json.dumps(text, ensure_ascii=False)


def review_of(attrs: AdmissionAttributes, obj: dict[str, Any] | None, old: dict[str, Any] | None) -> dict[str, Any]:
    """The AdmissionReview sent for this write (a fresh uid each time)."""
    rtype = attrs.rtype
    kind = {"group": rtype.group, "version": rtype.version, "kind": rtype.kind}
    resource = {"group": rtype.group, "version": rtype.version, "resource": rtype.plural}
    user = attrs.user or _ADMIN
    groups = ["system:masters", "system:authenticated"]  # the fake's one all-powerful user, by any name
    request: dict[str, Any] = {"uid": str(uuid.uuid4()), "kind": kind, "resource": resource}
    if attrs.subresource:
        request["subResource"] = attrs.subresource
    request["requestKind"] = dict(kind)
    request["requestResource"] = dict(resource)
    if attrs.subresource:
        request["requestSubResource"] = attrs.subresource
    if attrs.name:
        request["name"] = attrs.name
    if attrs.namespace:
        request["namespace"] = attrs.namespace
    request["operation"] = attrs.operation
    request["userInfo"] = {"username": user, "groups": groups}
    request["object"] = obj
    request["oldObject"] = old
    request["dryRun"] = attrs.dry_run
    options = {"kind": _OPTIONS_KIND[attrs.operation], "apiVersion": "meta.k8s.io/v1", **attrs.options}
    request["options"] = options
    return {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": request}


def patched(hook_name: str, answer: dict[str, Any], obj: dict[str, Any] | None) -> dict[str, Any] | None:
    """``obj`` with the answer's JSONPatch applied (500 when it does not apply)."""
    patch = answer.get("patch")
    if not patch:
        return obj
    if answer.get("patchType") != "JSONPatch":
        raise CallFailed(f"unsupported patch type {quote(str(answer.get('patchType')))}")
    try:
        operations = json.loads(base64.b64decode(str(patch), validate=True))
    except (binascii.Error, ValueError) as exc:
        raise CallFailed(f"received undecodable patch in webhook response: {exc}") from None
    if not operations:
        return obj
    if obj is None:
        raise internal_error(
            f"admission webhook {quote(hook_name)} attempted to modify the object, "
            "which is not supported for this operation"
        )
    try:
        result = json_patch(obj, operations)
    except PatchError as exc:
        raise internal_error(str(exc)) from None
    if not isinstance(result, dict) or not isinstance(result.get("metadata"), dict):
        raise internal_error("the patched object must keep its metadata")
    return result


def verified(mutating: bool, uid: str, answer: dict[str, Any]) -> dict[str, Any]:
    """VerifyAdmissionResponse: a v1 AdmissionReview answering this uid, patch fields in pairs."""
    response = answer.get("response")
    if not isinstance(response, dict):
        raise CallFailed("received invalid webhook response: webhook response was absent")
    if response.get("uid") != uid:
        got = str(response.get("uid") or "")
        raise CallFailed(f"received invalid webhook response: expected response.uid={quote(uid)}, got {quote(got)}")
    if answer.get("apiVersion") != "admission.k8s.io/v1" or answer.get("kind") != "AdmissionReview":
        version = str(answer.get("apiVersion") or "")
        group, _, ver = version.rpartition("/")
        raise CallFailed(
            "received invalid webhook response: expected webhook response of admission.k8s.io/v1, "
            f"Kind=AdmissionReview, got {group}/{ver}, Kind={answer.get('kind') or ''}"
        )
    has_patch, has_type = bool(response.get("patch")), bool(response.get("patchType"))
    if mutating and has_patch and not has_type:
        raise CallFailed(
            "received invalid webhook response: webhook returned response.patch but not response.patchType"
        )
    if mutating and has_type and not has_patch:
        raise CallFailed(
            "received invalid webhook response: webhook returned response.patchType but not response.patch"
        )
    if not mutating and has_type:
        raise CallFailed("received invalid webhook response: validating webhooks may not return response.patchType")
    return response
