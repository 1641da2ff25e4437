"""Splits a LIST body into batches of parsed items while its bytes arrive (an unpaginated LIST streamed).

A list object is ``{...,"items":[{item},{item},...],...}``. Once the bytes before ``"items":[``
parse as the top of an object, the items that follow are cut into batches at an item boundary and
each batch is parsed on its own, so neither the whole body nor all its parsed dicts are ever held at
once, and no single parse holds the GIL for the whole collection.

Finding a boundary without a tokenizer: every item of a list starts with the same bytes up to its
first key (``{"metadata":`` for built-in kinds, ``{"apiVersion":`` for custom resources), so the next
item starts at ``},`` followed by them. Those bytes cannot occur inside a JSON string (its quotes
would be escaped), but they can occur deeper in an item (an array of objects with the same first
key, as a StatefulSet's ``volumeClaimTemplates``). A cut there leaves a bracket open, so the batch
does not parse: the cut is tried at an earlier boundary, and after a few misses the splitter stops
cutting and parses the rest at the end. A body of any other shape (whitespace between items, items
not an array, ``items`` nested) is parsed whole at the end, exactly as an unstreamed one.
"""

from __future__ import annotations

from typing import Any

from cloudcoil_cache import _json
from cloudcoil_cache.errors import BodyTooLarge, DecodeError

__all__ = ["ListSplitter"]

_ITEMS = b'"items":['
#: An item's first key is looked for in this many bytes at most (past it: no cutting).
_MAX_ITEM_PREFIX = 256
#: Cuts tried per batch (the last boundary in the buffer, then earlier ones) before waiting for more.
_TRIES_PER_BATCH = 3
#: Batches that failed every try before the splitter stops cutting (the rest is parsed at the end).
_MAX_FAILED_BATCHES = 4

_HEAD, _ITEMS_OPEN, _WHOLE = range(3)

#: With orjson, a batch is parsed in pieces of about this many bytes (see ``ListSplitter._parse``).
PARSE_PIECE = 131_072


class ListSplitter:
    """Feed the body's pieces in order; each ``feed`` returns the items it could cut (maybe none);
    ``finish`` returns the rest and the list object's other keys (``metadata``...).

    ``batch_bytes``: a batch is cut once this many bytes of items are buffered. ``max_buffer``: the
    most unparsed bytes held (None: no bound): a body that passes it without a boundary the splitter
    can cut (one huge item, or a shape it cannot cut at all) is refused with ``BodyTooLarge``.
    """

    def __init__(self, where: str, *, batch_bytes: int, max_buffer: int | None = None) -> None:
        self._where = where
        self._batch_bytes = batch_bytes
        self._max_buffer = max_buffer
        self._buf = bytearray()
        self._state = _HEAD
        self._head: dict[str, Any] = {}
        self._marker = b""
        self._next_try = batch_bytes
        self._failed_batches = 0
        self._cutting = True  # False: the rest is parsed at the end
        self._items: list[Any] = []
        #: body bytes fed so far
        self.bytes_read = 0

    @property
    def cutting(self) -> bool:
        """Whether items are still cut into batches (False: the rest is parsed at the end)."""
        return self._state != _WHOLE and self._cutting

    def take(self) -> list[Any]:
        """The items the last ``feed`` cut (handed over once)."""
        items, self._items = self._items, []
        return items

    def feed(self, piece: bytes | memoryview) -> bool:
        """Add the next bytes of the body; whether a batch was cut (its items: ``take()``)."""
        buf = self._buf
        buf += piece
        self.bytes_read += len(piece)
        if self._state == _HEAD:
            self._read_head()
        if self._state == _ITEMS_OPEN and len(buf) >= self._next_try and self.cutting:
            self._items = self._cut()
        if self._max_buffer is not None and len(buf) > self._max_buffer:  # what is left uncut
            raise BodyTooLarge(
                f"{self._where}: more than {self._max_buffer} bytes of the LIST body could not be cut "
                "into items (max_list_bytes): refused",
                limit=self._max_buffer,
            )
        return bool(self._items)

    def finish(self) -> tuple[list[Any], dict[str, Any]]:
        """The items not yet returned, and the list object's keys other than ``items``.

        Raises:
            DecodeError: the body is not JSON, or not a list object.
        """
        buf, self._buf = self._buf, bytearray()
        try:
            if self._state == _ITEMS_OPEN:
                buf[:0] = b'{"items":['
                rest = _json.loads(buf)
            else:
                rest = _json.loads(buf)
        except (ValueError, DecodeError) as exc:
            raise DecodeError(f"{self._where}: the LIST response is not valid JSON: {exc}") from None
        if rest.__class__ is not dict:
            raise DecodeError(f"{self._where}: the response is not a list object")
        items = rest.pop("items", None) or []
        if items.__class__ is not list:
            raise DecodeError(f"{self._where}: the response's items are not an array")
        head = self._head
        head.update(rest)
        return items, head

    def _read_head(self) -> None:
        buf = self._buf
        at = buf.find(_ITEMS)
        if at < 0:
            if len(buf) > _MAX_ITEM_PREFIX * 64:  # a long head: not a list shape this cuts
                self._state = _WHOLE
            return
        try:
            head = _json.loads(bytes(buf[:at]) + b'"items":[]}')
        except (ValueError, DecodeError):
            head = None
        if head.__class__ is not dict:  # "items":[ nested, or a head that is not an object's start
            self._state = _WHOLE
            return
        assert isinstance(head, dict)
        head.pop("items", None)
        self._head = head
        del buf[: at + len(_ITEMS)]
        self._state = _ITEMS_OPEN

    def _item_marker(self) -> bytes:
        """``},`` and the bytes every item starts with, up to its first key's colon (b"": not yet known)."""
        buf = self._buf
        if buf[:2] != b'{"':
            if len(buf) >= 2:
                self._cutting = False  # whitespace, or no objects: parse at the end
            return b""
        colon = buf.find(b'":', 2, _MAX_ITEM_PREFIX)
        if colon < 0:
            if len(buf) >= _MAX_ITEM_PREFIX:
                self._cutting = False
            return b""
        self._marker = b"}," + bytes(buf[: colon + 2])
        return self._marker

    def _cut(self) -> list[Any]:
        buf = self._buf
        marker = self._marker or self._item_marker()
        if not marker:
            return []
        end = len(buf)
        tried = False
        for _ in range(_TRIES_PER_BATCH):
            at = buf.rfind(marker, 0, end)
            if at <= 0:
                break
            tried = True
            try:
                items = self._parse(at + 1, marker)
            except (ValueError, DecodeError):
                end = at  # a boundary inside an item: try the one before it
                continue
            del buf[: at + 2]
            self._next_try = self._batch_bytes
            return items if items.__class__ is list else []
        if tried:  # no boundary yet (an item longer than a batch) is no failure: wait for it
            self._failed_batches += 1
            self._cutting = self._failed_batches < _MAX_FAILED_BATCHES
        self._next_try = len(buf) + self._batch_bytes
        return []

    def _parse(self, end: int, marker: bytes) -> Any:
        """The items in ``buf[:end]`` (whole items, a boundary at ``end``), parsed.

        With orjson, in pieces of about ``PARSE_PIECE`` bytes cut at item boundaries: orjson takes a
        buffer of 12 bytes per byte of document from malloc for each call, and the room a 1.5 MB
        batch's 18 MB buffer leaves in the reflector thread's arena stays resident after the sync
        (``caching._page_size``); pieces keep it under 2 MB. A piece that does not parse (a boundary
        inside an item) gets the batch parsed whole, as without pieces.
        """
        buf = self._buf
        view = memoryview(buf)
        try:
            if _json.PARSE_BUFFER_FACTOR is None or end < 2 * PARSE_PIECE:
                # one allocation of the exact size (the view is released with the join's argument tuple)
                return _json.loads(b"".join((b"[", view[:end], b"]")))
            items: list[Any] = []
            start = 0
            while start < end:
                cut = buf.find(marker, start + PARSE_PIECE, end) if start + PARSE_PIECE < end else -1
                stop = cut + 1 if cut > 0 else end
                try:
                    part = _json.loads(b"".join((b"[", view[start:stop], b"]")))
                except (ValueError, DecodeError):
                    return _json.loads(b"".join((b"[", view[:end], b"]")))
                if part.__class__ is not list:
                    return _json.loads(b"".join((b"[", view[:end], b"]")))
                items += part
                start = stop + 1  # past the comma between two items
            return items
        finally:
            view.release()
