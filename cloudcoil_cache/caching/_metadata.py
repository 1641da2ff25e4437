"""What a metadata-only informer keeps of an object's JSON: its metadata, no managedFields, shared strings."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["metadata_of"]

_intern = sys.intern
#: Longer label or annotation values (a JSON blob, a certificate) are rarely shared: left as they are.
_SHARED_MAX = 256


def _shared(values: Any) -> Any:
    """A labels or annotations dict whose keys and short values are interned strings."""
    if values.__class__ is not dict or not values:
        return values
    return {
        (_intern(k) if k.__class__ is str else k): (_intern(v) if v.__class__ is str and len(v) <= _SHARED_MAX else v)
        for k, v in values.items()
    }


def metadata_of(raw: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """The JSON a metadata-only informer decodes from ``raw`` (whose ``metadata`` is ``meta``): the
    metadata only (kube-apiserver's kind and apiVersion, PartialObjectMetadata meta.k8s.io/v1, are
    not stored; nor the rest of a whole object from a server that ignored the media type), without
    ``managedFields`` (server-side apply's bookkeeping, often most of an object's metadata), and
    with the values objects of a kind share interned once for all of them: the namespace, label and
    annotation keys and short values, owner references and finalizers (``sys.intern``: dropped
    with the last object holding them)."""
    meta.pop("managedFields", None)
    namespace = meta.get("namespace")
    if namespace.__class__ is str:
        meta["namespace"] = _intern(namespace)
    for field in ("labels", "annotations"):
        values = meta.get(field)
        if values is not None:
            meta[field] = _shared(values)
    refs = meta.get("ownerReferences")
    if refs.__class__ is list:
        for ref in refs:
            if ref.__class__ is dict:
                for key in ("apiVersion", "kind", "name", "uid"):
                    value = ref.get(key)
                    if value.__class__ is str:
                        ref[key] = _intern(value)
    finalizers = meta.get("finalizers")
    if finalizers.__class__ is list:
        meta["finalizers"] = [_intern(f) if f.__class__ is str else f for f in finalizers]
    return {"metadata": meta}
