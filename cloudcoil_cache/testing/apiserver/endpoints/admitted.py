"""Writes that admission webhooks see: a dry run, the webhooks (no lock held), then the write.

kube-apiserver runs mutating webhooks, then its own validation, then validating webhooks, then
stores the object, retrying from the start when an update lost a race. The fake does the same
in three steps, so that no webhook is called with the store's lock held (a webhook may read the
fake back):

1. Under the lock, the write runs as a dry run: its errors (404, 409, 422) come out here, and
   the object it would store is what the webhooks see, with the stored one as ``oldObject``.
2. Without the lock, the mutating webhooks; when one patched the object, the patched object is
   validated again (a dry-run create or update of it); then the validating webhooks.
3. Under the lock, when the stored object is still the one of step 1, the write is made for
   real (the patched object when a webhook changed it); else everything is tried again.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Callable

from ..machinery import status as _status
from ..machinery.resources import ResourceType
from ..registry.admission import request_context
from ..registry.webhook_review import AdmissionAttributes
from ..registry.webhooks import Webhooks
from .context import ServerContext
from .request import Request, Responder

__all__ = ["admitted_write"]

Endpoint = Callable[[ServerContext, Request, Responder, ResourceType], None]

_ATTEMPTS = 5
_OPERATIONS = {"create": "CREATE", "update": "UPDATE", "patch": "UPDATE", "delete": "DELETE"}
# What kube-apiserver fills in before storing a new object (after the mutating webhooks).
_SERVER_SET = ("uid", "creationTimestamp", "generation", "resourceVersion")


class _Capture:
    """A Responder that keeps the answer instead of sending it."""

    def __init__(self) -> None:
        self.code = 0
        self.obj: Any = None

    def send_obj(self, code: int, obj: Any) -> None:
        self.code, self.obj = code, obj

    def send_bytes(
        self, code: int, body: bytes, headers: dict[str, str] | None = None, content_type: str = "application/json"
    ) -> None:
        raise AssertionError("a write answers an object")

    def set_warnings(self, warnings: list[str]) -> None:
        pass

    def start_stream(self) -> None:
        raise AssertionError("a write does not stream")

    def write_raw(self, data: bytes) -> None:
        raise AssertionError("a write does not stream")

    def abort(self) -> None:
        pass

    def client_gone(self) -> bool:
        return False


def _stored(ctx: ServerContext, rtype: ResourceType, req: Request) -> dict[str, Any] | None:
    name = req.route.name
    if name is None:
        return None
    try:
        return ctx.store.get(rtype, name, req.route.namespace).obj
    except _status.StatusError:
        return None


def _options(req: Request, operation: str, dry_run: bool) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if dry_run:
        options["dryRun"] = ["All"]
    if operation != "DELETE":
        for key in ("fieldManager", "fieldValidation"):
            if req.query.get(key):
                options[key] = req.query[key]
    elif req.query.get("gracePeriodSeconds"):
        options["gracePeriodSeconds"] = int(req.query["gracePeriodSeconds"])
    return options


class _Write:
    """One write request going through the webhooks."""

    def __init__(
        self, ctx: ServerContext, req: Request, rtype: ResourceType, endpoint: Endpoint, webhooks: Webhooks
    ) -> None:
        self.ctx, self.req, self.rtype, self.endpoint, self.webhooks = ctx, req, rtype, endpoint, webhooks
        self.validation = req.query.get("fieldValidation", "")

    def preview(self) -> tuple[_Capture, dict[str, Any] | None, list[str]]:
        """The dry run of the request (lock held): its answer, the stored object, its warnings."""
        capture = _Capture()
        with self.ctx.store.lock, request_context(self.validation) as warnings:
            old = _stored(self.ctx, self.rtype, self.req)
            with self.ctx.store.dry_run():
                self.endpoint(self.ctx, self.req, capture, self.rtype)
        return capture, old, warnings

    def attributes(self, operation: str, name: str, dry_run: bool) -> AdmissionAttributes:
        return AdmissionAttributes(
            rtype=self.rtype,
            operation=operation,
            name=name,
            namespace=self.req.route.namespace,
            subresource=self.req.route.subresource,
            user=self.req.user,
            dry_run=dry_run,
            options=_options(self.req, operation, dry_run),
        )

    def revalidate(self, operation: str, obj: dict[str, Any], old: dict[str, Any] | None) -> tuple[Any, list[str]]:
        """A dry-run write of the patched object: built-in validation after the webhooks."""
        with request_context(self.validation) as warnings, self.ctx.store.dry_run():
            return self.commit(operation, copy.deepcopy(obj), old), warnings

    def commit(self, operation: str, obj: dict[str, Any], old: dict[str, Any] | None) -> Any:
        """Store the object a mutating webhook changed (a create, else an update of ``old``)."""
        store, route = self.ctx.store, self.req.route
        if operation == "CREATE":
            return store.create(self.rtype, obj, route.namespace)
        assert old is not None and route.name is not None
        obj["metadata"]["resourceVersion"] = old["metadata"].get("resourceVersion")
        return store.replace(
            self.rtype,
            route.name,
            route.namespace,
            obj,
            subresource=route.subresource,
            managed=obj["metadata"].get("managedFields"),
        )


def _request_object(operation: str, preview: Any, generated: bool) -> dict[str, Any] | None:
    """What the mutating webhooks get as ``object``: a create's before the server's fields."""
    if operation == "DELETE" or not isinstance(preview, dict):
        return None
    obj = copy.deepcopy(preview)
    if operation == "CREATE":
        meta = obj.get("metadata") or {}
        for key in _SERVER_SET:
            meta.pop(key, None)
        meta["creationTimestamp"] = None  # Go's zero time
        if generated:
            meta.pop("name", None)
    return obj


def _generated(req: Request, operation: str) -> bool:
    """Whether a create names its object by ``generateName`` (the review then has no name)."""
    if operation != "CREATE" or req.verb != "create":
        return False
    body = req.json_body()
    meta = body.get("metadata") if isinstance(body, dict) else None
    return isinstance(meta, dict) and not meta.get("name")


def _round(write: _Write, warnings: list[str], dry_run: bool) -> _Capture | None:
    """Dry run, webhooks, write: the answer, or None when the object changed meanwhile."""
    req = write.req
    capture, old, preview_warnings = write.preview()
    operation = "CREATE" if req.verb == "patch" and capture.code == 201 else _OPERATIONS[req.verb]
    generated = _generated(req, operation)
    name = "" if generated else str(req.route.name or (capture.obj or {}).get("metadata", {}).get("name", ""))
    attrs = write.attributes(operation, name, dry_run)
    hooks = write.webhooks.hooks(attrs)
    obj = _request_object(operation, capture.obj, generated)
    mutated = write.webhooks.admit(hooks, True, attrs, obj, old, warnings) if hooks else obj
    answer, changed = capture, mutated is not None and mutated != obj
    if changed:
        assert mutated is not None
        result, preview_warnings = write.revalidate(operation, mutated, old)
        answer = _Capture()
        answer.send_obj(capture.code, result)
    final_obj = answer.obj if operation != "DELETE" else None
    if generated and isinstance(final_obj, dict):  # named by now, as validating webhooks see it
        attrs = dataclasses.replace(attrs, name=str(final_obj["metadata"].get("name", "")))
    if hooks:
        write.webhooks.admit(hooks, False, attrs, final_obj, old, warnings)
    if dry_run:
        if write.validation != "Ignore":
            warnings.extend(w for w in preview_warnings if w not in warnings)
        return answer
    return _commit(write, operation, old, mutated if changed else None, capture.code)


def admitted_write(
    ctx: ServerContext,
    req: Request,
    out: Responder,
    rtype: ResourceType,
    endpoint: Endpoint,
    webhooks: Webhooks,
    warnings: list[str],
    dry_run: bool,
) -> None:
    """Answer a create/update/patch/delete the way kube-apiserver does with webhooks configured.

    ``warnings``: the list sent as ``Warning`` headers (webhook warnings are added to it).
    """
    write = _Write(ctx, req, rtype, endpoint, webhooks)
    operations = ("CREATE", "UPDATE") if req.verb == "patch" else (_OPERATIONS[req.verb],)
    if not any(webhooks.hooks(write.attributes(op, "", dry_run)) for op in operations):
        endpoint(ctx, req, out, rtype)  # no webhook's rules cover this write: no dry run first
        return
    for _ in range(_ATTEMPTS):
        answer = _round(write, warnings, dry_run)
        if answer is not None:
            out.send_obj(answer.code, answer.obj)
            return
    assert req.route.name is not None
    raise _status.conflict(rtype, req.route.name)


def _commit(
    write: _Write, operation: str, old: dict[str, Any] | None, mutated: dict[str, Any] | None, code: int
) -> _Capture | None:
    """The real write, when the stored object is still the one the webhooks saw (None: try again)."""
    with write.ctx.store.lock:
        current = _stored(write.ctx, write.rtype, write.req)
        seen = (old or {}).get("metadata", {}).get("resourceVersion")
        if operation != "CREATE" and (current or {}).get("metadata", {}).get("resourceVersion") != seen:
            return None
        capture = _Capture()
        if mutated is None:
            write.endpoint(write.ctx, write.req, capture, write.rtype)
        else:
            capture.send_obj(code, write.commit(operation, mutated, old))
        return capture
