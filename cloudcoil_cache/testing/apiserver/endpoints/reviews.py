"""Create-only "review" resources: access reviews (always allowed), self and token reviews.

The fake has one user with every permission (the admin of a fresh cluster), so every
``SelfSubjectAccessReview``/``SubjectAccessReview`` is allowed (``kubectl auth can-i`` says yes).
Other create-only kinds (``Binding``, ...) are answered with the object, not stored.
"""

from __future__ import annotations

from typing import Any

from ..machinery import status as _status
from ..machinery.resources import ResourceType
from .context import ServerContext

__all__ = ["review"]


def review(ctx: ServerContext, rtype: ResourceType, body: Any, namespace: str | None, user: str) -> dict[str, Any]:
    """The answer to a create of a create-only kind (never stored)."""
    if not isinstance(body, dict):
        raise _status.bad_request("the request body must be a JSON object")
    out: dict[str, Any] = {
        "kind": rtype.kind,
        "apiVersion": rtype.api_version,
        "metadata": {**(body.get("metadata") or {}), "creationTimestamp": None},
    }
    if namespace:
        out["metadata"]["namespace"] = namespace
    spec: dict[str, Any] = body["spec"] if isinstance(body.get("spec"), dict) else {}
    kind = rtype.kind
    if kind in ("SelfSubjectAccessReview", "SubjectAccessReview", "LocalSubjectAccessReview"):
        if not (spec.get("resourceAttributes") or spec.get("nonResourceAttributes")):
            raise _status.StatusError(
                422,
                _status.status_body(
                    422,
                    "Invalid",
                    f'{kind}.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid '
                    'value: "null": exactly one of nonResourceAttributes or resourceAttributes '
                    "must be specified",
                ),
            )
        out["spec"] = spec
        out["status"] = {"allowed": True}
    elif kind == "SelfSubjectRulesReview":
        out["spec"] = spec
        out["status"] = {
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": False,
        }
    elif kind == "SelfSubjectReview":
        out["status"] = {"userInfo": {"username": user, "groups": ["system:masters", "system:authenticated"]}}
    elif kind == "TokenReview":
        token = spec.get("token")
        ok = ctx.settings.expected_token is not None and token == ctx.settings.expected_token
        out["spec"] = spec
        out["status"] = (
            {
                "authenticated": True,
                "user": {"username": "token-user", "groups": ["system:masters", "system:authenticated"]},
                "audiences": spec.get("audiences") or ["https://kubernetes.default.svc"],
            }
            if ok
            else {"user": {}, "error": "invalid bearer token"}
        )
    else:
        out.update({k: v for k, v in body.items() if k not in ("kind", "apiVersion", "metadata")})
    return out
