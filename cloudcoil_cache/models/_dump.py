"""pydantic's ``model_dump`` and ``model_copy`` over the attrs models (cloudcoil code calls them)."""

from __future__ import annotations

from typing import Any, TypeVar

from cloudcoil_cache.models import _convert
from cloudcoil_cache.models._codegen import wire_keywords
from cloudcoil_cache.models._fields import editable_class, field_names, is_model_class, is_resource_class, wire_name

__all__ = ["copy_model", "dump"]

_MODES = ("python", "json")

T = TypeVar("T")


def dump(obj: Any, *, mode: str, by_alias: bool, exclude_none: bool) -> dict[str, Any]:
    """``obj.model_dump(...)``: the wire form walked beside the object, keys and values as asked.

    JSON values come from ``to_dict()`` (so times, unknown fields and explicit nulls are written
    exactly as the wire has them); Python values are the object's own.
    """
    if mode not in _MODES:
        raise ValueError(f"model_dump mode must be 'python' or 'json', got {mode!r}")
    wire = _convert.to_wire(obj)
    if mode == "json" and by_alias and exclude_none:
        return wire
    return _walk_model(obj, wire, mode == "json", by_alias, exclude_none)


def _walk_model(obj: Any, wire: dict[str, Any], json: bool, by_alias: bool, exclude_none: bool) -> dict[str, Any]:
    cls = type(obj)
    out: dict[str, Any] = {}
    known: set[str] = set()
    if is_resource_class(cls):
        for attr, key in (("api_version", "apiVersion"), ("kind", "kind")):
            known.add(key)
            value = wire.get(key)
            if value is not None or not exclude_none:
                out[key if by_alias else attr] = value
    for attr in field_names(cls):
        key = wire_name(cls, attr)
        known.add(key)
        value = getattr(obj, attr)
        if value is None:
            if not exclude_none:
                out[key if by_alias else attr] = None
            continue
        out[key if by_alias else attr] = _walk(value, wire.get(key), json, by_alias, exclude_none)
    for key, value in wire.items():
        if key not in known:
            out[key] = value  # a field this model does not know: kept as the server sent it
    return out


def _walk(value: Any, wire: Any, json: bool, by_alias: bool, exclude_none: bool) -> Any:
    if is_model_class(value.__class__):
        return _walk_model(
            value, wire if isinstance(wire, dict) else _convert.to_wire(value), json, by_alias, exclude_none
        )
    if isinstance(value, (list, tuple)):
        items: list[Any] = wire if isinstance(wire, list) and len(wire) == len(value) else [None] * len(value)
        return [_walk(v, w, json, by_alias, exclude_none) for v, w in zip(value, items)]
    if isinstance(value, dict):
        entries: dict[str, Any] = wire if isinstance(wire, dict) else {}
        return {k: _walk(v, entries.get(k), json, by_alias, exclude_none) for k, v in value.items()}
    if json and wire is not None:
        return wire
    return value


def copy_model(obj: T, *, update: dict[str, Any] | None, deep: bool) -> T:
    """``obj.model_copy(update=..., deep=...)``: an editable copy, nested values shared unless deep."""
    new: Any
    if deep:
        new = _convert.copy_model(obj)
    else:
        new = object.__new__(editable_class(type(obj)))
        for attr in field_names(type(obj)):
            object.__setattr__(new, attr, getattr(obj, attr))
        extra = getattr(obj, "_extra")
        object.__setattr__(new, "_extra", None if extra is None else dict(extra))
    if update:
        resource = is_resource_class(type(new))
        given = {"api_version": None, "kind": None} if resource else {}
        changes = wire_keywords(type(new), given, dict(update))
        if resource:
            api_version, kind = changes.pop("api_version", None), changes.pop("kind", None)
            for key, value in (("apiVersion", api_version), ("kind", kind)):
                if value is not None:
                    new._extra = {**(new._extra or {}), key: value}
        for attr, value in changes.items():
            setattr(new, attr, value)
    copied: T = new
    return copied
