"""Transforms applied to objects before they are stored: sealing their results, and strip_managed_fields."""

from __future__ import annotations

from typing import Any

from cloudcoil_cache.models import is_sealed
from cloudcoil_cache.models._convert import copy_model

__all__ = ["sealed_result", "strip_managed_fields"]


def strip_managed_fields(obj: Any) -> Any:
    """Drop ``metadata.managedFields`` (controller-runtime's ``TransformStripManagedFields``).

    Use it as ``Cache(transform=strip_managed_fields)``: cached objects, handlers and cached reads
    then see objects without managed fields (often a third of a pod's size); writes are unaffected.
    """
    meta = getattr(obj, "metadata", None)
    if meta is None or not getattr(meta, "managed_fields", None):
        return obj
    return obj.evolve(metadata=meta.evolve(managed_fields=None))


def sealed_result(obj: Any) -> Any:
    """What a transform returned, made read-only if it is not (cached objects are shared)."""
    if is_sealed(obj) or not hasattr(obj, "__sealed_class__"):
        return obj
    return copy_model(obj, sealed=True)
