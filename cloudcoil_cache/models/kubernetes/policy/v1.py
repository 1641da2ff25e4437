"""Generated models of policy/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import ClassVar

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.models._base import Model, model
from cloudcoil_cache.models._time import Time
from cloudcoil_cache.models.apimachinery import (
    Condition,
    DeleteOptions,
    LabelSelector,
    ListMeta,
    ObjectMeta,
)

__all__ = [
    "Eviction",
    "PodDisruptionBudget",
    "PodDisruptionBudgetList",
    "PodDisruptionBudgetSpec",
    "PodDisruptionBudgetStatus",
]


@model
class Eviction(Resource):
    """Eviction evicts a pod from its node subject to certain policies and safety constraints."""

    api_version: ClassVar[str] = "policy/v1"
    kind: ClassVar[str] = "Eviction"
    plural: ClassVar[str | None] = None
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "policy"
    version: ClassVar[str] = "v1"

    delete_options: DeleteOptions | None = None
    metadata: ObjectMeta | None = None


@model
class PodDisruptionBudget(Resource):
    """PodDisruptionBudget is an object to define the max disruption that can be caused to a..."""

    api_version: ClassVar[str] = "policy/v1"
    kind: ClassVar[str] = "PodDisruptionBudget"
    plural: ClassVar[str | None] = "poddisruptionbudgets"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "policy"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: PodDisruptionBudgetSpec | None = None
    status: PodDisruptionBudgetStatus | None = None


@model
class PodDisruptionBudgetList(Model):
    """PodDisruptionBudgetList is a collection of PodDisruptionBudgets."""

    api_version: str | None = None
    items: list[PodDisruptionBudget] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class PodDisruptionBudgetSpec(Model):
    """PodDisruptionBudgetSpec is a description of a PodDisruptionBudget."""

    max_unavailable: int | str | None = None
    min_available: int | str | None = None
    selector: LabelSelector | None = None
    unhealthy_pod_eviction_policy: str | None = None


@model
class PodDisruptionBudgetStatus(Model):
    """PodDisruptionBudgetStatus represents information about the status of a PodDisruptionB..."""

    conditions: list[Condition] | None = None
    current_healthy: int | None = None  # required
    desired_healthy: int | None = None  # required
    disrupted_pods: dict[str, Time] | None = None
    disruptions_allowed: int | None = None  # required
    expected_pods: int | None = None  # required
    observed_generation: int | None = None
