"""Status edits in memory: fields, conditions (``meta.SetStatusCondition`` semantics), observedGeneration."""

from __future__ import annotations

import copy
import datetime
import re
from typing import Any, Callable, Literal, Mapping, TypeVar, Union

from cloudcoil_cache.resources import Unstructured

__all__ = [
    "ConditionStatus",
    "Now",
    "condition_value",
    "get_condition",
    "rfc3339",
    "set_condition",
    "status_of",
    "update_status",
    "upsert_condition",
    "wire_name",
    "with_status",
]

T = TypeVar("T")

ConditionStatus = Union[bool, Literal["True", "False", "Unknown"]]
#: Wall-clock time (UTC) of condition transitions and events; tests inject their own.
Now = Callable[[], datetime.datetime]

_SNAKE = re.compile(r"_([a-z0-9])")
_CONDITION_TYPE = re.compile(r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_REASON = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def rfc3339(moment: datetime.datetime) -> str:
    """A ``metav1.Time`` (seconds, UTC, ``Z``)."""
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def wire_name(name: str) -> str:
    """``ready_replicas`` → ``readyReplicas`` (a name already in camelCase is kept)."""
    return _SNAKE.sub(lambda m: m.group(1).upper(), name)


def status_of(obj: Any) -> dict[str, Any]:
    """A deep copy of ``obj``'s status as JSON (``{}`` when it has none)."""
    if isinstance(obj, Unstructured):  # (get_dynamic_resource objects): a key, not an attribute
        found = obj.get("status")
        return copy.deepcopy(found) if isinstance(found, dict) else {}
    status = getattr(obj, "status", None)
    if status is None:
        return {}
    if isinstance(status, dict):
        return copy.deepcopy(status)
    found = obj.to_dict().get("status")
    return dict(found) if isinstance(found, dict) else {}


def with_status(obj: T, status: Mapping[str, Any]) -> T:
    """Set ``obj.status`` to ``status`` (JSON), through the resource's own model; returns ``obj``."""
    if isinstance(obj, Unstructured):
        obj["status"] = copy.deepcopy(dict(status))
        return obj
    if not _has_status(obj):
        raise TypeError(f"{type(obj).__name__} has no status field")
    data = obj.to_dict()  # type: ignore[attr-defined]
    data["status"] = dict(status)
    obj.status = type(obj).from_dict(data).status  # type: ignore[attr-defined]
    return obj


def _has_status(obj: Any) -> bool:
    try:
        getattr(obj, "status")
    except AttributeError:
        return False
    return True


def update_status(obj: T, **changes: Any) -> T:
    """Set status fields of ``obj`` in memory (names in camelCase or snake_case; ``None`` removes
    one), keeping the others; returns ``obj``. No API call: the controller persists a pass's status
    changes (``ctx.set_status``), or write it yourself."""
    status = status_of(obj)
    for name, value in changes.items():
        if value is None:
            status.pop(wire_name(name), None)
        else:
            status[wire_name(name)] = value
    return with_status(obj, status)


def get_condition(obj: Any, condition: str) -> dict[str, Any] | None:
    """A copy of the condition of type ``condition`` in ``obj``'s status (JSON: type, status, reason,
    message, lastTransitionTime, observedGeneration), or None."""
    for item in status_of(obj).get("conditions") or ():
        if isinstance(item, dict) and item.get("type") == condition:
            return dict(item)
    return None


def condition_value(status: object) -> str:
    """``True``/``False``/``"Unknown"`` (or their strings) as the condition's status string."""
    if isinstance(status, bool):
        return "True" if status else "False"
    if status in ("True", "False", "Unknown"):
        return str(status)
    raise ValueError(f"a condition's status is True, False or 'Unknown', got {status!r}")


def check_condition(name: object, reason: object, message: object) -> None:
    if not isinstance(name, str) or len(name) > 316 or not _CONDITION_TYPE.fullmatch(name):
        raise ValueError(f"a condition type is a name such as 'Ready' or 'example.com/Synced', got {name!r}")
    if not isinstance(reason, str) or len(reason) > 1024 or not _REASON.fullmatch(reason):
        raise ValueError(f"a condition reason is a CamelCase identifier such as 'Reconciled', got {reason!r}")
    if not isinstance(message, str):
        raise TypeError(f"a condition message is a string, got {type(message).__name__}")


def upsert_condition(status: dict[str, Any], new: Mapping[str, Any], now: Now = utc_now) -> None:
    """``meta.SetStatusCondition`` on a status dict: add the condition, or update its reason, message
    and observedGeneration in place, moving ``lastTransitionTime`` only when its status changes."""
    conditions = [dict(c) for c in status.get("conditions") or () if isinstance(c, dict)]
    for old in conditions:
        if old.get("type") != new["type"]:
            continue
        if old.get("status") != new["status"] or not old.get("lastTransitionTime"):
            old["lastTransitionTime"] = rfc3339(now())
        old.update({k: v for k, v in new.items() if k != "lastTransitionTime"})
        break
    else:
        conditions.append({**new, "lastTransitionTime": rfc3339(now())})
    status["conditions"] = conditions


def set_condition(
    obj: T,
    condition: str,
    status: ConditionStatus,
    *,
    reason: str,
    message: str = "",
    now: Now = utc_now,
) -> T:
    """Set a condition in ``obj``'s status in memory (``meta.SetStatusCondition``: its
    ``lastTransitionTime`` moves only when its status flips; observedGeneration is the object's
    generation); other conditions and fields are kept. Returns ``obj``."""
    check_condition(condition, reason, message)
    current = status_of(obj)
    new: dict[str, Any] = {"type": condition, "status": condition_value(status), "reason": reason, "message": message}
    generation = getattr(getattr(obj, "metadata", None), "generation", None)
    if generation is not None:
        new["observedGeneration"] = generation
    upsert_condition(current, new, now)
    return with_status(obj, current)
