"""Watch stream decoding: one JSON line → a typed ``WatchEvent``; ERROR events → ``APIError``."""

from __future__ import annotations

from typing import Any, Callable, Generic, TypeVar

import attrs

from cloudcoil_cache import _json
from cloudcoil_cache.errors import DecodeError, api_error_from_status

__all__ = ["INITIAL_EVENTS_END", "Refused", "WatchEvent", "decode_event"]

T = TypeVar("T")

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
_OBJECT_TYPES = frozenset(("ADDED", "MODIFIED", "DELETED"))


class Refused(Exception):
    """Internal: the ``admit`` check refused an event's object (the watch skips it and counts it)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@attrs.frozen(slots=True)
class WatchEvent(Generic[T]):
    """A decoded watch event. ``object`` is None for BOOKMARK events."""

    type: str
    object: T | None
    resource_version: str
    initial_events_end: bool = False


def decode_event(
    line: bytes, structure: Callable[[dict[str, Any]], T], admit: Callable[[dict[str, Any]], str | None] | None = None
) -> WatchEvent[T]:
    """Decode one complete watch line; ``admit`` (see ``_admit``) is asked about the object first.

    Raises:
        Refused: ``admit`` refused the object (it is not decoded).
        APIError: for an ERROR event (a 410 becomes ``WatchExpired``); the Status is never an object.
        DecodeError: for malformed JSON, an unknown event type, or an object without metadata.
    """
    try:
        event = _json.loads(line)
        etype = event["type"]
        raw = event["object"]
    except (ValueError, KeyError, TypeError, DecodeError) as exc:
        raise DecodeError(f"unable to decode an event from the watch stream: {_preview(line)}") from exc
    if not isinstance(raw, dict):
        raise DecodeError(f"watch event {etype!r} carries no object: {_preview(line)}")
    if etype == "ERROR":
        code = raw.get("code") or 500
        try:
            status_code = int(code)
        except (TypeError, ValueError):
            raise DecodeError(
                f"a watch ERROR event carries a Status whose code is not a number: {str(code)[:40]!r}"
            ) from None
        raise api_error_from_status(status_code, raw, fallback_message="watch ERROR event")
    metadata = raw.get("metadata")
    rv = metadata.get("resourceVersion") if isinstance(metadata, dict) else None
    if not rv:
        raise DecodeError(f"watch event {etype!r} has no metadata.resourceVersion: {_preview(line)}")
    if etype == "BOOKMARK":
        assert isinstance(metadata, dict)  # rv came from it
        annotations = metadata.get("annotations") or {}
        return WatchEvent("BOOKMARK", None, rv, annotations.get(INITIAL_EVENTS_END) == "true")
    if etype not in _OBJECT_TYPES:
        raise DecodeError(f"unknown watch event type {etype!r}")
    if admit is not None:
        reason = admit(raw)
        if reason is not None:
            raise Refused(f"{etype} event refused: {reason}")
    try:
        obj = structure(raw)
    except Exception as exc:  # a cattrs validation error names the failing attribute
        raise DecodeError(f"cannot structure the object of a {etype} watch event: {exc}") from exc
    return WatchEvent(etype, obj, rv)


def _preview(line: bytes) -> str:
    # Never the content: a Secret's data must not reach logs or exception messages.
    return f"<{len(line)} bytes>"
