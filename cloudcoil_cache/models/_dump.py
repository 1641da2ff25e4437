"""pydantic's ``model_dump`` and ``model_copy`` over the attrs models (cloudcoil code calls them)."""

from __future__ import annotations

from typing import Any

from cloudcoil_cache.models import _base
from cloudcoil_cache.models._base import Model, Resource, _field_names
from cloudcoil_cache.models._codegen import wire_keywords, wire_name

__all__ = ["copy_model", "dump"]

_MODES = ("python", "json")


def dump(obj: Model, *, mode: str, by_alias: bool, exclude_none: bool) -> dict[str, Any]:
    """``obj.model_dump(...)``: the wire form walked beside the object, keys and values as asked.

    JSON values come from ``to_dict()`` (so times, unknown fields and explicit nulls are written
    exactly as the wire has them); Python values are the object's own.
    """
    if mode not in _MODES:
        raise ValueError(f"model_dump mode must be 'python' or 'json', got {mode!r}")
    wire = obj.to_dict()
    if mode == "json" and by_alias and exclude_none:
        return wire
    return _walk_model(obj, wire, mode == "json", by_alias, exclude_none)


def _walk_model(obj: Model, wire: dict[str, Any], json: bool, by_alias: bool, exclude_none: bool) -> dict[str, Any]:
    cls = type(obj)
    out: dict[str, Any] = {}
    known: set[str] = set()
    if isinstance(obj, Resource):
        for attr, key in (("api_version", "apiVersion"), ("kind", "kind")):
            known.add(key)
            value = wire.get(key)
            if value is not None or not exclude_none:
                out[key if by_alias else attr] = value
    for attr in _field_names(cls):
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
    if isinstance(value, Model):
        return _walk_model(value, wire if isinstance(wire, dict) else value.to_dict(), json, by_alias, exclude_none)
    if isinstance(value, (list, tuple)):
        items: list[Any] = wire if isinstance(wire, list) and len(wire) == len(value) else [None] * len(value)
        return [_walk(v, w, json, by_alias, exclude_none) for v, w in zip(value, items)]
    if isinstance(value, dict):
        entries: dict[str, Any] = wire if isinstance(wire, dict) else {}
        return {k: _walk(v, entries.get(k), json, by_alias, exclude_none) for k, v in value.items()}
    if json and wire is not None:
        return wire
    return value


def copy_model(obj: Any, *, update: dict[str, Any] | None, deep: bool) -> Any:
    """``obj.model_copy(update=..., deep=...)``: an editable copy, nested values shared unless deep."""
    if deep:
        new = obj.copy()
    else:
        new = object.__new__(obj.__editable_class__)
        for attr in _field_names(type(obj)):
            object.__setattr__(new, attr, getattr(obj, attr))
        extra = obj._extra
        object.__setattr__(new, "_extra", None if extra is None else dict(extra))
    if update:
        resource = isinstance(new, Resource)
        given = {"api_version": None, "kind": None} if resource else {}
        changes = wire_keywords(type(new), given, dict(update))
        if resource:
            api_version, kind = changes.pop("api_version", None), changes.pop("kind", None)
            for key, value in (("apiVersion", api_version), ("kind", kind)):
                if value is not None:
                    new._extra = {**(new._extra or {}), key: value}
        for attr, value in changes.items():
            setattr(new, attr, value)
    return new


_base.parts.dump = dump
_base.parts.copy_model = copy_model
