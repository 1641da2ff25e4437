"""Finalizers: adding a controller's finalizers to live objects and removing one after its cleanup ran."""

from __future__ import annotations

import re
from typing import Any, Iterable, TypeVar

from cloudcoil_cache.client import Config
from cloudcoil_cache.controller._mutations import guarded_patch, mutate
from cloudcoil_cache.controller._outcomes import TerminalError

__all__ = ["add_missing", "check_finalizer_name", "ensure_finalizer", "remove_finalizer", "without_finalizer"]

T = TypeVar("T")

# A qualified name as the API server validates finalizers: "<DNS subdomain>/<name>".
_QUALIFIED = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")


def check_finalizer_name(name: object) -> str:
    """``name`` if it is a qualified finalizer name such as ``example.com/cleanup``; else ValueError."""
    if not isinstance(name, str) or len(name) > 316 or not _QUALIFIED.fullmatch(name):
        raise ValueError(f"a finalizer is a qualified name such as 'example.com/cleanup', got {name!r}")
    return name


def _finalizers(obj: Any) -> list[str]:
    return list(obj.metadata.finalizers or [])


def ensure_finalizer(obj: T, finalizer: str, *, config: Config | None = None) -> T:
    """Add ``finalizer`` to the live object (a guarded patch; none when it is there). Raises
    ``TerminalError`` when the object is being deleted: a finalizer is never added then."""
    check_finalizer_name(finalizer)

    def change(live: Any) -> None:
        present = _finalizers(live)
        if finalizer in present:
            return
        if live.metadata.deletion_timestamp is not None:
            raise TerminalError(f"{type(live).kind} {live.metadata.name!r} is being deleted: finalizer not added")
        live.metadata.finalizers = [*present, finalizer]

    return mutate(obj, change, config=config)


def remove_finalizer(obj: T, finalizer: str, *, config: Config | None = None) -> T:
    """Remove ``finalizer`` from the live object (a guarded patch; none when it is not there). Call it
    only once the cleanup it stands for has succeeded."""
    check_finalizer_name(finalizer)

    def change(live: Any) -> None:
        present = _finalizers(live)
        if finalizer in present:
            live.metadata.finalizers = [f for f in present if f != finalizer]

    return mutate(obj, change, config=config)


def add_missing(obj: Any, names: Iterable[str], config: Config, field_manager: str) -> Any:
    """The controller's step before a reconcile: ``obj`` (as cached) with ``names`` added by one PATCH
    guarded by its resourceVersion, or ``obj`` itself when none is missing. Never called for an
    object being deleted."""
    present = _finalizers(obj)
    missing = [n for n in names if n not in present]
    if not missing:
        return obj
    return guarded_patch(obj, {"metadata": {"finalizers": present + missing}}, config, field_manager=field_manager)


def without_finalizer(obj: Any, name: str, config: Config, field_manager: str) -> Any:
    """The controller's step after a finalizer function succeeded: ``name`` removed from ``obj`` by a
    guarded PATCH (the object goes when it was the last one)."""
    rest = [n for n in _finalizers(obj) if n != name]
    return guarded_patch(obj, {"metadata": {"finalizers": rest or None}}, config, field_manager=field_manager)
