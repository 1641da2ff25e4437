"""PartialObjectMetadata: an object of any kind reduced to its metadata (what a metadata-only informer stores)."""

from __future__ import annotations

import functools
from typing import Any, ClassVar

from cloudcoil_cache.models._base import Resource
from cloudcoil_cache.models._model import model
from cloudcoil_cache.models.apimachinery import ObjectMeta

__all__ = ["PartialObjectMetadata", "is_metadata_class", "metadata_class"]


@model
class PartialObjectMetadata(Resource):
    """meta.k8s.io/v1 PartialObjectMetadata: only the ``metadata`` of an object (kube-apiserver's
    answer to ``Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1``).

    ``PartialObjectMetadata.of(Secret)`` is the class of a Secret's metadata: it keeps Secret's
    apiVersion, kind, plural and scope (as controller-runtime's ``PartialObjectMetadata`` with its
    GroupVersionKind set), so a cache or a controller watches secrets with it, and ``full()`` reads
    the whole Secret (``Secret.get(name, namespace)``).
    """

    api_version: ClassVar[str | None] = "meta.k8s.io/v1"
    kind: ClassVar[str | None] = "PartialObjectMetadata"
    group: ClassVar[str | None] = "meta.k8s.io"
    version: ClassVar[str | None] = "v1"
    #: The kind whose metadata this class holds (None: the generic class).
    metadata_of: ClassVar[Any] = None

    metadata: ObjectMeta | None = None

    @classmethod
    def of(cls, kind: Any) -> type[PartialObjectMetadata]:
        """The metadata class of ``kind`` (one per kind, made once)."""
        return metadata_class(kind)

    def full(self) -> Any:
        """The whole object this metadata belongs to: ``Kind.get(name, namespace)`` (a GET of the
        API server unless the kind is also cached whole)."""
        kind = type(self).metadata_of
        if kind is None:
            raise TypeError("PartialObjectMetadata.full(): a generic PartialObjectMetadata names no kind to get")
        kind = getattr(kind, "__editable_class__", kind)
        if kind.namespaced:
            return kind.get(self.name, self.namespace)
        return kind.get(self.name)


def is_metadata_class(cls: Any) -> bool:
    """Is ``cls`` the metadata class of a kind (``PartialObjectMetadata.of(Kind)``)?"""
    return isinstance(cls, type) and getattr(cls, "metadata_of", None) is not None


@functools.lru_cache(maxsize=None)
def metadata_class(of: Any) -> type[PartialObjectMetadata]:
    """``PartialObjectMetadata.of(kind)``: a ``PartialObjectMetadata`` subclass with ``kind``'s
    apiVersion, kind, plural, scope, group and version."""
    kind: Any = getattr(of, "__editable_class__", of)
    if is_metadata_class(kind):
        return kind  # type: ignore[no-any-return]
    if not isinstance(kind, type) or not getattr(kind, "kind", None) or not getattr(kind, "api_version", None):
        raise ValueError(f"PartialObjectMetadata.of({kind!r}): expected a resource class such as Secret")
    if getattr(kind, "plural", None) is None or getattr(kind, "namespaced", None) is None:
        raise ValueError(
            f"PartialObjectMetadata.of({kind.__name__}): {getattr(kind, 'kind', '')}'s plural and scope "
            "are not known yet (a kind found by discovery): bind it first (its first API call, or "
            "client_for(kind).bind())"
        )
    kind = of  # (Any again: not narrowed to ``type``)
    kind = getattr(kind, "__editable_class__", kind)
    name = f"{kind.__name__}Metadata"
    namespace: dict[str, Any] = {
        "__module__": __name__,
        "__qualname__": name,
        "__doc__": f"The metadata of a {kind.kind} ({kind.api_version}): PartialObjectMetadata.of({kind.__name__}).",
        "api_version": kind.api_version,
        "kind": kind.kind,
        "plural": getattr(kind, "plural", None),
        "namespaced": bool(getattr(kind, "namespaced", False)),
        "group": getattr(kind, "group", None),
        "version": getattr(kind, "version", None),
        "metadata_of": kind,
    }
    made: type[PartialObjectMetadata] = model(type(name, (PartialObjectMetadata,), namespace))
    return made
