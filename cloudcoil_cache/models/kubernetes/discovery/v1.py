"""Generated models of discovery/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import ClassVar

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.models._base import Model, model
from cloudcoil_cache.models.apimachinery import (
    ListMeta,
    ObjectMeta,
)
from cloudcoil_cache.models.kubernetes.core.v1 import (
    ObjectReference,
)

__all__ = [
    "Endpoint",
    "EndpointConditions",
    "EndpointHints",
    "EndpointPort",
    "EndpointSlice",
    "EndpointSliceList",
    "ForZone",
]


@model
class Endpoint(Model):
    """Endpoint represents a single logical "backend" implementing a service."""

    addresses: list[str] | None = None  # required
    conditions: EndpointConditions | None = None
    deprecated_topology: dict[str, str] | None = None
    hints: EndpointHints | None = None
    hostname: str | None = None
    node_name: str | None = None
    target_ref: ObjectReference | None = None
    zone: str | None = None


@model
class EndpointConditions(Model):
    """EndpointConditions represents the current condition of an endpoint."""

    ready: bool | None = None
    serving: bool | None = None
    terminating: bool | None = None


@model
class EndpointHints(Model):
    """EndpointHints provides hints describing how an endpoint should be consumed."""

    for_zones: list[ForZone] | None = None


@model
class EndpointPort(Model):
    """EndpointPort represents a Port used by an EndpointSlice"""

    app_protocol: str | None = None
    name: str | None = None
    port: int | None = None
    protocol: str | None = None


@model
class EndpointSlice(Resource):
    """EndpointSlice represents a subset of the endpoints that implement a service."""

    api_version: ClassVar[str] = "discovery.k8s.io/v1"
    kind: ClassVar[str] = "EndpointSlice"
    plural: ClassVar[str | None] = "endpointslices"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "discovery.k8s.io"
    version: ClassVar[str] = "v1"

    address_type: str | None = None  # required
    endpoints: list[Endpoint] | None = None  # required
    metadata: ObjectMeta | None = None
    ports: list[EndpointPort] | None = None


@model
class EndpointSliceList(Model):
    """EndpointSliceList represents a list of endpoint slices"""

    api_version: str | None = None
    items: list[EndpointSlice] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class ForZone(Model):
    """ForZone provides information about which zones should consume this endpoint."""

    name: str | None = None  # required
