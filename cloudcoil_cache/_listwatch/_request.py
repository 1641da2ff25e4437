"""API paths for a resource class (collection and object URLs, core and named groups)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

__all__ = ["collection_path", "group_version_prefix", "object_path"]


def group_version_prefix(cls: Any) -> str:
    """``/api/v1`` for the core group, ``/apis/{group}/{version}`` for named groups."""
    api_version: str = cls.api_version
    return f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"


def collection_path(cls: Any, namespace: str | None) -> str:
    """The LIST/WATCH path: all namespaces when ``namespace`` is None or the kind is cluster-scoped."""
    prefix = group_version_prefix(cls)
    if cls.namespaced and namespace:
        return f"{prefix}/namespaces/{quote(namespace, safe='')}/{cls.plural}"
    return f"{prefix}/{cls.plural}"


def object_path(cls: Any, name: str, namespace: str | None, subresource: str | None = None) -> str:
    """The path of one object (optionally of its ``status``/``scale`` subresource)."""
    if not name:
        raise ValueError(f"{cls.kind}: a name is required")
    if cls.namespaced and not namespace:
        raise ValueError(f"{cls.kind} is namespaced: a namespace is required for {name!r}")
    path = f"{collection_path(cls, namespace)}/{quote(name, safe='')}"
    return f"{path}/{subresource}" if subresource else path
