"""Generated models of apps/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import Any, ClassVar

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.models._base import Model, model
from cloudcoil_cache.models._time import Time
from cloudcoil_cache.models.apimachinery import (
    LabelSelector,
    ListMeta,
    ObjectMeta,
)
from cloudcoil_cache.models.kubernetes.core.v1 import (
    PersistentVolumeClaim,
    PodTemplateSpec,
)

__all__ = [
    "ControllerRevision",
    "ControllerRevisionList",
    "DaemonSet",
    "DaemonSetCondition",
    "DaemonSetList",
    "DaemonSetSpec",
    "DaemonSetStatus",
    "DaemonSetUpdateStrategy",
    "Deployment",
    "DeploymentCondition",
    "DeploymentList",
    "DeploymentSpec",
    "DeploymentStatus",
    "DeploymentStrategy",
    "ReplicaSet",
    "ReplicaSetCondition",
    "ReplicaSetList",
    "ReplicaSetSpec",
    "ReplicaSetStatus",
    "RollingUpdateDaemonSet",
    "RollingUpdateDeployment",
    "RollingUpdateStatefulSetStrategy",
    "StatefulSet",
    "StatefulSetCondition",
    "StatefulSetList",
    "StatefulSetOrdinals",
    "StatefulSetPersistentVolumeClaimRetentionPolicy",
    "StatefulSetSpec",
    "StatefulSetStatus",
    "StatefulSetUpdateStrategy",
]


@model
class ControllerRevision(Resource):
    """ControllerRevision implements an immutable snapshot of state data."""

    api_version: ClassVar[str] = "apps/v1"
    kind: ClassVar[str] = "ControllerRevision"
    plural: ClassVar[str | None] = "controllerrevisions"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "apps"
    version: ClassVar[str] = "v1"

    data: dict[str, Any] | None = None
    metadata: ObjectMeta | None = None
    revision: int | None = None  # required


@model
class ControllerRevisionList(Model):
    """ControllerRevisionList is a resource containing a list of ControllerRevision objects."""

    api_version: str | None = None
    items: list[ControllerRevision] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class DaemonSet(Resource):
    """DaemonSet represents the configuration of a daemon set."""

    api_version: ClassVar[str] = "apps/v1"
    kind: ClassVar[str] = "DaemonSet"
    plural: ClassVar[str | None] = "daemonsets"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "apps"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: DaemonSetSpec | None = None
    status: DaemonSetStatus | None = None


@model
class DaemonSetCondition(Model):
    """DaemonSetCondition describes the state of a DaemonSet at a certain point."""

    last_transition_time: Time | None = None
    message: str | None = None
    reason: str | None = None
    status: str | None = None  # required
    type: str | None = None  # required


@model
class DaemonSetList(Model):
    """DaemonSetList is a collection of daemon sets."""

    api_version: str | None = None
    items: list[DaemonSet] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class DaemonSetSpec(Model):
    """DaemonSetSpec is the specification of a daemon set."""

    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None
    selector: LabelSelector | None = None  # required
    template: PodTemplateSpec | None = None  # required
    update_strategy: DaemonSetUpdateStrategy | None = None


@model
class DaemonSetStatus(Model):
    """DaemonSetStatus represents the current status of a daemon set."""

    collision_count: int | None = None
    conditions: list[DaemonSetCondition] | None = None
    current_number_scheduled: int | None = None  # required
    desired_number_scheduled: int | None = None  # required
    number_available: int | None = None
    number_misscheduled: int | None = None  # required
    number_ready: int | None = None  # required
    number_unavailable: int | None = None
    observed_generation: int | None = None
    updated_number_scheduled: int | None = None


@model
class DaemonSetUpdateStrategy(Model):
    """DaemonSetUpdateStrategy is a struct used to control the update strategy for a DaemonSet."""

    rolling_update: RollingUpdateDaemonSet | None = None
    type: str | None = None


@model
class Deployment(Resource):
    """Deployment enables declarative updates for Pods and ReplicaSets."""

    api_version: ClassVar[str] = "apps/v1"
    kind: ClassVar[str] = "Deployment"
    plural: ClassVar[str | None] = "deployments"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "apps"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: DeploymentSpec | None = None
    status: DeploymentStatus | None = None


@model
class DeploymentCondition(Model):
    """DeploymentCondition describes the state of a deployment at a certain point."""

    last_transition_time: Time | None = None
    last_update_time: Time | None = None
    message: str | None = None
    reason: str | None = None
    status: str | None = None  # required
    type: str | None = None  # required


@model
class DeploymentList(Model):
    """DeploymentList is a list of Deployments."""

    api_version: str | None = None
    items: list[Deployment] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class DeploymentSpec(Model):
    """DeploymentSpec is the specification of the desired behavior of the Deployment."""

    min_ready_seconds: int | None = None
    paused: bool | None = None
    progress_deadline_seconds: int | None = None
    replicas: int | None = None
    revision_history_limit: int | None = None
    selector: LabelSelector | None = None  # required
    strategy: DeploymentStrategy | None = None
    template: PodTemplateSpec | None = None  # required


@model
class DeploymentStatus(Model):
    """DeploymentStatus is the most recently observed status of the Deployment."""

    available_replicas: int | None = None
    collision_count: int | None = None
    conditions: list[DeploymentCondition] | None = None
    observed_generation: int | None = None
    ready_replicas: int | None = None
    replicas: int | None = None
    unavailable_replicas: int | None = None
    updated_replicas: int | None = None


@model
class DeploymentStrategy(Model):
    """DeploymentStrategy describes how to replace existing pods with new ones."""

    rolling_update: RollingUpdateDeployment | None = None
    type: str | None = None


@model
class ReplicaSet(Resource):
    """ReplicaSet ensures that a specified number of pod replicas are running at any given t..."""

    api_version: ClassVar[str] = "apps/v1"
    kind: ClassVar[str] = "ReplicaSet"
    plural: ClassVar[str | None] = "replicasets"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "apps"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: ReplicaSetSpec | None = None
    status: ReplicaSetStatus | None = None


@model
class ReplicaSetCondition(Model):
    """ReplicaSetCondition describes the state of a replica set at a certain point."""

    last_transition_time: Time | None = None
    message: str | None = None
    reason: str | None = None
    status: str | None = None  # required
    type: str | None = None  # required


@model
class ReplicaSetList(Model):
    """ReplicaSetList is a collection of ReplicaSets."""

    api_version: str | None = None
    items: list[ReplicaSet] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class ReplicaSetSpec(Model):
    """ReplicaSetSpec is the specification of a ReplicaSet."""

    min_ready_seconds: int | None = None
    replicas: int | None = None
    selector: LabelSelector | None = None  # required
    template: PodTemplateSpec | None = None


@model
class ReplicaSetStatus(Model):
    """ReplicaSetStatus represents the current status of a ReplicaSet."""

    available_replicas: int | None = None
    conditions: list[ReplicaSetCondition] | None = None
    fully_labeled_replicas: int | None = None
    observed_generation: int | None = None
    ready_replicas: int | None = None
    replicas: int | None = None  # required


@model
class RollingUpdateDaemonSet(Model):
    """Spec to control the desired behavior of daemon set rolling update."""

    max_surge: int | str | None = None
    max_unavailable: int | str | None = None


@model
class RollingUpdateDeployment(Model):
    """Spec to control the desired behavior of rolling update."""

    max_surge: int | str | None = None
    max_unavailable: int | str | None = None


@model
class RollingUpdateStatefulSetStrategy(Model):
    """RollingUpdateStatefulSetStrategy is used to communicate parameter for RollingUpdateSt..."""

    max_unavailable: int | str | None = None
    partition: int | None = None


@model
class StatefulSet(Resource):
    """StatefulSet represents a set of pods with consistent identities."""

    api_version: ClassVar[str] = "apps/v1"
    kind: ClassVar[str] = "StatefulSet"
    plural: ClassVar[str | None] = "statefulsets"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "apps"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: StatefulSetSpec | None = None
    status: StatefulSetStatus | None = None


@model
class StatefulSetCondition(Model):
    """StatefulSetCondition describes the state of a statefulset at a certain point."""

    last_transition_time: Time | None = None
    message: str | None = None
    reason: str | None = None
    status: str | None = None  # required
    type: str | None = None  # required


@model
class StatefulSetList(Model):
    """StatefulSetList is a collection of StatefulSets."""

    api_version: str | None = None
    items: list[StatefulSet] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class StatefulSetOrdinals(Model):
    """StatefulSetOrdinals describes the policy used for replica ordinal assignment in this..."""

    start: int | None = None


@model
class StatefulSetPersistentVolumeClaimRetentionPolicy(Model):
    """StatefulSetPersistentVolumeClaimRetentionPolicy describes the policy used for PVCs cr..."""

    when_deleted: str | None = None
    when_scaled: str | None = None


@model
class StatefulSetSpec(Model):
    """A StatefulSetSpec is the specification of a StatefulSet."""

    min_ready_seconds: int | None = None
    ordinals: StatefulSetOrdinals | None = None
    persistent_volume_claim_retention_policy: StatefulSetPersistentVolumeClaimRetentionPolicy | None = None
    pod_management_policy: str | None = None
    replicas: int | None = None
    revision_history_limit: int | None = None
    selector: LabelSelector | None = None  # required
    service_name: str | None = None  # required
    template: PodTemplateSpec | None = None  # required
    update_strategy: StatefulSetUpdateStrategy | None = None
    volume_claim_templates: list[PersistentVolumeClaim] | None = None


@model
class StatefulSetStatus(Model):
    """StatefulSetStatus represents the current state of a StatefulSet."""

    available_replicas: int | None = None
    collision_count: int | None = None
    conditions: list[StatefulSetCondition] | None = None
    current_replicas: int | None = None
    current_revision: str | None = None
    observed_generation: int | None = None
    ready_replicas: int | None = None
    replicas: int | None = None  # required
    update_revision: str | None = None
    updated_replicas: int | None = None


@model
class StatefulSetUpdateStrategy(Model):
    """StatefulSetUpdateStrategy indicates the strategy that the StatefulSet controller will..."""

    rolling_update: RollingUpdateStatefulSetStrategy | None = None
    type: str | None = None
