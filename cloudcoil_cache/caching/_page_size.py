"""The ``limit`` of a reflector's next LIST page: at most ``Tuning.page_size``, fewer when objects are big.

orjson parses a document in a buffer it takes from malloc for the call, 12 bytes per byte of
JSON (``_json.PARSE_BUFFER_FACTOR``): 15.8 MB for a page of 200 realistic pods (1.3 MB). glibc
serves the first such buffer with mmap and, when it is freed, raises its mmap threshold to its
size; every later buffer then comes from the reflector thread's malloc arena, and the objects a
page keeps that are bigger than pymalloc's 512 bytes (sharing keys, tuples, dict tables) land in
the room it leaves, so the arena never shrinks again. After a 10,000-pod sync it held ~22 MB of
free memory, ~10 MB of it resident: most of the RSS over the heap (``benchmarks/README.md``,
"RSS and the heap"). The room a parse needs is what stays, so it is bounded by a page's bytes.

Each page's body length over its item count estimates the bytes per object, and the next page
asks for as many objects as fit in ``Tuning.page_bytes`` (default 1.5 MB: a parse buffer of at
most ~18 MB), never fewer than a tenth of ``page_size``. Pages of 200 realistic pods keep their
size; pages of objects of 50 KB ask for 30. The estimate is kept across lists (a relist starts at
the size the last list ended with). Smaller pages leave less memory behind and cost requests:
``page_bytes=600_000`` (~90 realistic pods a page) took RSS from 6.1 to 5.5 KB per pod at 10,000
pods, for ~10% more sync CPU.
"""

from __future__ import annotations

__all__ = ["PageSizer"]

#: The batch of a streamed LIST when pages are not sized by bytes (``page_bytes=None``).
_DEFAULT_BATCH_BYTES = 1_500_000


class PageSizer:
    """Chooses the ``limit`` of each LIST page from the sizes of the pages before it (one reflector)."""

    def __init__(self, page_size: int, page_bytes: int | None) -> None:
        """``page_bytes``: the JSON a page is sized to; None: every page asks for ``page_size``."""
        self._most = max(1, page_size)
        self._least = max(1, self._most // 10)
        self._target = page_bytes if page_bytes and page_bytes > 0 else None
        self.limit = self._most

    @property
    def batch_bytes(self) -> int:
        """The JSON a batch of a streamed (unpaginated) LIST is cut at: ``page_bytes``, or 1.5 MB."""
        return self._target or _DEFAULT_BATCH_BYTES

    def observe(self, items: int, body_bytes: int) -> None:
        """A page of ``items`` objects took ``body_bytes`` of JSON: size the next one."""
        if self._target is None or items <= 0 or body_bytes <= 0:
            return
        fits = self._target * items // body_bytes
        self.limit = min(self._most, max(self._least, fits))
