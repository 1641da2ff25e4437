"""A mutator's answer as RFC 6902 JSON Patch ops: only what it changed, applied to the raw object."""

from __future__ import annotations

from typing import Any

__all__ = ["IDENTITY", "IdentityChanged", "escape", "mutation_patch"]

#: Fields a mutator may not change (kube-apiserver would refuse the patched object, or worse, accept it).
IDENTITY = (
    ("apiVersion",),
    ("kind",),
    ("metadata", "name"),
    ("metadata", "namespace"),
    ("metadata", "uid"),
    ("metadata", "resourceVersion"),
)

_MISSING = object()


class IdentityChanged(ValueError):
    """A mutator changed an identity field (the handler's bug: answered as a webhook failure)."""


def escape(key: str) -> str:
    """One JSON Pointer reference token (RFC 6901: ``~`` → ``~0``, ``/`` → ``~1``)."""
    return key.replace("~", "~0").replace("/", "~1")


def _at(data: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return _MISSING
        data = data[key]
    return data


def _diff(before: Any, after: Any, pointer: str, ops: list[dict[str, Any]]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key, value in before.items():
            where = f"{pointer}/{escape(key)}"
            if key not in after:
                ops.append({"op": "remove", "path": where})
            else:
                _diff(value, after[key], where, ops)
        for key, value in after.items():
            if key not in before:
                ops.append({"op": "add", "path": f"{pointer}/{escape(key)}", "value": value})
        return
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for index, (old, new) in enumerate(zip(before, after)):
            _diff(old, new, f"{pointer}/{index}", ops)
        return
    if type(before) is not type(after) or before != after:  # 1 == True, but not for JSON
        ops.append({"op": "replace", "path": pointer, "value": after})


def mutation_patch(before: dict[str, Any], after: dict[str, Any], *, subresource: str = "") -> list[dict[str, Any]]:
    """The ops that turn ``before`` (the wire form of the decoded object, equal to the raw object:
    models keep unknown fields and explicit nulls) into ``after``; ``[]`` when nothing changed.

    Dicts are compared key by key, lists element-wise when their lengths match (else replaced
    whole). Raises ``IdentityChanged`` for a changed identity field, and ``ValueError`` when a
    status-subresource mutator changes anything outside ``/status``.
    """
    for path in IDENTITY:
        if _at(before, path) != _at(after, path):
            raise IdentityChanged(f"a mutator may not change {'.'.join(path)}")
    ops: list[dict[str, Any]] = []
    _diff(before, after, "", ops)
    if subresource == "status":
        outside = [op["path"] for op in ops if not (op["path"] == "/status" or op["path"].startswith("/status/"))]
        if outside:
            raise ValueError(f"a status mutator may change only /status, not {outside}")
    return ops
