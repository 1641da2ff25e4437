"""``Status`` bodies with the reasons, codes and messages kube-apiserver really sends."""

from __future__ import annotations

from typing import Any

from .resources import ResourceType

__all__ = [
    "StatusError",
    "status_body",
    "not_found",
    "already_exists",
    "conflict",
    "bad_request",
    "invalid_options",
    "expired",
    "too_large_rv",
    "for_code",
    "precondition_failed",
    "field_manager_required",
    "unsupported_patch",
    "REASONS",
]

REASONS: dict[int, str] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class StatusError(Exception):
    """Raised inside request handling; the handler answers ``code`` with ``body`` (a Status)."""

    def __init__(self, code: int, body: dict[str, Any], headers: dict[str, str] | None = None):
        self.code = code
        self.body = body
        self.headers = headers or {}
        super().__init__(body.get("message", ""))


def status_body(
    code: int,
    reason: str,
    message: str,
    details: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": metadata or {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details:
        body["details"] = details
    body["code"] = code
    return body


def _details(rtype: ResourceType, name: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name}
    if rtype.group:
        details["group"] = rtype.group
    details["kind"] = rtype.plural
    return details


def not_found(rtype: ResourceType, name: str) -> StatusError:
    return StatusError(
        404,
        status_body(404, "NotFound", f'{rtype.qualified} "{name}" not found', _details(rtype, name)),
    )


def already_exists(rtype: ResourceType, name: str) -> StatusError:
    return StatusError(
        409,
        status_body(
            409,
            "AlreadyExists",
            f'{rtype.qualified} "{name}" already exists',
            _details(rtype, name),
        ),
    )


def conflict(rtype: ResourceType, name: str) -> StatusError:
    message = (
        f'Operation cannot be fulfilled on {rtype.qualified} "{name}": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )
    return StatusError(409, status_body(409, "Conflict", message, _details(rtype, name)))


def bad_request(message: str) -> StatusError:
    return StatusError(400, status_body(400, "BadRequest", message))


def invalid_options(
    field: str,
    message: str,
    *,
    kind: str = "ListOptions",
    cause_reason: str = "FieldValueForbidden",
    prefix: str = "Forbidden",
) -> StatusError:
    """A 422 Invalid on list/watch options, with one cause on ``field`` (docs/protocol.md §1.5)."""
    text = f"{prefix}: {message}"
    body = status_body(
        422,
        "Invalid",
        f'{kind}.meta.k8s.io "" is invalid: {field}: {text}',
        {
            "group": "meta.k8s.io",
            "kind": kind,
            "causes": [{"reason": cause_reason, "message": text, "field": field}],
        },
    )
    return StatusError(422, body)


def invalid_object(rtype: ResourceType, name: str, field: str, message: str) -> StatusError:
    body = status_body(
        422,
        "Invalid",
        f'{rtype.kind} "{name}" is invalid: {field}: {message}',
        {
            **_details(rtype, name),
            "kind": rtype.kind,
            "causes": [{"reason": "FieldValueInvalid", "message": message, "field": field}],
        },
    )
    return StatusError(422, body)


def unsupported_patch(builtin: bool = True) -> StatusError:
    """415 for a patch type the resource does not accept (custom resources: no strategic merge)."""
    types = ["application/json-patch+json", "application/merge-patch+json"]
    if builtin:
        types.append("application/strategic-merge-patch+json")
    types.append("application/apply-patch+yaml")
    return StatusError(
        415,
        status_body(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: " + ", ".join(types),
        ),
    )


def precondition_failed(rtype: ResourceType, name: str, field: str, wanted: str, actual: str) -> StatusError:
    """409 Conflict for a DeleteOptions precondition (``UID`` or ``ResourceVersion``) that fails."""
    message = f"Precondition failed: {field} in precondition: {wanted}, {field} in object meta: {actual}"
    return StatusError(409, status_body(409, "Conflict", message, _details(rtype, name)))


def field_manager_required() -> StatusError:
    """422 for an apply patch without ``fieldManager`` (the real server's message)."""
    text = "Required value: is required for apply patch"
    body = status_body(
        422,
        "Invalid",
        f'PatchOptions.meta.k8s.io "" is invalid: fieldManager: {text}',
        {
            "group": "meta.k8s.io",
            "kind": "PatchOptions",
            "causes": [{"reason": "FieldValueRequired", "message": text, "field": "fieldManager"}],
        },
    )
    return StatusError(422, body)


def expired(message: str, *, continue_token: str | None = None) -> StatusError:
    metadata = {"continue": continue_token} if continue_token else None
    return StatusError(410, status_body(410, "Expired", message, metadata=metadata))


def too_large_rv(requested: int, current: int, retry_after: int = 1) -> StatusError:
    body = status_body(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {requested}, current: {current}",
        {
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": retry_after,
        },
    )
    return StatusError(504, body, {"Retry-After": str(retry_after)})


def for_code(
    code: int,
    *,
    verb: str,
    rtype: ResourceType | None,
    namespace: str | None,
    message: str | None = None,
    retry_after: float | None = None,
) -> StatusError:
    """The Status the real server sends for ``code`` on this request (used by ``fail_next``)."""
    reason = REASONS.get(code, "InternalError" if code >= 500 else "Unknown")
    details: dict[str, Any] = {}
    resource = rtype.plural if rtype else ""
    if message is None:
        if code == 401:
            message = "Unauthorized"
        elif code == 403:
            group = rtype.group if rtype else ""
            scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
            message = (
                f"{resource or 'resource'} is forbidden: User "
                f'"system:serviceaccount:default:cloudcoil-test" cannot {verb} resource '
                f'"{resource}" in API group "{group}" {scope}'
            )
        elif code == 404:
            message = "the server could not find the requested resource"
        elif code == 429:
            message = "Too many requests, please try again later."
        elif code == 500:
            message = "Internal error occurred: injected failure"
        elif code == 503:
            message = "The server is currently unable to handle the request"
        elif code == 504:
            message = "Timeout: request did not complete within requested timeout - context deadline exceeded"
        else:
            message = f"injected failure {code}"
    if code == 403 and rtype is not None:
        details = {"group": rtype.group, "kind": rtype.plural} if rtype.group else {"kind": rtype.plural}
    headers: dict[str, str] = {}
    if retry_after is not None:
        # Real servers send whole seconds; fractions are allowed here so tests can stay fast.
        seconds: float = max(0.0, float(retry_after))
        headers["Retry-After"] = f"{seconds:g}"
        details["retryAfterSeconds"] = int(seconds) if seconds.is_integer() else seconds
    return StatusError(code, status_body(code, reason, message, details or None), headers)
