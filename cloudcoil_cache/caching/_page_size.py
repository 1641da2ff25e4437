"""The ``limit`` of a reflector's next LIST page: at most ``Tuning.page_size``, fewer when objects are big.

orjson parses a document in a buffer it takes from malloc for the call, 12 bytes per byte of
JSON (``_json.PARSE_BUFFER_FACTOR``): 15.8 MB for a page of 200 realistic pods (1.3 MB). glibc
serves the first such buffer with mmap and, when it is freed, raises its mmap threshold to its
size; every later buffer then comes from the reflector thread's malloc arena, and the objects a
page keeps that are bigger than pymalloc's 512 bytes (sharing keys, tuples, dict tables) land in
the room it leaves, so the arena never shrinks again. After a 10,000-pod sync it held ~22 MB of
free memory, ~10 MB of it resident: a third of the RSS over the heap (``benchmarks/README.md``,
"RSS and the heap"). The room a parse needs is what stays, so it is bounded by the page's bytes.

Each page's body length over its item count estimates the bytes per object, and the next page
asks for as many objects as fit in ``TARGET_BODY_BYTES`` (a ~7 MB parse buffer; orjson versions
with a pooled 8 MiB parse buffer use theirs below that and take nothing from malloc), never
fewer than a tenth of ``page_size``. The estimate is kept across lists (a relist starts at the
size the last list ended with); pages of small objects keep ``page_size``. The cost is requests:
~90 realistic pods a page instead of 200 (``benchmarks/README.md`` gives the CPU it costs).
"""

from __future__ import annotations

from cloudcoil_cache import _json

__all__ = ["TARGET_BODY_BYTES", "PageSizer"]

#: The JSON a page is sized to: 12 times this plus orjson's 256 bytes stay under 8 MiB.
TARGET_BODY_BYTES = 600_000


class PageSizer:
    """Chooses the ``limit`` of each LIST page from the sizes of the pages before it (one reflector)."""

    def __init__(self, page_size: int, target_bytes: int | None = None) -> None:
        """``target_bytes``: the body a page is sized to (default: ``TARGET_BODY_BYTES`` where the
        parser takes a buffer per document, else none: every page asks for ``page_size``)."""
        self._most = max(1, page_size)
        self._least = max(1, self._most // 10)
        if target_bytes is None and _json.PARSE_BUFFER_FACTOR is not None:
            target_bytes = TARGET_BODY_BYTES
        self._target = target_bytes or None
        self.limit = self._most

    def observe(self, items: int, body_bytes: int) -> None:
        """A page of ``items`` objects took ``body_bytes`` of JSON: size the next one."""
        if self._target is None or items <= 0 or body_bytes <= 0:
            return
        fits = self._target * items // body_bytes
        self.limit = min(self._most, max(self._least, fits))
