"""The ``scale`` subresource of the fake server: an ``autoscaling/v1`` Scale view of a workload."""

from __future__ import annotations

from typing import Any

from ..machinery import status as _status
from ..machinery.patch import PatchError, json_patch, merge_patch
from ..machinery.resources import ResourceType
from ..registry.crds import nested
from ..storage.store import Store
from .request import Request, Responder, method_not_allowed

__all__ = ["get_scale", "patch_scale", "serve_scale", "update_scale"]


def _meta_of(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj["metadata"]
    return {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta}


def _scale_of(rtype: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    if rtype.scale_paths is not None:
        return _custom_scale_of(rtype.scale_paths, obj)
    spec = obj.get("spec") or {}
    match = ((spec.get("selector") or {}).get("matchLabels")) or {}
    status: dict[str, Any] = {"replicas": int((obj.get("status") or {}).get("replicas") or 0)}
    if match:
        status["selector"] = ",".join(f"{k}={v}" for k, v in sorted(match.items()))
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": _meta_of(obj),
        "spec": _spec(int(spec.get("replicas", 1))),
        "status": status,
    }


def _spec(replicas: int) -> dict[str, Any]:
    """A Scale's spec: ``replicas`` is ``omitempty`` in ``autoscaling/v1``, so 0 is left out."""
    return {"replicas": replicas} if replicas else {}


def _int_at(obj: dict[str, Any], path: str) -> int:
    value, found = nested(obj, path) if path else (None, False)
    return value if found and isinstance(value, int) and not isinstance(value, bool) else 0


def _custom_scale_of(paths: tuple[str, str, str], obj: dict[str, Any]) -> dict[str, Any]:
    """A custom resource's Scale: replicas read at the CRD's spec/status paths, the selector at its
    ``labelSelectorPath``."""
    spec_path, status_path, selector_path = paths
    replicas = _int_at(obj, spec_path)
    status: dict[str, Any] = {"replicas": _int_at(obj, status_path)}
    selector, found = nested(obj, selector_path) if selector_path else (None, False)
    if found and isinstance(selector, str) and selector:
        status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": _meta_of(obj),
        "spec": _spec(replicas),
        "status": status,
    }


def _with_replicas(rtype: ResourceType, current: dict[str, Any], replicas: int) -> dict[str, Any]:
    """``current`` with ``replicas`` at its spec replicas path (copied along the path)."""
    path = rtype.scale_paths[0] if rtype.scale_paths is not None else ".spec.replicas"
    keys = path.lstrip(".").split(".")
    new = dict(current)
    node = new
    for key in keys[:-1]:
        child = node.get(key)
        node[key] = dict(child) if isinstance(child, dict) else {}
        node = node[key]
    node[keys[-1]] = replicas
    return new


def get_scale(store: Store, rtype: ResourceType, name: str, ns: str | None) -> dict[str, Any]:
    """GET a Scale; a custom resource without a value at its spec replicas path is kube-apiserver's
    500 InternalError."""
    obj = store.get(rtype, name, ns).obj
    if rtype.scale_paths is not None and not nested(obj, rtype.scale_paths[0])[1]:
        message = f'the spec replicas field "{rtype.scale_paths[0]}" does not exist'
        raise _status.StatusError(
            500,
            _status.status_body(
                500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]}
            ),
        )
    return _scale_of(rtype, obj)


def update_scale(store: Store, rtype: ResourceType, name: str, ns: str | None, scale: Any) -> dict[str, Any]:
    """PUT a Scale: sets the spec replicas (a stale ``metadata.resourceVersion`` is a 409).

    A custom resource's replicas go to its CRD's ``specReplicasPath``; a negative count is then
    refused by the custom resource's validation, as kube-apiserver does.
    """
    if not isinstance(scale, dict):
        raise _status.bad_request("the request body must be a Scale object")
    replicas = (scale.get("spec") or {}).get("replicas")
    custom = rtype.scale_paths is not None
    if custom and replicas is None:
        replicas = 0  # omitted: the zero value
    if isinstance(replicas, bool) or not isinstance(replicas, int) or (replicas < 0 and not custom):
        raise _status.StatusError(
            422,
            _status.status_body(
                422,
                "Invalid",
                f'Scale.autoscaling "{name}" is invalid: spec.replicas: Invalid value: '
                f"{replicas!r}: must be greater than or equal to 0",
            ),
        )
    with store.lock:
        current = store.get(rtype, name, ns).obj
        new = _with_replicas(rtype, current, replicas)
        new["metadata"] = dict(current["metadata"])
        wanted = (scale.get("metadata") or {}).get("resourceVersion")
        new["metadata"]["resourceVersion"] = wanted or current["metadata"]["resourceVersion"]
        return _scale_of(rtype, store.replace(rtype, name, ns, new))


def patch_scale(
    store: Store, rtype: ResourceType, name: str, ns: str | None, content_type: str, patch: Any
) -> dict[str, Any]:
    """PATCH a Scale (merge, strategic merge or JSON patch on the Scale document)."""
    with store.lock:
        scale = _scale_of(rtype, store.get(rtype, name, ns).obj)
        try:
            if content_type == "application/json-patch+json":
                new = json_patch(scale, patch)
            elif content_type not in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
                raise _status.unsupported_patch()
            elif not isinstance(patch, dict):
                raise _status.bad_request("a merge patch must be a JSON object")
            else:
                new = merge_patch(scale, patch)
        except PatchError as exc:
            raise _status.StatusError(422, _status.status_body(422, "Invalid", str(exc))) from None
        if rtype.scale_paths is not None and isinstance(new, dict) and (new.get("spec") or {}).get("replicas") is None:
            path = rtype.scale_paths[0]
            if not nested(store.get(rtype, name, ns).obj, path)[1]:
                raise _status.bad_request(f'the spec replicas field "{path}" cannot be empty')
        return update_scale(store, rtype, name, ns, new)


def serve_scale(store: Store, req: Request, out: Responder) -> None:
    """Answer a request for the ``scale`` subresource: get, update or patch."""
    rtype, name, ns = req.route.rtype, req.route.name, req.route.namespace
    assert rtype is not None and name is not None
    if req.verb == "get":
        out.send_obj(200, get_scale(store, rtype, name, ns))
    elif req.verb == "update":
        out.send_obj(200, update_scale(store, rtype, name, ns, req.json_body()))
    elif req.verb == "patch":
        out.send_obj(200, patch_scale(store, rtype, name, ns, req.content_type, req.json_body()))
    else:
        raise method_not_allowed()
