"""What a metadata-only informer keeps of an object: its metadata, no managedFields, values shared."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["SharedValues", "metadata_of"]

_intern = sys.intern


def metadata_of(raw: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """The JSON a metadata-only informer decodes from ``raw`` (whose ``metadata`` is ``meta``): the
    metadata only (kube-apiserver's kind and apiVersion, PartialObjectMetadata meta.k8s.io/v1, are
    not stored; nor the rest of a whole object from a server that ignored the media type), without
    ``managedFields`` (server-side apply's bookkeeping, often most of an object's metadata), its
    namespace interned (``sys.intern``: one string for all objects of a namespace). Equal labels,
    annotations and owner references are shared once structured (``SharedValues``)."""
    meta.pop("managedFields", None)
    namespace = meta.get("namespace")
    if namespace.__class__ is str:
        meta["namespace"] = _intern(namespace)
    return {"metadata": meta}


class SharedValues:
    """The labels, annotations and owner references of a metadata-only informer's objects, each
    distinct one held once: objects of a kind often carry the same ones (the children of one owner,
    the pods of one ReplicaSet), and cached objects are read-only, so equal values can be one.

    Runs on the informer's reflector thread (``share`` on each decoded object). What only the table
    still holds is dropped once it has grown past ``limit`` entries (then the limit follows the live
    ones), so values of deleted objects do not stay.
    """

    def __init__(self, limit: int = 4096) -> None:
        self._held: dict[Any, Any] = {}
        self._limit = limit

    def share(self, obj: Any) -> Any:
        """``obj`` with its labels, annotations and owner references replaced by equal ones held
        already (its metadata is a sealed object of this informer: set in place, before it is stored)."""
        meta = getattr(obj, "metadata", None)
        if meta is None:
            return obj
        held = self._held
        for field in ("labels", "annotations"):
            value = getattr(meta, field)
            if value:
                try:
                    kept = held.setdefault((field, *value.items()), value)
                except TypeError:  # an unhashable value: kept as it is
                    continue
                if kept is not value:
                    object.__setattr__(meta, field, kept)
        refs = meta.owner_references
        if refs:
            key = (
                "ownerReferences",
                *((r.api_version, r.kind, r.name, r.uid, r.controller, r.block_owner_deletion) for r in refs),
            )
            kept = held.setdefault(key, refs)
            if kept is not refs:
                object.__setattr__(meta, "owner_references", kept)
        if len(held) > self._limit:
            self._prune()
        return obj

    def _prune(self) -> None:
        held = self._held
        for key in list(held):
            if sys.getrefcount(held[key]) <= 2:  # the table's reference and getrefcount's argument: no object's
                del held[key]
        self._limit = max(self._limit, 2 * len(held))
