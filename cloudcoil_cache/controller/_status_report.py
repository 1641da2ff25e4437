"""Controller.status(): ControllerStatus (a snapshot) and the reconcile counts it is made from."""

from __future__ import annotations

import collections
import concurrent.futures
import threading
import types
from typing import Any, Mapping

import attrs

from cloudcoil_cache.controller._fence import LeadershipLost
from cloudcoil_cache.controller._outcomes import TerminalError, Wait
from cloudcoil_cache.controller._queue import QueueStats
from cloudcoil_cache.controller._timeout import ReconcileTimeout

__all__ = ["ControllerStatus", "ReconcileCounts", "snapshot"]

#: The most keys whose last error a controller remembers (the oldest is dropped first).
MAX_ERROR_KEYS = 1000
#: The longest error text kept per key.
MAX_ERROR_TEXT = 500


@attrs.frozen
class ControllerStatus:
    """A snapshot of a controller (cloudcoil 0.8's ``ControllerStatus``, plus what threads add).

    ``ready``: informers synced and workers running. ``synced``: every informer synced.
    ``running``/``leading``: the workers run (they run only while this replica leads, or always
    without an election). Queue: ``queued`` keys ready to be taken, ``delayed`` keys waiting for a
    backoff or requeue timer, ``processing`` keys being reconciled; ``queued_by_priority``: the
    queued keys per ``Priority`` name (``{"EVENT": 1, "REPLAY": 4999, "CONVERGED": 0}``). Counts
    (since the controller was created, across runs): ``successes`` (``Wait`` included), ``errors`` (timeouts included),
    ``terminal_errors``, ``timeouts``, ``cancellations``, ``leadership_lost``; ``abandoned``: timed-out
    sync reconciles whose thread is still running; ``last_errors``: the last error of each key whose
    latest reconcile failed (``"Type: message"``). ``sharding``: a sharded controller's ring, share,
    moves and drains (a ``ShardStatus``; None when not sharded).
    """

    name: str
    ready: bool
    synced: bool
    running: bool
    leading: bool
    queued: int
    delayed: int
    processing: int
    successes: int
    errors: int
    terminal_errors: int
    timeouts: int
    cancellations: int
    leadership_lost: int
    abandoned: int
    last_errors: Mapping[str, str]
    queued_by_priority: Mapping[str, int] = attrs.field(factory=lambda: types.MappingProxyType({}))
    sharding: Any = None


class ReconcileCounts:
    """What each reconcile ended with, per outcome, and the last error of each failing key."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: collections.Counter[str] = collections.Counter()
        self._last_errors: collections.OrderedDict[str, str] = collections.OrderedDict()

    def ended(self, key: str, error: BaseException | None) -> None:
        """A reconcile of ``key`` returned (``error`` None) or raised ``error``."""
        outcome = _outcome(error)
        text = None
        if outcome in ("error", "terminal", "timeout"):
            assert error is not None
            text = f"{type(error).__name__}: {error}"[:MAX_ERROR_TEXT]
        with self._lock:
            self.counts[outcome] += 1
            if outcome == "timeout":
                self.counts["error"] += 1
            if text is not None:
                self._last_errors.pop(key, None)
                self._last_errors[key] = text
                while len(self._last_errors) > MAX_ERROR_KEYS:
                    self._last_errors.popitem(last=False)
            elif outcome == "success":
                self._last_errors.pop(key, None)

    def snapshot(self) -> tuple[dict[str, int], dict[str, str]]:
        with self._lock:
            return dict(self.counts), dict(self._last_errors)


def _outcome(error: BaseException | None) -> str:
    if error is None or isinstance(error, Wait):
        return "success"
    if isinstance(error, ReconcileTimeout):
        return "timeout"
    if isinstance(error, TerminalError):
        return "terminal"
    if isinstance(error, LeadershipLost):
        return "leadership_lost"
    if isinstance(error, concurrent.futures.CancelledError):
        return "cancelled"
    return "error"


def snapshot(
    name: str,
    synced: bool,
    running: bool,
    queue: QueueStats | None,
    abandoned: int,
    counts: ReconcileCounts,
    *,
    sharding: Any = None,
) -> ControllerStatus:
    """A controller's status from its parts (``queue`` None while its workers do not run)."""
    totals, last_errors = counts.snapshot()
    return ControllerStatus(
        name=name,
        ready=synced and running,
        synced=synced,
        running=running,
        leading=running,
        queued=queue.depth if queue is not None else 0,
        delayed=queue.waiting if queue is not None else 0,
        processing=queue.processing if queue is not None else 0,
        successes=totals.get("success", 0),
        errors=totals.get("error", 0),
        terminal_errors=totals.get("terminal", 0),
        timeouts=totals.get("timeout", 0),
        cancellations=totals.get("cancelled", 0),
        leadership_lost=totals.get("leadership_lost", 0),
        abandoned=abandoned,
        last_errors=types.MappingProxyType(last_errors),
        queued_by_priority=types.MappingProxyType(dict(queue.depth_by_priority) if queue is not None else {}),
        sharding=sharding,
    )
