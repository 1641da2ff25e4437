"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902), stdlib only."""

from __future__ import annotations

import copy
from typing import Any, Callable

__all__ = ["PatchError", "merge_patch", "json_patch"]


class PatchError(ValueError):
    """A patch could not be applied (bad operation, missing path, failed ``test``)."""


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply an RFC 7386 merge patch; returns a new value, ``target`` is not modified."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _split(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}: must start with '/'")
    return [_unescape(t) for t in path[1:].split("/")]


def _index(container: list[Any], token: str, path: str, *, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise PatchError(f"invalid array index {token!r} in path {path!r}")
    idx = int(token)
    limit = len(container) + (1 if allow_end else 0)
    if idx >= limit:
        raise PatchError(f"array index {idx} out of range in path {path!r}")
    return idx


def _parent(doc: Any, path: str) -> tuple[Any, str]:
    tokens = _split(path)
    if not tokens:
        raise PatchError("the root document cannot be the target of this operation")
    cur = doc
    for token in tokens[:-1]:
        if isinstance(cur, dict):
            if token not in cur:
                raise PatchError(f"path {path!r} does not exist: missing key {token!r}")
            cur = cur[token]
        elif isinstance(cur, list):
            cur = cur[_index(cur, token, path, allow_end=False)]
        else:
            raise PatchError(f"path {path!r} does not exist")
    return cur, tokens[-1]


def _get(doc: Any, path: str) -> Any:
    cur = doc
    for token in _split(path):
        if isinstance(cur, dict):
            if token not in cur:
                raise PatchError(f"path {path!r} does not exist")
            cur = cur[token]
        elif isinstance(cur, list):
            cur = cur[_index(cur, token, path, allow_end=False)]
        else:
            raise PatchError(f"path {path!r} does not exist")
    return cur


def _add(doc: Any, path: str, value: Any) -> Any:
    if path == "":
        return value
    parent, token = _parent(doc, path)
    if isinstance(parent, dict):
        parent[token] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, token, path, allow_end=True), value)
    else:
        raise PatchError(f"path {path!r} does not exist")
    return doc


def _remove(doc: Any, path: str) -> Any:
    parent, token = _parent(doc, path)
    if isinstance(parent, dict):
        if token not in parent:
            raise PatchError(f"unable to remove nonexistent key {token!r}: path {path!r} does not exist")
        return parent.pop(token)
    if isinstance(parent, list):
        return parent.pop(_index(parent, token, path, allow_end=False))
    raise PatchError(f"path {path!r} does not exist")


def _op_add(doc: Any, op: dict[str, Any], path: str) -> Any:
    return _add(doc, path, copy.deepcopy(op["value"]))


def _op_remove(doc: Any, op: dict[str, Any], path: str) -> Any:
    _remove(doc, path)
    return doc


def _op_replace(doc: Any, op: dict[str, Any], path: str) -> Any:
    if path == "":
        return copy.deepcopy(op["value"])
    _remove(doc, path)
    return _add(doc, path, copy.deepcopy(op["value"]))


def _op_move(doc: Any, op: dict[str, Any], path: str) -> Any:
    if (path + "/").startswith(op["from"] + "/") and path != op["from"]:
        raise PatchError(f"cannot move {op['from']!r} into its own child {path!r}")
    return _add(doc, path, _remove(doc, op["from"]))


def _op_copy(doc: Any, op: dict[str, Any], path: str) -> Any:
    return _add(doc, path, copy.deepcopy(_get(doc, op["from"])))


def _op_test(doc: Any, op: dict[str, Any], path: str) -> Any:
    if _get(doc, path) != op["value"]:
        raise PatchError(f"testing value {path} failed: test failed")
    return doc


# op -> (what it applies to the document, the member it needs besides 'op' and 'path')
_OPERATIONS: dict[str, tuple[Callable[[Any, dict[str, Any], str], Any], str | None]] = {
    "add": (_op_add, "value"),
    "remove": (_op_remove, None),
    "replace": (_op_replace, "value"),
    "move": (_op_move, "from"),
    "copy": (_op_copy, "from"),
    "test": (_op_test, "value"),
}


def json_patch(target: Any, operations: Any) -> Any:
    """Apply an RFC 6902 patch (add/remove/replace/move/copy/test); ``target`` is not modified."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc = copy.deepcopy(target)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"invalid operation {op!r}: needs 'op' and 'path'")
        kind, path = op["op"], op["path"]
        entry = _OPERATIONS.get(kind) if isinstance(kind, str) else None
        if entry is None:
            raise PatchError(f"unknown patch operation {kind!r}")
        apply, needs = entry
        if needs is not None and needs not in op:
            raise PatchError(f"operation {kind!r} on {path!r} is missing {needs!r}")
        doc = apply(doc, op, path)
    return doc
