"""Kubernetes ``Time``/``MicroTime`` <-> ``datetime``, round-tripping the wire text exactly."""

from __future__ import annotations

import datetime
import re
import sys
from typing import Annotated

__all__ = [
    "MicroTime",
    "Time",
    "format_micro_time",
    "format_time",
    "parse_micro_time",
    "parse_time",
]

Time = Annotated[datetime.datetime, "k8s:Time"]
"""``metav1.Time``: RFC 3339 with second precision, always UTC on the wire ("2024-05-01T10:00:00Z")."""
MicroTime = Annotated[datetime.datetime, "k8s:MicroTime"]
"""``metav1.MicroTime``: RFC 3339 with 6 fractional digits ("2024-05-01T10:00:00.123456Z")."""

_UTC = datetime.timezone.utc


class WireTime(datetime.datetime):
    """A ``datetime`` parsed from non-canonical wire text (offset, odd precision); keeps the text.

    Only the parsed instance carries the text: a value derived from it (``replace()``, arithmetic)
    is a new instance without it, and is formatted canonically.
    """

    __slots__ = ("wire",)

    wire: str


if sys.version_info >= (3, 11):
    _fromiso = datetime.datetime.fromisoformat
else:  # pragma: no cover - Python 3.10: no trailing "Z", and only 3 or 6 fractional digits
    _FRACTION = re.compile(r"\.(\d+)")

    def _fromiso(text: str) -> datetime.datetime:
        if text[-1:] in ("Z", "z"):
            text = text[:-1] + "+00:00"
        match = _FRACTION.search(text)
        if match and len(match.group(1)) not in (3, 6):
            digits = (match.group(1) + "000000")[:6]
            text = text[: match.start(1)] + digits + text[match.end(1) :]
        return datetime.datetime.fromisoformat(text)


def _keep_wire(value: datetime.datetime, text: str) -> datetime.datetime:
    kept = WireTime(
        value.year,
        value.month,
        value.day,
        value.hour,
        value.minute,
        value.second,
        value.microsecond,
        value.tzinfo,
        fold=value.fold,
    )
    kept.wire = text
    return kept


def _parse(text: str, what: str) -> datetime.datetime:
    try:
        return _fromiso(text)
    except ValueError:
        raise ValueError(f"not a Kubernetes {what} (RFC 3339 date-time): {text!r:.60}") from None


#: Canonical ``Time`` texts parsed lately -> their (immutable) datetime: the times of one object
#: (its creation, its conditions' transitions, its containers' starts) and of objects created
#: together mostly repeat, and each datetime is 48 bytes. Emptied when full; thread-safe under the GIL.
_recent_times: dict[str, datetime.datetime] = {}
_RECENT_TIMES_MAX = 4096


def parse_time(text: str) -> datetime.datetime:
    """Parse a ``Time``; canonical text ("...T10:00:00Z") gives a plain aware ``datetime``
    (the same instance for the same text while it is in the table of recent texts)."""
    value = _recent_times.get(text) if text.__class__ is str else None
    if value is not None:
        return value
    value = _parse(text, "Time")
    if len(text) == 20 and text[19] == "Z" and text[10] == "T":
        if len(_recent_times) >= _RECENT_TIMES_MAX:
            _recent_times.clear()
        _recent_times[text] = value
        return value
    return _keep_wire(value, text)


def parse_micro_time(text: str) -> datetime.datetime:
    """Parse a ``MicroTime``; canonical text ("...T10:00:00.123456Z") gives a plain ``datetime``."""
    value = _parse(text, "MicroTime")
    if len(text) == 27 and text[26] == "Z" and text[19] == "." and text[10] == "T":
        return value
    return _keep_wire(value, text)


def _wire_of(value: datetime.datetime) -> str | None:
    # Only instances made by _keep_wire carry the text: replace() and arithmetic build new
    # instances whose slot is unset, so a derived value is formatted canonically.
    return getattr(value, "wire", None)


def _utc(value: datetime.datetime) -> datetime.datetime:
    if value.tzinfo is None:
        return value  # naive values are taken to be UTC already
    if value.utcoffset():
        return value.astimezone(_UTC)
    return value


def format_time(value: datetime.datetime) -> str:
    """Wire text of a ``Time``: UTC, second precision (what the API server writes)."""
    if value.__class__ is WireTime:
        text = _wire_of(value)
        if text is not None:
            return text
    if not isinstance(value, datetime.datetime):
        raise TypeError(f"expected a datetime for a Kubernetes Time, got {type(value).__name__}")
    return _utc(value).isoformat()[:19] + "Z"


def format_micro_time(value: datetime.datetime) -> str:
    """Wire text of a ``MicroTime``: UTC with exactly 6 fractional digits."""
    if value.__class__ is WireTime:
        text = _wire_of(value)
        if text is not None:
            return text
    if not isinstance(value, datetime.datetime):
        raise TypeError(f"expected a datetime for a Kubernetes MicroTime, got {type(value).__name__}")
    return _utc(value).isoformat(timespec="microseconds")[:26] + "Z"
