"""The API server's ``Warning`` response headers (RFC 7234 §5.5): parsed, and handed to a handler."""

from __future__ import annotations

import logging
import threading
from typing import Callable

__all__ = ["WarningHandler", "WarningLog", "parse_warnings"]

log = logging.getLogger("cloudcoil_cache.warnings")

#: ``handler(text)`` for each warning an API response carried (admission ``warnings``, deprecated APIs).
WarningHandler = Callable[[str], None]

#: Distinct texts a ``WarningLog`` remembers (so a flood of different texts cannot grow it without bound).
_REMEMBERED = 1024


def parse_warnings(value: str) -> list[str]:
    """The texts of the ``299`` warnings in a ``Warning`` header value (several, comma-joined, may be
    in one): ``299 - "text"[ "date"]``. Other codes and malformed entries are skipped, as client-go does."""
    texts: list[str] = []
    pos, end = 0, len(value)
    while pos < end:
        while pos < end and value[pos] in " \t,":
            pos += 1
        code_end = _token_end(value, pos)
        code = value[pos:code_end]
        agent_start = _skip_spaces(value, code_end)
        agent_end = _token_end(value, agent_start)
        text_start = _skip_spaces(value, agent_end)
        text, pos = _quoted(value, text_start)
        if text is not None:
            date_start = _skip_spaces(value, pos)
            if date_start < end and value[date_start] == '"':
                _date, pos = _quoted(value, date_start)
            if code == "299" and agent_end > agent_start:
                texts.append(text)
        pos = max(pos, code_end + 1)  # never loop in place on malformed input
        comma = value.find(",", pos) if text is None else pos
        pos = end if comma < 0 else comma
    return texts


def _skip_spaces(value: str, pos: int) -> int:
    while pos < len(value) and value[pos] in " \t":
        pos += 1
    return pos


def _token_end(value: str, pos: int) -> int:
    while pos < len(value) and value[pos] not in ' \t,"':
        pos += 1
    return pos


def _quoted(value: str, pos: int) -> tuple[str | None, int]:
    """The quoted-string at ``pos`` (unescaped) and the position after it; None if there is none."""
    if pos >= len(value) or value[pos] != '"':
        return None, pos
    out: list[str] = []
    pos += 1
    while pos < len(value):
        char = value[pos]
        if char == "\\" and pos + 1 < len(value):
            out.append(value[pos + 1])
            pos += 2
        elif char == '"':
            return "".join(out), pos + 1
        else:
            out.append(char)
            pos += 1
    return None, pos  # unterminated


class WarningLog:
    """The default handler: each distinct text logged once at WARNING on ``cloudcoil_cache.warnings``
    (as kubectl prints them, deduplicated); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[str, None] = {}

    def __call__(self, text: str) -> None:
        with self._lock:
            if text in self._seen:
                return
            if len(self._seen) >= _REMEMBERED:
                self._seen.pop(next(iter(self._seen)))
            self._seen[text] = None
        log.warning("Warning: %s", text)
