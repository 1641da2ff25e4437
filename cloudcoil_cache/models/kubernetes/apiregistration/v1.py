"""Generated models of apiregistration/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import ClassVar

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.models._base import Model, model
from cloudcoil_cache.models._time import Time
from cloudcoil_cache.models.apimachinery import (
    ListMeta,
    ObjectMeta,
)

__all__ = [
    "APIService",
    "APIServiceCondition",
    "APIServiceList",
    "APIServiceSpec",
    "APIServiceStatus",
    "ServiceReference",
]


@model
class APIService(Resource):
    """APIService represents a server for a particular GroupVersion."""

    api_version: ClassVar[str] = "apiregistration.k8s.io/v1"
    kind: ClassVar[str] = "APIService"
    plural: ClassVar[str | None] = "apiservices"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "apiregistration.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: APIServiceSpec | None = None
    status: APIServiceStatus | None = None


@model
class APIServiceCondition(Model):
    """APIServiceCondition describes the state of an APIService at a particular point"""

    last_transition_time: Time | None = None
    message: str | None = None
    reason: str | None = None
    status: str | None = None  # required
    type: str | None = None  # required


@model
class APIServiceList(Model):
    """APIServiceList is a list of APIService objects."""

    api_version: str | None = None
    items: list[APIService] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class APIServiceSpec(Model):
    """APIServiceSpec contains information for locating and communicating with a server."""

    _wire: ClassVar[dict[str, str]] = {"insecure_skip_tls_verify": "insecureSkipTLSVerify"}

    ca_bundle: str | None = None
    group: str | None = None
    group_priority_minimum: int | None = None  # required
    insecure_skip_tls_verify: bool | None = None
    service: ServiceReference | None = None
    version: str | None = None
    version_priority: int | None = None  # required


@model
class APIServiceStatus(Model):
    """APIServiceStatus contains derived information about an API server"""

    conditions: list[APIServiceCondition] | None = None


@model
class ServiceReference(Model):
    """ServiceReference holds a reference to Service.legacy.k8s.io"""

    name: str | None = None
    namespace: str | None = None
    port: int | None = None
