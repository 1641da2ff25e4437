"""Generated models of flowcontrol/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

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
    "ExemptPriorityLevelConfiguration",
    "FlowDistinguisherMethod",
    "FlowSchema",
    "FlowSchemaCondition",
    "FlowSchemaList",
    "FlowSchemaSpec",
    "FlowSchemaStatus",
    "GroupSubject",
    "LimitResponse",
    "LimitedPriorityLevelConfiguration",
    "NonResourcePolicyRule",
    "PolicyRulesWithSubjects",
    "PriorityLevelConfiguration",
    "PriorityLevelConfigurationCondition",
    "PriorityLevelConfigurationList",
    "PriorityLevelConfigurationReference",
    "PriorityLevelConfigurationSpec",
    "PriorityLevelConfigurationStatus",
    "QueuingConfiguration",
    "ResourcePolicyRule",
    "ServiceAccountSubject",
    "Subject",
    "UserSubject",
]


@model
class ExemptPriorityLevelConfiguration(Model):
    """ExemptPriorityLevelConfiguration describes the configurable aspects of the handling o..."""

    lendable_percent: int | None = None
    nominal_concurrency_shares: int | None = None


@model
class FlowDistinguisherMethod(Model):
    """FlowDistinguisherMethod specifies the method of a flow distinguisher."""

    type: str | None = None  # required


@model
class FlowSchema(Resource):
    """FlowSchema defines the schema of a group of flows."""

    api_version: ClassVar[str] = "flowcontrol.apiserver.k8s.io/v1"
    kind: ClassVar[str] = "FlowSchema"
    plural: ClassVar[str | None] = "flowschemas"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "flowcontrol.apiserver.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: FlowSchemaSpec | None = None
    status: FlowSchemaStatus | None = None


@model
class FlowSchemaCondition(Model):
    """FlowSchemaCondition describes conditions for a FlowSchema."""

    last_transition_time: Time | None = None
    message: str | None = None
    reason: str | None = None
    status: str | None = None
    type: str | None = None


@model
class FlowSchemaList(Model):
    """FlowSchemaList is a list of FlowSchema objects."""

    api_version: str | None = None
    items: list[FlowSchema] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class FlowSchemaSpec(Model):
    """FlowSchemaSpec describes how the FlowSchema's specification looks like."""

    distinguisher_method: FlowDistinguisherMethod | None = None
    matching_precedence: int | None = None
    priority_level_configuration: PriorityLevelConfigurationReference | None = None  # required
    rules: list[PolicyRulesWithSubjects] | None = None


@model
class FlowSchemaStatus(Model):
    """FlowSchemaStatus represents the current state of a FlowSchema."""

    conditions: list[FlowSchemaCondition] | None = None


@model
class GroupSubject(Model):
    """GroupSubject holds detailed information for group-kind subject."""

    name: str | None = None  # required


@model
class LimitResponse(Model):
    """LimitResponse defines how to handle requests that can not be executed right now."""

    queuing: QueuingConfiguration | None = None
    type: str | None = None  # required


@model
class LimitedPriorityLevelConfiguration(Model):
    """LimitedPriorityLevelConfiguration specifies how to handle requests that are subject t..."""

    borrowing_limit_percent: int | None = None
    lendable_percent: int | None = None
    limit_response: LimitResponse | None = None
    nominal_concurrency_shares: int | None = None


@model
class NonResourcePolicyRule(Model):
    """NonResourcePolicyRule is a predicate that matches non-resource requests according to..."""

    _wire: ClassVar[dict[str, str]] = {"non_resource_urls": "nonResourceURLs"}

    non_resource_urls: list[str] | None = None  # required
    verbs: list[str] | None = None  # required


@model
class PolicyRulesWithSubjects(Model):
    """PolicyRulesWithSubjects prescribes a test that applies to a request to an apiserver."""

    non_resource_rules: list[NonResourcePolicyRule] | None = None
    resource_rules: list[ResourcePolicyRule] | None = None
    subjects: list[Subject] | None = None  # required


@model
class PriorityLevelConfiguration(Resource):
    """PriorityLevelConfiguration represents the configuration of a priority level."""

    api_version: ClassVar[str] = "flowcontrol.apiserver.k8s.io/v1"
    kind: ClassVar[str] = "PriorityLevelConfiguration"
    plural: ClassVar[str | None] = "prioritylevelconfigurations"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "flowcontrol.apiserver.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: PriorityLevelConfigurationSpec | None = None
    status: PriorityLevelConfigurationStatus | None = None


@model
class PriorityLevelConfigurationCondition(Model):
    """PriorityLevelConfigurationCondition defines the condition of priority level."""

    last_transition_time: Time | None = None
    message: str | None = None
    reason: str | None = None
    status: str | None = None
    type: str | None = None


@model
class PriorityLevelConfigurationList(Model):
    """PriorityLevelConfigurationList is a list of PriorityLevelConfiguration objects."""

    api_version: str | None = None
    items: list[PriorityLevelConfiguration] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class PriorityLevelConfigurationReference(Model):
    """PriorityLevelConfigurationReference contains information that points to the "request-..."""

    name: str | None = None  # required


@model
class PriorityLevelConfigurationSpec(Model):
    """PriorityLevelConfigurationSpec specifies the configuration of a priority level."""

    exempt: ExemptPriorityLevelConfiguration | None = None
    limited: LimitedPriorityLevelConfiguration | None = None
    type: str | None = None  # required


@model
class PriorityLevelConfigurationStatus(Model):
    """PriorityLevelConfigurationStatus represents the current state of a "request-priority"."""

    conditions: list[PriorityLevelConfigurationCondition] | None = None


@model
class QueuingConfiguration(Model):
    """QueuingConfiguration holds the configuration parameters for queuing"""

    hand_size: int | None = None
    queue_length_limit: int | None = None
    queues: int | None = None


@model
class ResourcePolicyRule(Model):
    """ResourcePolicyRule is a predicate that matches some resource requests, testing the re..."""

    api_groups: list[str] | None = None  # required
    cluster_scope: bool | None = None
    namespaces: list[str] | None = None
    resources: list[str] | None = None  # required
    verbs: list[str] | None = None  # required


@model
class ServiceAccountSubject(Model):
    """ServiceAccountSubject holds detailed information for service-account-kind subject."""

    name: str | None = None  # required
    namespace: str | None = None  # required


@model
class Subject(Model):
    """Subject matches the originator of a request, as identified by the request authenticat..."""

    group: GroupSubject | None = None
    kind: str | None = None  # required
    service_account: ServiceAccountSubject | None = None
    user: UserSubject | None = None


@model
class UserSubject(Model):
    """UserSubject holds detailed information for user-kind subject."""

    name: str | None = None  # required
