"""Read counters of one cache, per kind: hits, misses, fallbacks, live reads, refusals (and their Prometheus text)."""

from __future__ import annotations

from typing import Any, Iterable

import attrs

__all__ = [
    "FALLBACK",
    "HIT",
    "LIVE_READ",
    "MISS",
    "OUTCOMES",
    "REFUSAL",
    "ReadCounters",
    "ReadCounts",
    "kind_label",
    "merged",
    "metrics_text",
]

#: The outcomes of a read through a cache, as indexes into a counter row.
HIT, MISS, FALLBACK, LIVE_READ, REFUSAL = range(5)
#: Their names in metrics (``outcome`` label), in that order.
OUTCOMES = ("hit", "miss", "fallback", "live", "refused")


@attrs.frozen
class ReadCounts:
    """The reads of one kind through one cache so far (``CacheStatus.reads``). Approximate under
    threads: plain increments without a lock (a hit costs no more than that), so concurrent reads
    may now and then count once for two; never more than happened.

    ``hits``: served from the cache (a get of a cached object, a list); ``misses``: the cache
    answered "not found"; ``fallbacks``: the cache could not serve (not synced, stale, a pending
    write not delivered in time, a selector it cannot answer) and the read went to the API server
    (fallback mode); ``live_reads``: read from the API server because the cache was bypassed
    (disabled, paused); ``refusals``: refused with ``CacheUnavailableError`` (strict mode).
    """

    hits: int = 0
    misses: int = 0
    fallbacks: int = 0
    live_reads: int = 0
    refusals: int = 0


class ReadCounters:
    """The slow-path counters of one cache, per kind (a get that is a hit is counted by its kind's
    ``CacheReader``, on its own object). Thread safety: none; a row is made once per kind
    (``dict.setdefault``), its increments may be lost under contention (approximate)."""

    def __init__(self) -> None:
        self._rows: dict[Any, list[int]] = {}

    def count(self, cls: Any, outcome: int) -> None:
        row = self._rows.get(cls)
        if row is None:
            row = self._rows.setdefault(cls, [0] * len(OUTCOMES))
        row[outcome] += 1

    def row(self, cls: Any) -> list[int]:
        """A copy of ``cls``'s counts, by outcome."""
        return list(self._rows.get(cls) or [0] * len(OUTCOMES))

    def kinds(self) -> list[Any]:
        return list(self._rows)


def kind_label(cls: Any) -> str:
    """``Pod``, ``Deployment.apps``: a kind and its API group, as a key of ``CacheStatus.reads``."""
    group = str(getattr(cls, "api_version", "")).rpartition("/")[0]
    kind = str(getattr(cls, "kind", None) or getattr(cls, "__name__", cls))
    return f"{kind}.{group}" if group else kind


def metrics_text(reads: dict[str, ReadCounts], prefix: str = "cloudcoil_cache") -> str:
    """The counts in Prometheus' text exposition format (0.0.4): ``<prefix>_reads_total`` by
    ``kind`` (as ``kind_label``) and ``outcome``."""
    name = f"{prefix}_reads_total"
    lines = [
        f"# HELP {name} Reads through the cache by kind and outcome "
        "(hit, miss, fallback, live, refused); approximate under threads.",
        f"# TYPE {name} counter",
    ]
    for kind in sorted(reads):
        counts = attrs.astuple(reads[kind])
        for outcome, value in zip(OUTCOMES, counts):
            lines.append(f'{name}{{kind="{_escape(kind)}",outcome="{outcome}"}} {value}')
    return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def merged(rows: Iterable[tuple[str, list[int]]]) -> dict[str, ReadCounts]:
    """``{kind label: ReadCounts}`` from rows by outcome (rows of one label are added up)."""
    totals: dict[str, list[int]] = {}
    for label, row in rows:
        total = totals.setdefault(label, [0] * len(OUTCOMES))
        for i, value in enumerate(row):
            total[i] += value
    return {label: ReadCounts(*row) for label, row in totals.items()}
