"""Fault injection methods of FakeAPIServer: cut, garbled, erroring, failing, stalled, slow."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Pattern

from .endpoints.faults import FaultState
from .storage.store import Store
from .storage.watchers import Watcher

__all__ = ["FaultInjection"]


class FaultInjection:
    """Mixin: the fault-injection API (see each method); the server provides the state below."""

    _faults: FaultState
    _store: Store

    def _watchers(self) -> list[Watcher]:
        raise NotImplementedError

    def _all_watchers(self) -> list[Watcher]:
        raise NotImplementedError

    def _close_watchers(self) -> None:
        raise NotImplementedError

    def _cut_connections(self) -> None:
        raise NotImplementedError

    def drop_watches(self, mid_object: bool = False) -> int:
        """Cut every open watch connection abruptly (no terminating chunk); returns how many.

        With ``mid_object=True`` the first half of the next queued event line (or of a BOOKMARK
        line when none is queued) is written as a chunk first. Queued events are not sent; they
        remain in the history, so a rewatch from the last received RV replays them.
        """
        watchers = self._watchers()
        for watcher in watchers:
            watcher.push(("drop", mid_object), urgent=True)
        return len(watchers)

    def send_malformed_line(self) -> int:
        """Write a garbage line to every open watch, after what is queued; returns how many."""
        watchers = self._watchers()
        for watcher in watchers:
            watcher.push(("malformed", None))
        return len(watchers)

    def send_error_event(self, status: dict[str, Any]) -> int:
        """Write ``{"type":"ERROR","object":status}`` to every open watch, then end each cleanly."""
        watchers = self._watchers()
        for watcher in watchers:
            watcher.push(("error", status))
        return len(watchers)

    def fail_next(
        self,
        n: int,
        code: int,
        *,
        verb: str | None = None,
        path: str | Pattern[str] | None = None,
        retry_after: float | None = None,
        message: str | None = None,
    ) -> None:
        """Answer the next ``n`` requests matching ``verb`` and ``path`` with HTTP ``code``.

        ``verb`` is get/list/watch/create/update/patch/delete/deletecollection (None: any);
        ``path`` is a substring of the URL path, a compiled regex, or ``"re:<regex>"`` (None:
        any). The body is the Status the real server sends for that code (401 Unauthorized, 403
        with an RBAC message, 404, 429 TooManyRequests, 500 InternalError, 503
        ServiceUnavailable, 504 Timeout); ``retry_after`` adds ``Retry-After`` and
        ``details.retryAfterSeconds``; ``message`` overrides the message. Rules apply in the
        order they were added.
        """
        self._faults.add_rule(n, code, verb, path, retry_after, message)

    def clear_faults(self) -> None:
        """Forget pending ``fail_next`` rules and reset delay, chunk splitting and stalls."""
        self._faults.clear()
        self._wake_watchers()

    def stall_watches(self) -> None:
        """Stop all bytes on every watch (open and future): events queue up, no bookmarks, no
        timeouts. The connections stay open until ``resume_watches()``, a drop or ``stop()``."""
        self._faults.stalled = True
        self._wake_watchers()

    def resume_watches(self) -> None:
        """Let stalled watches flow again: queued events are written, in order."""
        self._faults.stalled = False
        self._wake_watchers()

    def _wake_watchers(self) -> None:
        for watcher in self._all_watchers():  # a dying one waits for its queued end too
            watcher.wake()

    def split_events(self, n_bytes: int | None, *, pause: float = 0.0) -> None:
        """Write each watch event line in chunks of at most ``n_bytes`` (None: one chunk per event).

        ``pause`` (s) waits between chunks, to drip bytes slowly.
        """
        if n_bytes is not None and n_bytes < 1:
            raise ValueError(f"split_events: n_bytes must be >= 1 or None, got {n_bytes}")
        self._faults.split_bytes = n_bytes
        self._faults.split_pause = pause

    def set_delay(self, seconds: float) -> None:
        """Delay every response by ``seconds`` from now on (0 turns it off)."""
        if seconds < 0:
            raise ValueError(f"set_delay: seconds must be >= 0, got {seconds}")
        self._faults.delay = seconds

    @contextlib.contextmanager
    def delay(self, seconds: float) -> Iterator[None]:
        """Delay every response by ``seconds`` inside the ``with`` block."""
        previous = self._faults.delay
        self.set_delay(seconds)
        try:
            yield
        finally:
            self._faults.delay = previous

    def compact(self) -> None:
        """Forget the history up to now: watches from older RVs get 410, continue tokens expire."""
        self._store.compact()

    def restart(self, lose_history: bool = True, revision: int | None = None) -> None:
        """Simulate an apiserver restart: close every connection (watches end abruptly).

        ``lose_history`` forgets the event history (rewatches from old RVs get 410);
        ``revision`` sets the global revision, possibly lower than before (an etcd restore:
        clients resuming from a higher RV get 504 "Too large resource version"); the history is
        then always lost. Objects keep their data. Every watch is closed, those whose request was
        registered but had not started streaming too.
        """
        if revision is not None:
            self._store.reset_revision(revision)
        elif lose_history:
            self._store.compact()
        self._close_watchers()
        self._cut_connections()
