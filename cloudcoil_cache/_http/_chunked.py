"""HTTP/1.1 chunked transfer decoding over big raw reads: the fast path of ``LineStream``.

``http.client`` returns at most one chunk per ``read1()`` (a watch event costs a system call and
several layers of Python); here each raw read (up to 64-256 KB, dozens of events in a burst) is
parsed with a few C-level bytes operations per chunk, and the payload is handed on as
``(buffer, start, end)`` pieces so that the consumer slices each line out of the read buffer once.
"""

from __future__ import annotations

from typing import Callable, Iterator

from ..errors import ProtocolError

__all__ = ["ChunkedBody", "Piece"]

# The longest chunk-size line (with extensions) and the most trailer bytes accepted (as http.client).
_MAX_FRAMING_LINE = 64 * 1024
_MAX_TRAILERS = 64 * 1024
# A chunk size has at most this many hex digits (16**15 bytes is far beyond anything real; the
# payload is never buffered whole, so a big size costs no memory, only a long wait for bytes).
_MAX_SIZE_DIGITS = 15
_HEX = b"0123456789abcdefABCDEF"

Piece = tuple[bytes, int, int]


class ChunkedBody:
    """Decodes one chunked body read by ``read()`` (which returns ``b""`` at the end of the input).

    Iterate ``pieces()`` once for the payload as ``(buffer, start, end)``: ``buffer[start:end]``
    is the next payload bytes (pieces follow the reads, not the chunks: one piece may end a chunk
    another began). Iteration stops at the last chunk and its trailers (``complete`` is then True;
    also if the input ends inside the trailers, as with http.client) or when the input ends before
    the last chunk (``complete`` stays False: the body was cut off). Malformed framing
    raises ``errors.ProtocolError`` naming ``where`` (``"GET /path"``) and what was wrong, never the
    bytes received. Bytes after the body are ignored: the caller must not reuse the connection.
    """

    def __init__(self, read: Callable[[], bytes], where: str) -> None:
        self._read = read
        self._where = where
        self.complete = False

    def _malformed(self, what: str) -> ProtocolError:
        return ProtocolError(f"{self._where}: malformed chunked response body: {what}")

    def pieces(self) -> Iterator[Piece]:
        read = self._read
        data = b""
        pos = 0
        while True:
            # -- the chunk-size line: hex size [; extensions] CRLF
            eol = data.find(b"\r\n", pos)
            while eol < 0:
                if len(data) - pos > _MAX_FRAMING_LINE:
                    raise self._malformed("a chunk-size line is too long")
                more = read()
                if not more:
                    return
                searched = max(len(data) - pos - 1, 0)
                data = data[pos:] + more
                pos = 0
                eol = data.find(b"\r\n", searched)
            size = self._size(data[pos:eol])
            pos = eol + 2
            if size == 0:
                break
            # -- the payload, handed on as it is in the reads
            end = pos + size
            while end > len(data):  # the chunk goes on in the next read
                if pos < len(data):
                    yield data, pos, len(data)
                size = end - len(data)
                data = read()
                pos = 0
                if not data:
                    return
                end = size
            yield data, pos, end
            pos = end
            # -- the CRLF that ends a chunk
            if len(data) - pos < 2:  # rare: a read ended inside it
                data = self._at_least(data[pos:], 2)
                pos = 0
                if len(data) < 2:
                    return
            if data[pos] != 13 or data[pos + 1] != 10:
                raise self._malformed("a chunk's data is not followed by CRLF")
            pos += 2
        self._skip_trailers(data, pos)
        self.complete = True

    def _at_least(self, data: bytes, size: int) -> bytes:
        """``data`` and the next reads, until it holds ``size`` bytes or the input ends."""
        while len(data) < size:
            more = self._read()
            if not more:
                break
            data += more
        return data

    def _skip_trailers(self, data: bytes, pos: int) -> None:
        """Read the trailer section after the last chunk (``data[pos:]`` on): header lines up to an empty line."""
        read = self._read
        start = pos
        while True:
            eol = data.find(b"\r\n", pos)
            while eol < 0:
                if len(data) - start > _MAX_TRAILERS:
                    raise self._malformed("the trailer section is too long")
                more = read()
                if not more:  # the payload is all there: as http.client, a cut trailer is no loss
                    break
                data = data[start:] + more
                pos -= start
                start = 0
                eol = data.find(b"\r\n", max(pos, 0))
            if eol < 0 or eol == pos:
                break
            pos = eol + 2

    def _size(self, line: bytes) -> int:
        semi = line.find(b";")
        if semi >= 0:
            line = line[:semi]  # chunk extensions are ignored
        line = line.strip(b" \t")
        if not line or len(line) > _MAX_SIZE_DIGITS or line.translate(None, _HEX):
            raise self._malformed("a chunk size is not a hexadecimal number")
        return int(line, 16)
