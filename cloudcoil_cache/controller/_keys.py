"""Work-queue keys: ``"namespace/name"`` (``"name"`` for cluster-scoped kinds), as client-go's MetaNamespaceKeyFunc."""

from __future__ import annotations

from typing import Any

__all__ = ["key_of", "normalize_key", "split_key"]


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
    """A key from a string, a ``(namespace, name)`` pair or a model object.

    For a namespaced kind, a bare name gets ``default_namespace`` (a ``ValueError`` without one);
    for a cluster-scoped kind any namespace is dropped.
    """
    if isinstance(value, str):
        namespace, name = split_key(value)
    elif isinstance(value, tuple) and len(value) == 2:
        namespace, name = value
    elif hasattr(value, "metadata"):
        namespace, name = split_key(key_of(value))
    else:
        raise TypeError(f"a key is 'namespace/name', a (namespace, name) pair or an object, got {type(value).__name__}")
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
