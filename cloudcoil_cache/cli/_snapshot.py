"""Snapshot: what one frame of the demo's live view shows (the demo builds it, either view renders it)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Snapshot"]


@dataclass
class Snapshot:
    """Everything one frame of the live view shows (built on the main thread, rendered by either view)."""

    elapsed: float
    remaining: float | None
    loading: bool
    loaded_objects: int
    total_objects: int
    loaded_bytes: float
    total_bytes: int
    load_seconds: float | None
    server_objects: int
    cache_objects: int
    resource_version: str
    state: str
    seconds_since_current: float | None
    events_per_second: float
    backlog: int
    relists: int
    last_error: str | None
    counts: dict[str, int]
    read_micros: float
    read_count: int
    lists_since_sync: int
    faults: int
    recent: list[tuple[float, str, str, str]] = field(default_factory=list)
    notes: list[tuple[float, str, str, str]] = field(default_factory=list)
    final: bool = False  # the last frame: the plain view prints its status line whatever the time
