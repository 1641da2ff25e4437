"""Generated models of autoscaling/v2 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import ClassVar

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.models._base import Model, model
from cloudcoil_cache.models._time import Time
from cloudcoil_cache.models.apimachinery import (
    LabelSelector,
    ListMeta,
    ObjectMeta,
)

__all__ = [
    "ContainerResourceMetricSource",
    "ContainerResourceMetricStatus",
    "CrossVersionObjectReference",
    "ExternalMetricSource",
    "ExternalMetricStatus",
    "HPAScalingPolicy",
    "HPAScalingRules",
    "HorizontalPodAutoscaler",
    "HorizontalPodAutoscalerBehavior",
    "HorizontalPodAutoscalerCondition",
    "HorizontalPodAutoscalerList",
    "HorizontalPodAutoscalerSpec",
    "HorizontalPodAutoscalerStatus",
    "MetricIdentifier",
    "MetricSpec",
    "MetricStatus",
    "MetricTarget",
    "MetricValueStatus",
    "ObjectMetricSource",
    "ObjectMetricStatus",
    "PodsMetricSource",
    "PodsMetricStatus",
    "ResourceMetricSource",
    "ResourceMetricStatus",
]


@model
class ContainerResourceMetricSource(Model):
    """ContainerResourceMetricSource indicates how to scale on a resource metric known to Ku..."""

    container: str | None = None  # required
    name: str | None = None  # required
    target: MetricTarget | None = None  # required


@model
class ContainerResourceMetricStatus(Model):
    """ContainerResourceMetricStatus indicates the current value of a resource metric known..."""

    container: str | None = None  # required
    current: MetricValueStatus | None = None  # required
    name: str | None = None  # required


@model
class CrossVersionObjectReference(Model):
    """CrossVersionObjectReference contains enough information to let you identify the refer..."""

    api_version: str | None = None
    kind: str | None = None  # required
    name: str | None = None  # required


@model
class ExternalMetricSource(Model):
    """ExternalMetricSource indicates how to scale on a metric not associated with any Kuber..."""

    metric: MetricIdentifier | None = None  # required
    target: MetricTarget | None = None  # required


@model
class ExternalMetricStatus(Model):
    """ExternalMetricStatus indicates the current value of a global metric not associated wi..."""

    current: MetricValueStatus | None = None  # required
    metric: MetricIdentifier | None = None  # required


@model
class HPAScalingPolicy(Model):
    """HPAScalingPolicy is a single policy which must hold true for a specified past interval."""

    period_seconds: int | None = None  # required
    type: str | None = None  # required
    value: int | None = None  # required


@model
class HPAScalingRules(Model):
    """HPAScalingRules configures the scaling behavior for one direction."""

    policies: list[HPAScalingPolicy] | None = None
    select_policy: str | None = None
    stabilization_window_seconds: int | None = None


@model
class HorizontalPodAutoscaler(Resource):
    """HorizontalPodAutoscaler is the configuration for a horizontal pod autoscaler, which a..."""

    api_version: ClassVar[str] = "autoscaling/v2"
    kind: ClassVar[str] = "HorizontalPodAutoscaler"
    plural: ClassVar[str | None] = "horizontalpodautoscalers"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "autoscaling"
    version: ClassVar[str] = "v2"

    metadata: ObjectMeta | None = None
    spec: HorizontalPodAutoscalerSpec | None = None
    status: HorizontalPodAutoscalerStatus | None = None


@model
class HorizontalPodAutoscalerBehavior(Model):
    """HorizontalPodAutoscalerBehavior configures the scaling behavior of the target in both..."""

    scale_down: HPAScalingRules | None = None
    scale_up: HPAScalingRules | None = None


@model
class HorizontalPodAutoscalerCondition(Model):
    """HorizontalPodAutoscalerCondition describes the state of a HorizontalPodAutoscaler at..."""

    last_transition_time: Time | None = None
    message: str | None = None
    reason: str | None = None
    status: str | None = None  # required
    type: str | None = None  # required


@model
class HorizontalPodAutoscalerList(Model):
    """HorizontalPodAutoscalerList is a list of horizontal pod autoscaler objects."""

    api_version: str | None = None
    items: list[HorizontalPodAutoscaler] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class HorizontalPodAutoscalerSpec(Model):
    """HorizontalPodAutoscalerSpec describes the desired functionality of the HorizontalPodA..."""

    behavior: HorizontalPodAutoscalerBehavior | None = None
    max_replicas: int | None = None  # required
    metrics: list[MetricSpec] | None = None
    min_replicas: int | None = None
    scale_target_ref: CrossVersionObjectReference | None = None  # required


@model
class HorizontalPodAutoscalerStatus(Model):
    """HorizontalPodAutoscalerStatus describes the current status of a horizontal pod autosc..."""

    conditions: list[HorizontalPodAutoscalerCondition] | None = None
    current_metrics: list[MetricStatus] | None = None
    current_replicas: int | None = None
    desired_replicas: int | None = None  # required
    last_scale_time: Time | None = None
    observed_generation: int | None = None


@model
class MetricIdentifier(Model):
    """MetricIdentifier defines the name and optionally selector for a metric"""

    name: str | None = None  # required
    selector: LabelSelector | None = None


@model
class MetricSpec(Model):
    """MetricSpec specifies how to scale based on a single metric (only `type` and one other..."""

    container_resource: ContainerResourceMetricSource | None = None
    external: ExternalMetricSource | None = None
    object: ObjectMetricSource | None = None
    pods: PodsMetricSource | None = None
    resource: ResourceMetricSource | None = None
    type: str | None = None  # required


@model
class MetricStatus(Model):
    """MetricStatus describes the last-read state of a single metric."""

    container_resource: ContainerResourceMetricStatus | None = None
    external: ExternalMetricStatus | None = None
    object: ObjectMetricStatus | None = None
    pods: PodsMetricStatus | None = None
    resource: ResourceMetricStatus | None = None
    type: str | None = None  # required


@model
class MetricTarget(Model):
    """MetricTarget defines the target value, average value, or average utilization of a spe..."""

    average_utilization: int | None = None
    average_value: str | None = None
    type: str | None = None  # required
    value: str | None = None


@model
class MetricValueStatus(Model):
    """MetricValueStatus holds the current value for a metric"""

    average_utilization: int | None = None
    average_value: str | None = None
    value: str | None = None


@model
class ObjectMetricSource(Model):
    """ObjectMetricSource indicates how to scale on a metric describing a kubernetes object..."""

    described_object: CrossVersionObjectReference | None = None  # required
    metric: MetricIdentifier | None = None  # required
    target: MetricTarget | None = None  # required


@model
class ObjectMetricStatus(Model):
    """ObjectMetricStatus indicates the current value of a metric describing a kubernetes ob..."""

    current: MetricValueStatus | None = None  # required
    described_object: CrossVersionObjectReference | None = None  # required
    metric: MetricIdentifier | None = None  # required


@model
class PodsMetricSource(Model):
    """PodsMetricSource indicates how to scale on a metric describing each pod in the curren..."""

    metric: MetricIdentifier | None = None  # required
    target: MetricTarget | None = None  # required


@model
class PodsMetricStatus(Model):
    """PodsMetricStatus indicates the current value of a metric describing each pod in the c..."""

    current: MetricValueStatus | None = None  # required
    metric: MetricIdentifier | None = None  # required


@model
class ResourceMetricSource(Model):
    """ResourceMetricSource indicates how to scale on a resource metric known to Kubernetes,..."""

    name: str | None = None  # required
    target: MetricTarget | None = None  # required


@model
class ResourceMetricStatus(Model):
    """ResourceMetricStatus indicates the current value of a resource metric known to Kubern..."""

    current: MetricValueStatus | None = None  # required
    name: str | None = None  # required
