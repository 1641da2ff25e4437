"""Generated models of node/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

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
    Toleration,
)

__all__ = [
    "Overhead",
    "RuntimeClass",
    "RuntimeClassList",
    "Scheduling",
]


@model
class Overhead(Model):
    """Overhead structure represents the resource overhead associated with running a pod."""

    pod_fixed: dict[str, str] | None = None


@model
class RuntimeClass(Resource):
    """RuntimeClass defines a class of container runtime supported in the cluster."""

    api_version: ClassVar[str] = "node.k8s.io/v1"
    kind: ClassVar[str] = "RuntimeClass"
    plural: ClassVar[str | None] = "runtimeclasses"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "node.k8s.io"
    version: ClassVar[str] = "v1"

    handler: str | None = None  # required
    metadata: ObjectMeta | None = None
    overhead: Overhead | None = None
    scheduling: Scheduling | None = None


@model
class RuntimeClassList(Model):
    """RuntimeClassList is a list of RuntimeClass objects."""

    api_version: str | None = None
    items: list[RuntimeClass] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class Scheduling(Model):
    """Scheduling specifies the scheduling constraints for nodes supporting a RuntimeClass."""

    node_selector: dict[str, str] | None = None
    tolerations: list[Toleration] | None = None
