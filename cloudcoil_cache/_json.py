"""JSON encode/decode in one place: orjson when it is installed (about 2x faster), else the stdlib."""

from __future__ import annotations

import functools
import json
import marshal
from typing import Any, Callable

from .errors import DecodeError

__all__ = ["HAVE_ORJSON", "PARSE_BUFFER_FACTOR", "dumps", "key", "loads"]

_orjson: Any
try:  # pragma: no cover - which branch runs depends on the environment
    import orjson as _orjson
except ImportError:  # pragma: no cover
    _orjson = None

HAVE_ORJSON = _orjson is not None

#: Bytes of buffer ``loads`` takes from malloc per byte of document, for the length of the call
#: (orjson's parser: 12, measured with orjson 3.13; a 1.3 MB LIST page took 15.8 MB). See
#: ``caching._page_size`` for what such buffers left behind. None: the standard library parses.
PARSE_BUFFER_FACTOR: int | None = 12 if _orjson is not None else None


def _stdlib_loads(data: bytes | bytearray | memoryview | str) -> Any:
    if isinstance(data, memoryview):
        data = data.tobytes()
    return json.loads(data)


def _stdlib_dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


_marshal = marshal.dumps


def _stdlib_key(obj: Any) -> bytes:
    # marshal (format 0: no back-references, no interning flags, so equal values give equal bytes
    # whatever their identity) is 2-3x faster than json.dumps and as exact: it writes only exact
    # str/int/float/bool/None/list/dict, distinguishes 1, 1.0 and True, and refuses subclasses
    # and every other type (ValueError), as orjson's key refuses them.
    try:
        return _marshal(obj, 0)
    except ValueError:
        raise TypeError(f"not a plain JSON value: {type(obj).__name__}") from None


_loads: Callable[[Any], Any] = _orjson.loads if _orjson is not None else _stdlib_loads
_dumps: Callable[[Any], bytes] = _orjson.dumps if _orjson is not None else _stdlib_dumps
if _orjson is not None:
    _KEY_OPTIONS = (
        _orjson.OPT_PASSTHROUGH_DATETIME | _orjson.OPT_PASSTHROUGH_SUBCLASS | _orjson.OPT_PASSTHROUGH_DATACLASS
    )
    # A C-level call: keys are computed dozens of times per decoded object.
    _key: Callable[[Any], bytes] = functools.partial(_orjson.dumps, option=_KEY_OPTIONS)
else:  # pragma: no cover
    _key = _stdlib_key


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse one JSON document.

    Raises:
        DecodeError: the text is not valid JSON (the message gives its size, never its content:
            a body may hold a Secret's data).
    """
    try:
        return _loads(data)
    except ValueError as e:  # orjson.JSONDecodeError and json.JSONDecodeError are ValueErrors
        raise DecodeError(f"invalid JSON ({e}): {_preview(data)}") from e


def dumps(obj: Any) -> bytes:
    """Serialise ``obj`` to compact UTF-8 JSON bytes.

    Raises:
        TypeError: ``obj`` holds something JSON cannot represent.
    """
    return _dumps(obj)


#: ``key(obj) -> bytes``: bytes of a plain JSON value, as a lookup key within this process: equal
#: keys, equal JSON values of equal types (with orjson its compact JSON; without, its ``marshal``
#: bytes, format 0). Values JSON would only represent by conversion (datetimes, subclasses of
#: str/int/dict/list, dataclasses) raise ``TypeError``, so they never share a key with a real JSON
#: value; so do values too deep (and, with orjson, ints beyond 64 bits).
key: Callable[[Any], bytes] = _key


def _preview(data: bytes | bytearray | memoryview | str) -> str:
    return f"<{len(data)} {'characters' if isinstance(data, str) else 'bytes'}>"
