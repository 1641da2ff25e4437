"""The ``scale`` subresource of the fake server: an ``autoscaling/v1`` Scale view of a workload."""

from __future__ import annotations

from typing import Any

from . import _status
from ._patch import PatchError, json_patch, merge_patch
from ._resources import ResourceType
from ._store import Store

__all__ = ["get_scale", "patch_scale", "update_scale"]


def _scale_of(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj["metadata"]
    spec = obj.get("spec") or {}
    match = ((spec.get("selector") or {}).get("matchLabels")) or {}
    status: dict[str, Any] = {"replicas": int((obj.get("status") or {}).get("replicas") or 0)}
    if match:
        status["selector"] = ",".join(f"{k}={v}" for k, v in sorted(match.items()))
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": int(spec.get("replicas", 1))},
        "status": status,
    }


def get_scale(store: Store, rtype: ResourceType, name: str, ns: str | None) -> dict[str, Any]:
    return _scale_of(store.get(rtype, name, ns).obj)


def update_scale(
    store: Store, rtype: ResourceType, name: str, ns: str | None, scale: Any
) -> dict[str, Any]:
    """PUT a Scale: sets ``spec.replicas`` (a stale ``metadata.resourceVersion`` is a 409)."""
    if not isinstance(scale, dict):
        raise _status.bad_request("the request body must be a Scale object")
    replicas = (scale.get("spec") or {}).get("replicas")
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
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
        new = {**current, "spec": {**(current.get("spec") or {}), "replicas": replicas}}
        new["metadata"] = dict(current["metadata"])
        wanted = (scale.get("metadata") or {}).get("resourceVersion")
        new["metadata"]["resourceVersion"] = wanted or current["metadata"]["resourceVersion"]
        return _scale_of(store.replace(rtype, name, ns, new))


def patch_scale(
    store: Store, rtype: ResourceType, name: str, ns: str | None, content_type: str, patch: Any
) -> dict[str, Any]:
    """PATCH a Scale (merge, strategic merge or JSON patch on the Scale document)."""
    with store.lock:
        scale = get_scale(store, rtype, name, ns)
        try:
            if content_type == "application/json-patch+json":
                new = json_patch(scale, patch)
            elif content_type not in (
                "application/merge-patch+json", "application/strategic-merge-patch+json"
            ):
                raise _status.unsupported_patch()
            elif not isinstance(patch, dict):
                raise _status.bad_request("a merge patch must be a JSON object")
            else:
                new = merge_patch(scale, patch)
        except PatchError as exc:
            raise _status.StatusError(422, _status.status_body(422, "Invalid", str(exc))) from None
        return update_scale(store, rtype, name, ns, new)
