"""Generated models of scheduling/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import ClassVar

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.models._base import Model, model
from cloudcoil_cache.models.apimachinery import (
    ListMeta,
    ObjectMeta,
)

__all__ = [
    "PriorityClass",
    "PriorityClassList",
]


@model
class PriorityClass(Resource):
    """PriorityClass defines mapping from a priority class name to the priority integer value."""

    api_version: ClassVar[str] = "scheduling.k8s.io/v1"
    kind: ClassVar[str] = "PriorityClass"
    plural: ClassVar[str | None] = "priorityclasses"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "scheduling.k8s.io"
    version: ClassVar[str] = "v1"

    description: str | None = None
    global_default: bool | None = None
    metadata: ObjectMeta | None = None
    preemption_policy: str | None = None
    value: int | None = None  # required


@model
class PriorityClassList(Model):
    """PriorityClassList is a collection of priority classes."""

    api_version: str | None = None
    items: list[PriorityClass] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None
