"""Strategic merge patch for the fake API server (field ownership is ``fields``).

Lists are merged by the patch-merge keys of the Kubernetes 1.30 schema (the generated
``patch_keys`` table): ``containers`` by ``name``, ``ports`` by ``containerPort``,
``conditions`` by ``type``, ``finalizers`` as a set, ... Other lists are replaced. Supported
directives: ``$patch: delete`` / ``$patch: replace`` in maps and list items,
``$deleteFromPrimitiveList/<field>``, ``$retainKeys`` (keys not listed are cleared);
``$setElementOrder/<field>`` is accepted and ignored. A ``null`` value deletes a key, as in a JSON
merge patch.
"""

from __future__ import annotations

import copy
from typing import Any

from .patch import PatchError
from .patch_keys import FIELDS, KINDS

__all__ = ["definition_of", "strategic_merge"]

_DELETE_FROM = "$deleteFromPrimitiveList/"
_SET_ORDER = "$setElementOrder/"


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
            _delete_from_primitive_list(result, key, value)
        elif value is None:
            result.pop(key, None)
        else:
            _merge_member(result, key, value, definition)
    if retain is not None:  # a union (e.g. a Deployment's strategy) keeps only these keys
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _delete_from_primitive_list(result: dict[str, Any], key: str, value: Any) -> None:
    """``$deleteFromPrimitiveList/<field>``: drop ``value``'s items from ``result[field]``."""
    field = key[len(_DELETE_FROM) :]
    if not isinstance(value, list):
        raise PatchError(f"{key} must be a list")
    current = result.get(field)
    if isinstance(current, list):
        result[field] = [item for item in current if item not in value]


def _merge_member(result: dict[str, Any], key: str, value: Any, definition: str | None) -> None:
    """Merge the patch's (non-null) ``value`` for ``key`` into ``result``, by the field's strategy."""
    child, strategy, merge_key = _field(definition, key)
    current = result.get(key)
    if isinstance(value, list):
        if "merge" in strategy.split(","):
            result[key] = _merge_list(current if isinstance(current, list) else [], value, child, merge_key)
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


def _merge_list(target: list[Any], patch: list[Any], child: str | None, merge_key: str) -> list[Any]:
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
            (i for i, cur in enumerate(result) if isinstance(cur, dict) and cur.get(merge_key) == item[merge_key]),
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
        return {k: _strip_directives(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [_strip_directives(v) for v in value]
    return value
