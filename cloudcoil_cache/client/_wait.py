"""What ``wait_for`` (sync and async) checks before it watches, and how its timeout reads."""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from cloudcoil_cache.errors import WaitTimeout

__all__ = ["WaitPredicate", "check_wait", "wait_timeout_message"]

#: cloudcoil's predicate: ``predicate(event_type, obj)``; a true result ends the wait.
WaitPredicate = Callable[[str, Any], Any]


def check_wait(
    cls: Any, obj: Any, predicates: Mapping[str, WaitPredicate], timeout: float | None
) -> tuple[str, str | None, str | None]:
    """The ``(name, namespace, resourceVersion)`` to watch for ``wait_for(obj, predicates, timeout)``.

    Raises:
        ValueError: ``obj`` has no name, no predicate is given, or the timeout is not a number.
        TypeError: a predicate is not callable.
        WaitTimeout: ``timeout`` is zero or negative (nothing can match in no time).
    """
    meta: Any = getattr(obj, "metadata", None)
    name = getattr(meta, "name", None)
    if not name:
        raise ValueError(f"{cls.kind}.wait_for(): the object has no metadata.name to wait for")
    if not predicates:
        raise ValueError(f"{cls.kind}.wait_for(): at least one predicate is required")
    for key, predicate in predicates.items():
        if not callable(predicate):
            raise TypeError(
                f"{cls.kind}.wait_for(): predicate {key!r} is not callable (got {type(predicate).__name__})"
            )
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or math.isnan(timeout):
            raise ValueError(f"{cls.kind}.wait_for(): timeout must be a number of seconds or None, got {timeout!r}")
        if timeout <= 0:
            raise WaitTimeout(wait_timeout_message(cls, meta.namespace, name, timeout))
    return name, meta.namespace, meta.resource_version


def wait_timeout_message(cls: Any, namespace: str | None, name: str, timeout: float | None) -> str:
    where = f"{namespace}/{name}" if namespace else name
    return f"timed out after {timeout} s waiting for {cls.kind} {where}: no predicate matched"
