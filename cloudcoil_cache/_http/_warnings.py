"""The API server's ``Warning`` response headers (RFC 7234 §5.5): parsed, and handed to a handler."""

from __future__ import annotations

import logging
import threading
from typing import Callable

__all__ = ["MAX_TEXT", "WarningHandler", "WarningLog", "parse_warnings"]

log = logging.getLogger("cloudcoil_cache.warnings")

#: ``handler(text)`` for each warning an API response carried (admission ``warnings``, deprecated APIs).
WarningHandler = Callable[[str], None]

#: Distinct texts a ``WarningLog`` remembers (so a flood of different texts cannot grow it without bound).
_REMEMBERED = 1024


#: The longest warning text handed on (kube-apiserver caps an admission warning at 256 characters
#: after escaping; a longer one from elsewhere is cut, so a hostile server cannot flood a log line).
MAX_TEXT = 1024


def parse_warnings(value: str) -> list[str]:
    """The texts of the ``299`` warnings in a ``Warning`` header value (several, comma-joined, may be
    in one): ``299 - "text"[ "date"]``. Other codes and malformed entries are skipped, as client-go
    does. ``value`` is as ``http.client`` gives it (bytes read as Latin-1): the API server sends
    UTF-8, which is decoded here. Texts over ``MAX_TEXT`` characters are cut."""
    value = value.encode("latin-1", "replace").decode("utf-8", "replace")
    texts: list[str] = []
    pos, end = 0, len(value)
    while pos < end:
        while pos < end and value[pos] in " \t,":
            pos += 1
        if pos >= end:
            break
        code_end = _token_end(value, pos)
        code = value[pos:code_end]
        agent_start = _skip_spaces(value, code_end)
        agent_end = _token_end(value, agent_start)
        text_start = _skip_spaces(value, agent_end)
        text, after = _quoted(value, text_start) if agent_end > agent_start else (None, text_start)
        if text is not None:
            date_start = _skip_spaces(value, after)
            if date_start < end and value[date_start] == '"':
                _date, after = _quoted(value, date_start)
            if code == "299" and _skip_spaces(value, after) in (end, value.find(",", after)):
                texts.append(text[:MAX_TEXT])
        # the next entry starts after the next comma outside a quoted string
        pos = _next_entry(value, max(after, code_end + 1) if text is not None else code_end)
    return texts


def _next_entry(value: str, pos: int) -> int:
    """The position after the next comma outside a quoted string, at or after ``pos`` (or the end)."""
    end = len(value)
    while pos < end:
        char = value[pos]
        if char == ",":
            return pos + 1
        if char == '"':
            _text, pos = _quoted(value, pos)
            continue
        pos += 1
    return end


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
