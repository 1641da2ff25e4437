"""``ServerContext``: what the fake server hands its endpoints (settings, storage, registry, faults, watches)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from ..machinery.resources import ResourceRegistry
from ..registry.webhooks import Webhooks
from ..storage.store import Store
from ..storage.watchers import Watcher
from .faults import FaultState
from .openapi import OpenAPI

__all__ = ["OpenWatches", "ServerContext", "Settings"]


@dataclass
class Settings:
    """The server's settings, read by the endpoints on every request (``FakeAPIServer``'s
    attributes of the same names write them; see its docstring for what each does)."""

    bookmark_interval: float = 60.0
    watch_timeout_range: tuple[float, float] = (1800.0, 3600.0)
    too_large_wait: float = 0.1
    expired_watch_mode: str = "event"
    future_watch_mode: str = "too_large"
    continue_ttl: float | None = None
    list_items_have_kind: bool = False
    ignore_limit_for_rv0: bool = False
    watch_list_enabled: bool = True
    watch_list_defaulting: bool = False
    watch_list_unknown: bool = False
    expected_token: str | None = None
    clock_skew: float = 0.0
    kubelet: bool = True
    namespace_lifecycle: bool = False
    ca_cert: bytes | None = None
    client_ca: bytes | None = None
    webhooks: bool = True


class OpenWatches:
    """The watch streams open now (one condition guards the set; waiters wake on each change)."""

    def __init__(self, stopping: threading.Event) -> None:
        self._stopping = stopping
        self._cond = threading.Condition()
        self._active: set[Watcher] = set()

    def started(self, watcher: Watcher) -> None:
        watcher.started_at = time.monotonic()
        with self._cond:
            self._active.add(watcher)
            self._cond.notify_all()
        if self._stopping.is_set():  # registered while the server stopped: end it now
            watcher.close()

    def ended(self, watcher: Watcher) -> None:
        with self._cond:
            self._active.discard(watcher)
            self._cond.notify_all()

    def snapshot(self) -> list[Watcher]:
        """The live ones: not closed, no drop or ERROR event queued (a dying stream is not an open watch,
        whose thread may not have noticed yet under load)."""
        with self._cond:
            return [w for w in self._active if w.live]

    def every(self) -> list[Watcher]:
        """Every registered stream, dying ones too (to wake or close them)."""
        with self._cond:
            return list(self._active)

    def close_all(self) -> None:
        for watcher in self.every():
            watcher.close()

    def _live_count(self) -> int:
        return sum(1 for w in self._active if w.live)

    def wait_for(self, count: int, timeout: float) -> int:
        """Wait until at least ``count`` are live (or ``timeout`` passed); how many are live."""
        with self._cond:
            self._cond.wait_for(lambda: self._live_count() >= count, timeout)
            return self._live_count()


@dataclass(frozen=True)
class ServerContext:
    """The parts of one fake server that its endpoints use, handed to each of them."""

    settings: Settings
    store: Store
    registry: ResourceRegistry
    openapi: OpenAPI
    faults: FaultState
    watches: OpenWatches
    stopping: threading.Event
    webhooks: Webhooks
