"""Generated models of coordination/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import ClassVar

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.models._base import Model, model
from cloudcoil_cache.models._time import MicroTime
from cloudcoil_cache.models.apimachinery import (
    ListMeta,
    ObjectMeta,
)

__all__ = [
    "Lease",
    "LeaseList",
    "LeaseSpec",
]


@model
class Lease(Resource):
    """Lease defines a lease concept."""

    api_version: ClassVar[str] = "coordination.k8s.io/v1"
    kind: ClassVar[str] = "Lease"
    plural: ClassVar[str | None] = "leases"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "coordination.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: LeaseSpec | None = None


@model
class LeaseList(Model):
    """LeaseList is a list of Lease objects."""

    api_version: str | None = None
    items: list[Lease] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class LeaseSpec(Model):
    """LeaseSpec is a specification of a Lease."""

    acquire_time: MicroTime | None = None
    holder_identity: str | None = None
    lease_duration_seconds: int | None = None
    lease_transitions: int | None = None
    renew_time: MicroTime | None = None
