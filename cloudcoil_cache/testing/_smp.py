"""Strategic merge patch and server-side apply's ``managedFields`` for the fake API server.

Lists are merged by the patch-merge keys of the Kubernetes 1.30 schema (the generated
``_patch_keys`` table): ``containers`` by ``name``, ``ports`` by ``containerPort``,
``conditions`` by ``type``, ``finalizers`` as a set, ... Other lists are replaced. Supported
directives: ``$patch: delete`` / ``$patch: replace`` in maps and list items,
``$deleteFromPrimitiveList/<field>``, ``$retainKeys`` (keys not listed are cleared);
``$setElementOrder/<field>`` is accepted and ignored. A ``null`` value deletes a key, as in a JSON
merge patch.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ._patch import PatchError
from ._patch_keys import FIELDS, KINDS

__all__ = ["definition_of", "fields_v1", "strategic_merge"]

_DELETE_FROM = "$deleteFromPrimitiveList/"
_SET_ORDER = "$setElementOrder/"
# Fields server-side apply does not record as managed.
_UNMANAGED_TOP = frozenset({"apiVersion", "kind", "status"})
_UNMANAGED_META = frozenset(
    {
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        "selfLink",
    }
)


def definition_of(api_version: str, kind: str) -> str | None:
    """The schema definition of a built-in kind (``None`` for kinds the table does not know)."""
    return KINDS.get((api_version, kind))


def _field(definition: str | None, name: str) -> tuple[str | None, str, str]:
    if definition is None:
        return None, "", ""
    return FIELDS.get(definition, {}).get(name, (None, "", ""))


def strategic_merge(target: Any, patch: Any, definition: str | None) -> Any:
    """Apply a strategic merge patch to ``target`` (not modified); returns the new value."""
    if not isinstance(patch, dict):
        raise PatchError("a strategic merge patch must be a JSON object")
    return _merge_map(target if isinstance(target, dict) else {}, patch, definition)


def _merge_map(target: dict[str, Any], patch: dict[str, Any], definition: str | None) -> Any:
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    body = {k: v for k, v in patch.items() if k != "$patch"}
    if directive == "replace":
        return _strip_directives(body)
    if directive is not None:
        raise PatchError(f"unknown patch directive {directive!r} in a map")
    retain = body.get("$retainKeys")
    if retain is not None and not isinstance(retain, list):
        raise PatchError("$retainKeys must be a list of field names")
    result = dict(target)
    for key, value in body.items():
        if key == "$retainKeys" or key.startswith(_SET_ORDER):
            continue
        if key.startswith(_DELETE_FROM):
            field = key[len(_DELETE_FROM):]
            if not isinstance(value, list):
                raise PatchError(f"{key} must be a list")
            current = result.get(field)
            if isinstance(current, list):
                result[field] = [item for item in current if item not in value]
            continue
        if value is None:
            result.pop(key, None)
            continue
        child, strategy, merge_key = _field(definition, key)
        current = result.get(key)
        if isinstance(value, list):
            if "merge" in strategy.split(","):
                result[key] = _merge_list(current if isinstance(current, list) else [], value,
                                          child, merge_key)
            else:
                result[key] = _strip_directives(value)
        elif isinstance(value, dict):
            merged = _merge_map(current if isinstance(current, dict) else {}, value, child)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        else:
            result[key] = copy.deepcopy(value)
    if retain is not None:  # a union (e.g. a Deployment's strategy) keeps only these keys
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _merge_list(
    target: list[Any], patch: list[Any], child: str | None, merge_key: str
) -> list[Any]:
    if any(isinstance(item, dict) and item.get("$patch") == "replace" for item in patch):
        return [
            _strip_directives(item)
            for item in patch
            if not (isinstance(item, dict) and item.get("$patch") == "replace")
        ]
    if not merge_key:  # a list of primitives merged as a set (finalizers)
        result = list(target)
        for item in patch:
            if item not in result:
                result.append(copy.deepcopy(item))
        return result
    result = [copy.deepcopy(item) for item in target]
    for item in patch:
        if not isinstance(item, dict) or merge_key not in item:
            raise PatchError(f"map: {item!r} does not contain declared merge key: {merge_key}")
        index = next(
            (i for i, cur in enumerate(result)
             if isinstance(cur, dict) and cur.get(merge_key) == item[merge_key]),
            None,
        )
        if item.get("$patch") == "delete":
            if index is not None:
                del result[index]
            continue
        if index is None:
            result.append(_strip_directives(item))
        else:
            result[index] = _merge_map(result[index], item, child)
    return result


def _strip_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _strip_directives(v)
            for k, v in value.items()
            if not k.startswith("$")
        }
    if isinstance(value, list):
        return [_strip_directives(v) for v in value]
    return value


def fields_v1(applied: dict[str, Any], definition: str | None) -> dict[str, Any]:
    """The ``fieldsV1`` set (``f:``/``k:``/``v:`` keys) of the fields an applied object sets."""
    top = {k: v for k, v in applied.items() if k not in _UNMANAGED_TOP}
    meta = top.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k not in _UNMANAGED_META}
        if meta:
            top["metadata"] = meta
        else:
            top.pop("metadata")
    return _fields_of_map(top, definition)


def _fields_of_map(value: dict[str, Any], definition: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, sub in value.items():
        if key.startswith("$"):
            continue
        child, strategy, merge_key = _field(definition, key)
        if isinstance(sub, dict) and sub:
            out[f"f:{key}"] = _fields_of_map(sub, child)
        elif isinstance(sub, list) and sub and "merge" in strategy.split(","):
            out[f"f:{key}"] = _fields_of_list(sub, child, merge_key)
        else:
            out[f"f:{key}"] = {}
    return out


def _fields_of_list(items: list[Any], child: str | None, merge_key: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        if merge_key and isinstance(item, dict) and merge_key in item:
            key = json.dumps({merge_key: item[merge_key]}, separators=(",", ":"))
            out[f"k:{key}"] = {".": {}, **_fields_of_map(item, child)}
        elif not isinstance(item, (dict, list)):
            out[f"v:{json.dumps(item, separators=(',', ':'))}"] = {}
    return out
