"""Guarded writes: merge patches carrying the resourceVersion they were computed from, and ``mutate``."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping, TypeVar

from cloudcoil_cache.client import Config, current_config
from cloudcoil_cache.errors import ResourceConflict

__all__ = ["guarded_patch", "merge_diff", "mutate"]

T = TypeVar("T")

_MISSING = object()


def merge_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON merge patch (RFC 7386) that turns ``before`` into ``after``: changed keys, ``None``
    for removed ones, nested objects diffed, lists replaced whole. Empty when they are equal."""
    patch: dict[str, Any] = {key: None for key in before if key not in after}
    for key, value in after.items():
        old = before.get(key, _MISSING)
        if old == value:
            continue
        if isinstance(value, dict) and isinstance(old, dict):
            nested = merge_diff(old, value)
            if nested:
                patch[key] = nested
        else:
            patch[key] = value
    return patch


def guarded_patch(
    obj: Any, patch: dict[str, Any], config: Config, *, subresource: str | None = None, field_manager: str | None = None
) -> Any:
    """PATCH ``patch`` (a merge patch) onto ``obj`` on the condition that the server still has the
    resourceVersion of ``obj`` (``ResourceConflict`` otherwise); returns the server's object."""
    meta = obj.metadata
    body = {**patch, "metadata": {**patch.get("metadata", {}), "resourceVersion": meta.resource_version}}
    client = type(obj).client(config)
    return client.patch(
        meta.name,
        body,
        namespace=meta.namespace,
        patch_type="merge",
        subresource=subresource,
        field_manager=field_manager,
    )


def mutate(
    obj: T,
    change: Callable[[T], None],
    *,
    status: bool = False,
    config: Config | None = None,
    attempts: int = 5,
) -> T:
    """Read ``obj`` live, call ``change`` on a copy, and PATCH only what it changed, guarded by the
    resourceVersion read; a conflict reads again and retries (``attempts`` in all). No change: no
    PATCH, the live object is returned. ``status=True`` writes through the status subresource (the
    change may only touch ``status``). The object must have been read from the server (a UID): a
    replacement with the same name is never mutated (``ResourceConflict``)."""
    meta = getattr(obj, "metadata", None)
    if meta is None or not meta.name or not meta.uid:
        raise ValueError("mutate() needs an object read from the server (metadata.name and metadata.uid)")
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise ValueError(f"mutate(attempts=...) must be an int >= 1, got {attempts!r}")
    config = config or current_config()
    cls: Any = type(obj)
    client = cls.client(config)
    conflict: ResourceConflict | None = None
    for _ in range(attempts):
        current: Any = client.live_get(meta.name, meta.namespace)
        if current.metadata.uid != meta.uid:
            raise ResourceConflict(f"{cls.kind} {meta.name!r} was replaced (another UID): not mutated")
        desired = current.copy()
        result: Any = change(desired)  # type: ignore[func-returns-value]
        if result is not None:
            if inspect.iscoroutine(result):
                result.close()
            raise TypeError("a mutate() callback edits the object in place and returns None")
        patch = merge_diff(current.to_dict(), desired.to_dict())
        if not patch:
            return current  # type: ignore[no-any-return]
        if status and set(patch) - {"status"}:
            raise ValueError(f"mutate(status=True) may change status only; it changed {sorted(set(patch))}")
        try:
            return guarded_patch(current, patch, config, subresource="status" if status else None)  # type: ignore[no-any-return]
        except ResourceConflict as exc:
            conflict = exc
    assert conflict is not None
    raise conflict
