"""Transforms applied to objects before they are stored: sealing their results, and strip_managed_fields."""

from __future__ import annotations

from typing import Any

import attrs

from cloudcoil_cache.models import is_sealed
from cloudcoil_cache.models._convert import copy_model

__all__ = ["sealed_result", "strip_managed_fields"]


_FIELDS: dict[type, tuple[str, ...]] = {}


def _replace_sealed(obj: Any, **changes: Any) -> Any:
    """A sealed copy of a sealed ``obj`` with some fields replaced, sharing every other (read-only) value."""
    cls = type(obj)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(a.name for a in attrs.fields(cls.__editable_class__))
    new = object.__new__(cls)
    for name in names:  # object.__setattr__: the sealed class refuses ordinary assignment
        object.__setattr__(new, name, changes[name] if name in changes else getattr(obj, name))
    return new


def strip_managed_fields(obj: Any) -> Any:
    """Drop ``metadata.managedFields`` (controller-runtime's ``TransformStripManagedFields``).

    Use it as ``Cache(transform=strip_managed_fields)``: cached objects, handlers and cached reads
    then see objects without managed fields (often a third of a pod's size); writes are unaffected.
    A sealed (cached) object is rebuilt sharing all its other values, so it costs a few microseconds.
    """
    meta = getattr(obj, "metadata", None)
    if meta is None or not getattr(meta, "managed_fields", None):
        return obj
    if is_sealed(obj) and is_sealed(meta):
        return _replace_sealed(obj, metadata=_replace_sealed(meta, managed_fields=None))
    return obj.evolve(metadata=meta.evolve(managed_fields=None))


def sealed_result(obj: Any) -> Any:
    """What a transform returned, made read-only if it is not (cached objects are shared)."""
    if is_sealed(obj) or not hasattr(obj, "__sealed_class__"):
        return obj
    return copy_model(obj, sealed=True)
