"""Generated models of autoscaling/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

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
    "CrossVersionObjectReference",
    "HorizontalPodAutoscaler",
    "HorizontalPodAutoscalerList",
    "HorizontalPodAutoscalerSpec",
    "HorizontalPodAutoscalerStatus",
    "Scale",
    "ScaleSpec",
    "ScaleStatus",
]


@model
class CrossVersionObjectReference(Model):
    """CrossVersionObjectReference contains enough information to let you identify the refer..."""

    api_version: str | None = None
    kind: str | None = None  # required
    name: str | None = None  # required


@model
class HorizontalPodAutoscaler(Resource):
    """configuration of a horizontal pod autoscaler."""

    api_version: ClassVar[str] = "autoscaling/v1"
    kind: ClassVar[str] = "HorizontalPodAutoscaler"
    plural: ClassVar[str | None] = "horizontalpodautoscalers"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "autoscaling"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: HorizontalPodAutoscalerSpec | None = None
    status: HorizontalPodAutoscalerStatus | None = None


@model
class HorizontalPodAutoscalerList(Model):
    """list of horizontal pod autoscaler objects."""

    api_version: str | None = None
    items: list[HorizontalPodAutoscaler] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class HorizontalPodAutoscalerSpec(Model):
    """specification of a horizontal pod autoscaler."""

    _wire: ClassVar[dict[str, str]] = {
        "target_cpu_utilization_percentage": "targetCPUUtilizationPercentage",
    }

    max_replicas: int | None = None  # required
    min_replicas: int | None = None
    scale_target_ref: CrossVersionObjectReference | None = None  # required
    target_cpu_utilization_percentage: int | None = None


@model
class HorizontalPodAutoscalerStatus(Model):
    """current status of a horizontal pod autoscaler"""

    _wire: ClassVar[dict[str, str]] = {
        "current_cpu_utilization_percentage": "currentCPUUtilizationPercentage",
    }

    current_cpu_utilization_percentage: int | None = None
    current_replicas: int | None = None  # required
    desired_replicas: int | None = None  # required
    last_scale_time: Time | None = None
    observed_generation: int | None = None


@model
class Scale(Resource):
    """Scale represents a scaling request for a resource."""

    api_version: ClassVar[str] = "autoscaling/v1"
    kind: ClassVar[str] = "Scale"
    plural: ClassVar[str | None] = None
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "autoscaling"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: ScaleSpec | None = None
    status: ScaleStatus | None = None


@model
class ScaleSpec(Model):
    """ScaleSpec describes the attributes of a scale subresource."""

    replicas: int | None = None


@model
class ScaleStatus(Model):
    """ScaleStatus represents the current status of a scale subresource."""

    replicas: int | None = None  # required
    selector: str | None = None
