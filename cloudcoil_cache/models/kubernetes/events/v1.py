"""Generated models of events/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import ClassVar

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.models._base import Model, model
from cloudcoil_cache.models._time import MicroTime, Time
from cloudcoil_cache.models.apimachinery import (
    ListMeta,
    ObjectMeta,
)
from cloudcoil_cache.models.kubernetes.core.v1 import (
    EventSource,
    ObjectReference,
)

__all__ = [
    "Event",
    "EventList",
    "EventSeries",
]


@model
class Event(Resource):
    """Event is a report of an event somewhere in the cluster."""

    api_version: ClassVar[str] = "events.k8s.io/v1"
    kind: ClassVar[str] = "Event"
    plural: ClassVar[str | None] = "events"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "events.k8s.io"
    version: ClassVar[str] = "v1"

    action: str | None = None
    deprecated_count: int | None = None
    deprecated_first_timestamp: Time | None = None
    deprecated_last_timestamp: Time | None = None
    deprecated_source: EventSource | None = None
    event_time: MicroTime | None = None  # required
    metadata: ObjectMeta | None = None
    note: str | None = None
    reason: str | None = None
    regarding: ObjectReference | None = None
    related: ObjectReference | None = None
    reporting_controller: str | None = None
    reporting_instance: str | None = None
    series: EventSeries | None = None
    type: str | None = None


@model
class EventList(Model):
    """EventList is a list of Event objects."""

    api_version: str | None = None
    items: list[Event] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class EventSeries(Model):
    """EventSeries contain information on series of events, i.e."""

    count: int | None = None  # required
    last_observed_time: MicroTime | None = None  # required
