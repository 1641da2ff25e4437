"""EventRecorder: events.k8s.io/v1 Events of a controller, aggregated into series and rate-limited as client-go's."""

from __future__ import annotations

import collections
import logging
import socket
import threading
from typing import Any, Literal

import attrs

from cloudcoil_cache._clock import SYSTEM_CLOCK, Clock, ClockLike, as_clock
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller._status import Now, utc_now
from cloudcoil_cache.models.kubernetes.events.v1 import Event

__all__ = ["EventRecorder", "EventType"]

EventType = Literal["Normal", "Warning"]

log = logging.getLogger("cloudcoil_cache.controller.events")


@attrs.define
class _Series:
    """One isomorphic event as recorded: where it was written and how often it was seen."""

    name: str
    namespace: str
    count: int
    last_observed: float
    last_written: float
    written: bool = False  # has the Event object been created (a series is patched onto it)?


@attrs.define
class _Bucket:
    tokens: float
    updated: float


class EventRecorder:
    """Records Events about objects (client-go's ``tools/events`` recorder, threaded).

    An event isomorphic to one seen in the last ``series_finish`` seconds (same object UID, type,
    reason, action and note) is not a new object: the first repeat patches ``series.count = 2``
    onto it, later repeats are counted and written at most every ``series_refresh`` seconds
    (client-go's timings). Unlike ``tools/events``, whose key holds the object's resourceVersion but
    not the note, a changed note is a new Event and a new resourceVersion is not (a failing object
    whose status was written once is still one series). New events about one object are rate-limited by a token bucket
    (client-go's spam filter: ``burst`` events, then one per ``refill_every`` seconds). Memory is
    bounded: at most ``max_series`` series are remembered (the oldest is forgotten first).

    Recording is best-effort: an API error is logged (once per event, at warning) and never raised.
    """

    def __init__(
        self,
        reporting_controller: str,
        *,
        reporting_instance: str | None = None,
        max_series: int = 4096,
        series_finish: float = 360.0,
        series_refresh: float = 1800.0,
        burst: int = 25,
        refill_every: float = 300.0,
        clock: ClockLike | None = None,
        now: Now = utc_now,
    ) -> None:
        if not reporting_controller or len(reporting_controller) > 128:
            raise ValueError(f"reporting_controller must have 1 to 128 characters, got {reporting_controller!r}")
        if isinstance(max_series, bool) or not isinstance(max_series, int) or max_series < 1:
            raise ValueError(f"EventRecorder(max_series=...) must be an int >= 1, got {max_series!r}")
        self.reporting_controller = reporting_controller
        self.reporting_instance = (reporting_instance or f"{reporting_controller}-{socket.gethostname()}")[:128]
        self.max_series = max_series
        self.series_finish = float(series_finish)
        self.series_refresh = float(series_refresh)
        self.burst = burst
        self.refill_every = float(refill_every)
        self._clock: Clock = as_clock(clock) if clock is not None else SYSTEM_CLOCK
        self._now = now
        self._lock = threading.Lock()  # guards the series and the buckets
        self._series: collections.OrderedDict[tuple[str, ...], _Series] = collections.OrderedDict()
        self._buckets: collections.OrderedDict[str, _Bucket] = collections.OrderedDict()
        self._stamp = 0

    @property
    def clock(self) -> Clock:
        """The clock of the series, the rate limit (and the controller's event flush deadline)."""
        return self._clock

    def __repr__(self) -> str:
        return f"<EventRecorder {self.reporting_controller!r} series={len(self._series)}>"

    def record(
        self,
        config: Config,
        regarding: Any,
        reason: str,
        note: str,
        *,
        type: EventType = "Normal",
        action: str = "Reconcile",
    ) -> bool:
        """Record an event about ``regarding`` (an object read from the server). True when an API
        write was made (a new Event or a series update); False when it was counted in memory only,
        dropped by the rate limit, or failed (logged)."""
        check_event(reason, type, action)
        meta = regarding.metadata
        if not meta.uid or not meta.name:
            return False
        namespace = meta.namespace or config.namespace or "default"
        key = (meta.uid, type, reason, action, note)
        now = self._clock.now()
        with self._lock:
            series, create = self._observe_locked(key, now, namespace, meta.name)
            if series is None:
                return False
            count = series.count
        try:
            if create:
                self._create(config, regarding, series, reason, note, type, action)
            else:
                self._patch_series(config, series, count)
        except Exception as exc:  # best-effort: the reconcile goes on
            log.warning("controller %s: could not record event %s: %s", self.reporting_controller, reason, exc)
            return False
        return True

    # ----------------------------------------------------------- bookkeeping
    def _observe_locked(
        self, key: tuple[str, ...], now: float, namespace: str, name: str
    ) -> tuple[_Series | None, bool]:
        """The series to write for one occurrence (None: nothing to write) and whether to create it."""
        series = self._series.get(key)
        if series is not None and now - series.last_observed < self.series_finish:
            series.count += 1
            series.last_observed = now
            self._series.move_to_end(key)
            if not series.written or (series.count > 2 and now - series.last_written < self.series_refresh):
                return None, False
            series.last_written = now
            return series, False
        if not self._take_token_locked(key[0], now):
            return None, False
        stamp = self._stamp = max(int(self._now().timestamp() * 1e9), self._stamp + 1)  # unique names
        series = _Series(name=f"{name}.{stamp:x}", namespace=namespace, count=1, last_observed=now, last_written=now)
        self._series[key] = series
        self._series.move_to_end(key)
        while len(self._series) > self.max_series:
            self._series.popitem(last=False)
        return series, True

    def _take_token_locked(self, uid: str, now: float) -> bool:
        bucket = self._buckets.get(uid)
        if bucket is None:
            bucket = self._buckets[uid] = _Bucket(float(self.burst), now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.updated) / self.refill_every)
        bucket.updated = now
        self._buckets.move_to_end(uid)
        while len(self._buckets) > self.max_series:
            self._buckets.popitem(last=False)
        if bucket.tokens < 1:
            return False
        bucket.tokens -= 1
        return True

    # ---------------------------------------------------------------- writes
    def _create(
        self, config: Config, regarding: Any, series: _Series, reason: str, note: str, type: str, action: str
    ) -> None:
        meta = regarding.metadata
        cls = regarding.__class__
        ref = {"apiVersion": cls.api_version, "kind": cls.kind, "name": meta.name}
        ref.update({"uid": meta.uid, "resourceVersion": meta.resource_version})
        if meta.namespace:
            ref["namespace"] = meta.namespace
        event = Event.from_dict(
            {
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "metadata": {"name": series.name, "namespace": series.namespace},
                "eventTime": _micro(self._now()),
                "reportingController": self.reporting_controller,
                "reportingInstance": self.reporting_instance,
                "action": action,
                "reason": reason,
                "note": note[:1024],
                "type": type,
                "regarding": {k: v for k, v in ref.items() if v},
            }
        )
        Event.client(config).create(event)
        with self._lock:
            series.written = True

    def _patch_series(self, config: Config, series: _Series, count: int) -> None:
        patch = {"series": {"count": count, "lastObservedTime": _micro(self._now())}}
        Event.client(config).patch(series.name, patch, namespace=series.namespace, patch_type="merge")


def check_event(reason: object, type: object, action: object) -> None:
    """A clear error for what the API server would refuse in an Event."""
    if not isinstance(reason, str) or not reason or len(reason) > 128:
        raise ValueError(f"an event reason has 1 to 128 characters, got {reason!r}")
    if type not in ("Normal", "Warning"):
        raise ValueError(f"an event type is 'Normal' or 'Warning', got {type!r}")
    if not isinstance(action, str) or not action or len(action) > 128:
        raise ValueError(f"an event action has 1 to 128 characters, got {action!r}")


def _micro(moment: Any) -> str:
    """A ``metav1.MicroTime``."""
    return str(moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
