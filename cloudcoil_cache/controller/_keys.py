"""Work-queue keys: ``"namespace/name"`` (``"name"`` for cluster-scoped kinds), as client-go's MetaNamespaceKeyFunc."""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["ResourceKey", "key_of", "normalize_key", "split_key"]


@attrs.frozen
class ResourceKey:
    """A primary object's identity within a controller's kind (cloudcoil 0.8's ``ResourceKey``):
    ``namespace`` None for a cluster-scoped kind (or to take the controller's default namespace).

    Accepted wherever a key is (``enqueue``, mappers' results); ``str(key)`` is the string form
    ``"namespace/name"`` (``"name"`` without a namespace), which keeps working too.
    """

    name: str
    namespace: str | None = None

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or "/" in self.name:
            raise ValueError(f"ResourceKey(name=...) must be a non-empty name without '/', got {self.name!r}")
        if self.namespace is not None and (not isinstance(self.namespace, str) or "/" in self.namespace):
            raise ValueError(f"ResourceKey(namespace=...) must be None or a namespace, got {self.namespace!r}")

    @classmethod
    def from_resource(cls, obj: Any) -> ResourceKey:
        """The key of a model object (its ``metadata.name`` and ``metadata.namespace``)."""
        namespace, name = split_key(key_of(obj))
        return cls(name, namespace)

    @classmethod
    def parse(cls, key: str) -> ResourceKey:
        """``"namespace/name"`` or ``"name"`` as a ResourceKey."""
        namespace, name = split_key(key)
        return cls(name, namespace or None)

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


def key_of(obj: Any) -> str:
    """The key of a model object."""
    meta = obj.metadata
    if meta is None or not meta.name:
        raise ValueError(f"{type(obj).__name__} has no metadata.name: it has no key")
    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name


def split_key(key: str) -> tuple[str | None, str]:
    """``"ns/name"`` → ``("ns", "name")``; ``"name"`` → ``(None, "name")``."""
    namespace, sep, name = key.rpartition("/")
    return (namespace if sep else None), name


def normalize_key(value: Any, *, namespaced: bool, default_namespace: str | None) -> str:
    """A key from a string, a ``ResourceKey``, a ``(namespace, name)`` pair or a model object.

    For a namespaced kind, a bare name gets ``default_namespace`` (a ``ValueError`` without one);
    for a cluster-scoped kind any namespace is dropped.
    """
    if isinstance(value, str):
        namespace, name = split_key(value)
    elif isinstance(value, ResourceKey):
        namespace, name = value.namespace, value.name
    elif isinstance(value, tuple) and len(value) == 2:
        namespace, name = value
    elif hasattr(value, "metadata"):
        namespace, name = split_key(key_of(value))
    else:
        raise TypeError(
            "a key is 'namespace/name', a ResourceKey, a (namespace, name) pair or an object, "
            f"got {type(value).__name__}"
        )
    if not isinstance(name, str) or not name or (namespace is not None and not isinstance(namespace, str)):
        raise ValueError(f"not a valid key: {value!r}")
    if not namespaced:
        return name
    namespace = namespace or default_namespace
    if not namespace:
        raise ValueError(
            f"key {value!r} has no namespace and the controller watches all namespaces: give 'namespace/name'"
        )
    return f"{namespace}/{name}"
