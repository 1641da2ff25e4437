"""Which objects a LIST or WATCH of one kind in one scope admits: kind and identity, checked before decoding."""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["Admit", "PARTIAL_KINDS", "identity_check"]

#: What kube-apiserver calls the objects of a metadata-only LIST or WATCH: (kind, apiVersion).
PARTIAL_KINDS = frozenset({("PartialObjectMetadata", "meta.k8s.io/v1")})

#: ``admit(raw) -> None`` (the object is admitted) or the reason it is refused (names no content).
Admit = Callable[[dict[str, Any]], "str | None"]


def identity_check(cls: Any, namespace: str | None, *, metadata_only: bool = False) -> Admit:
    """The check for objects of ``cls`` listed or watched in ``namespace`` (None: all namespaces).

    ``metadata_only``: the LIST or WATCH asked for ``PartialObjectMetadata``, so objects of kind
    ``PartialObjectMetadata`` (meta.k8s.io/v1) are admitted too, as are whole objects of ``cls``
    (a server that ignores the media type answers with those; only their metadata is kept).

    Refused: a ``kind``/``apiVersion`` other than the class's (when the object carries them; list
    items usually do not), no ``metadata.name``, no ``metadata.namespace`` for a namespaced kind or
    one outside the watched namespace, and a namespace on a cluster-scoped kind. Such an object
    would be stored under a wrong or ``None`` key and listed as something it is not (client-go
    skips objects of the wrong type the same way).
    """
    kind: str = cls.kind
    api_version: str = cls.api_version
    namespaced = bool(cls.namespaced)
    where = f"a watch or list of {kind}" + (f" in {namespace!r}" if namespaced and namespace else "")

    def admit(raw: dict[str, Any]) -> str | None:
        got_kind, got_version = raw.get("kind"), raw.get("apiVersion")
        if metadata_only and (got_kind, got_version) in PARTIAL_KINDS:
            got_kind = got_version = None  # kube-apiserver's metadata of an object: checked by identity below
        if (got_kind is not None and got_kind != kind) or (got_version is not None and got_version != api_version):
            return f"an object of kind {str(got_kind)[:63]!r} ({str(got_version)[:63]}) in {where}"
        meta = raw.get("metadata")
        if meta.__class__ is not dict:
            return f"an object without metadata in {where}"
        name = meta.get("name")
        if name.__class__ is not str or not name:
            return f"an object without metadata.name in {where}"
        ns = meta.get("namespace")
        if namespaced:
            if ns.__class__ is not str or not ns:
                return f"{kind} {name[:253]!r} without metadata.namespace in {where}"
            if namespace and ns != namespace:
                return f"{kind} {ns[:63]}/{name[:253]} outside the watched namespace in {where}"
        elif ns:
            return f"{kind} {name[:253]!r} with a namespace ({str(ns)[:63]!r}) although {kind} is cluster-scoped"
        return None

    return admit
