"""Generated models of admissionregistration/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import ClassVar

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.models._base import Model, model
from cloudcoil_cache.models.apimachinery import (
    Condition,
    LabelSelector,
    ListMeta,
    ObjectMeta,
)

__all__ = [
    "AuditAnnotation",
    "ExpressionWarning",
    "MatchCondition",
    "MatchResources",
    "MutatingWebhook",
    "MutatingWebhookConfiguration",
    "MutatingWebhookConfigurationList",
    "NamedRuleWithOperations",
    "ParamKind",
    "ParamRef",
    "RuleWithOperations",
    "ServiceReference",
    "TypeChecking",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingAdmissionPolicyBindingList",
    "ValidatingAdmissionPolicyBindingSpec",
    "ValidatingAdmissionPolicyList",
    "ValidatingAdmissionPolicySpec",
    "ValidatingAdmissionPolicyStatus",
    "ValidatingWebhook",
    "ValidatingWebhookConfiguration",
    "ValidatingWebhookConfigurationList",
    "Validation",
    "Variable",
    "WebhookClientConfig",
]


@model
class AuditAnnotation(Model):
    """AuditAnnotation describes how to produce an audit annotation for an API request."""

    key: str | None = None  # required
    value_expression: str | None = None  # required


@model
class ExpressionWarning(Model):
    """ExpressionWarning is a warning information that targets a specific expression."""

    field_ref: str | None = None  # required
    warning: str | None = None  # required


@model
class MatchCondition(Model):
    """MatchCondition represents a condition which must by fulfilled for a request to be sen..."""

    expression: str | None = None  # required
    name: str | None = None  # required


@model
class MatchResources(Model):
    """MatchResources decides whether to run the admission control policy on an object based..."""

    exclude_resource_rules: list[NamedRuleWithOperations] | None = None
    match_policy: str | None = None
    namespace_selector: LabelSelector | None = None
    object_selector: LabelSelector | None = None
    resource_rules: list[NamedRuleWithOperations] | None = None


@model
class MutatingWebhook(Model):
    """MutatingWebhook describes an admission webhook and the resources and operations it ap..."""

    admission_review_versions: list[str] | None = None  # required
    client_config: WebhookClientConfig | None = None  # required
    failure_policy: str | None = None
    match_conditions: list[MatchCondition] | None = None
    match_policy: str | None = None
    name: str | None = None  # required
    namespace_selector: LabelSelector | None = None
    object_selector: LabelSelector | None = None
    reinvocation_policy: str | None = None
    rules: list[RuleWithOperations] | None = None
    side_effects: str | None = None  # required
    timeout_seconds: int | None = None


@model
class MutatingWebhookConfiguration(Resource):
    """MutatingWebhookConfiguration describes the configuration of and admission webhook tha..."""

    api_version: ClassVar[str] = "admissionregistration.k8s.io/v1"
    kind: ClassVar[str] = "MutatingWebhookConfiguration"
    plural: ClassVar[str | None] = "mutatingwebhookconfigurations"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "admissionregistration.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    webhooks: list[MutatingWebhook] | None = None


@model
class MutatingWebhookConfigurationList(Model):
    """MutatingWebhookConfigurationList is a list of MutatingWebhookConfiguration."""

    api_version: str | None = None
    items: list[MutatingWebhookConfiguration] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class NamedRuleWithOperations(Model):
    """NamedRuleWithOperations is a tuple of Operations and Resources with ResourceNames."""

    api_groups: list[str] | None = None
    api_versions: list[str] | None = None
    operations: list[str] | None = None
    resource_names: list[str] | None = None
    resources: list[str] | None = None
    scope: str | None = None


@model
class ParamKind(Model):
    """ParamKind is a tuple of Group Kind and Version."""

    api_version: str | None = None
    kind: str | None = None


@model
class ParamRef(Model):
    """ParamRef describes how to locate the params to be used as input to expressions of rul..."""

    name: str | None = None
    namespace: str | None = None
    parameter_not_found_action: str | None = None
    selector: LabelSelector | None = None


@model
class RuleWithOperations(Model):
    """RuleWithOperations is a tuple of Operations and Resources."""

    api_groups: list[str] | None = None
    api_versions: list[str] | None = None
    operations: list[str] | None = None
    resources: list[str] | None = None
    scope: str | None = None


@model
class ServiceReference(Model):
    """ServiceReference holds a reference to Service.legacy.k8s.io"""

    name: str | None = None  # required
    namespace: str | None = None  # required
    path: str | None = None
    port: int | None = None


@model
class TypeChecking(Model):
    """TypeChecking contains results of type checking the expressions in the ValidatingAdmis..."""

    expression_warnings: list[ExpressionWarning] | None = None


@model
class ValidatingAdmissionPolicy(Resource):
    """ValidatingAdmissionPolicy describes the definition of an admission validation policy..."""

    api_version: ClassVar[str] = "admissionregistration.k8s.io/v1"
    kind: ClassVar[str] = "ValidatingAdmissionPolicy"
    plural: ClassVar[str | None] = "validatingadmissionpolicies"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "admissionregistration.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: ValidatingAdmissionPolicySpec | None = None
    status: ValidatingAdmissionPolicyStatus | None = None


@model
class ValidatingAdmissionPolicyBinding(Resource):
    """ValidatingAdmissionPolicyBinding binds the ValidatingAdmissionPolicy with paramerized..."""

    api_version: ClassVar[str] = "admissionregistration.k8s.io/v1"
    kind: ClassVar[str] = "ValidatingAdmissionPolicyBinding"
    plural: ClassVar[str | None] = "validatingadmissionpolicybindings"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "admissionregistration.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: ValidatingAdmissionPolicyBindingSpec | None = None


@model
class ValidatingAdmissionPolicyBindingList(Model):
    """ValidatingAdmissionPolicyBindingList is a list of ValidatingAdmissionPolicyBinding."""

    api_version: str | None = None
    items: list[ValidatingAdmissionPolicyBinding] | None = None
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class ValidatingAdmissionPolicyBindingSpec(Model):
    """ValidatingAdmissionPolicyBindingSpec is the specification of the ValidatingAdmissionP..."""

    match_resources: MatchResources | None = None
    param_ref: ParamRef | None = None
    policy_name: str | None = None
    validation_actions: list[str] | None = None


@model
class ValidatingAdmissionPolicyList(Model):
    """ValidatingAdmissionPolicyList is a list of ValidatingAdmissionPolicy."""

    api_version: str | None = None
    items: list[ValidatingAdmissionPolicy] | None = None
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class ValidatingAdmissionPolicySpec(Model):
    """ValidatingAdmissionPolicySpec is the specification of the desired behavior of the Adm..."""

    audit_annotations: list[AuditAnnotation] | None = None
    failure_policy: str | None = None
    match_conditions: list[MatchCondition] | None = None
    match_constraints: MatchResources | None = None
    param_kind: ParamKind | None = None
    validations: list[Validation] | None = None
    variables: list[Variable] | None = None


@model
class ValidatingAdmissionPolicyStatus(Model):
    """ValidatingAdmissionPolicyStatus represents the status of an admission validation policy."""

    conditions: list[Condition] | None = None
    observed_generation: int | None = None
    type_checking: TypeChecking | None = None


@model
class ValidatingWebhook(Model):
    """ValidatingWebhook describes an admission webhook and the resources and operations it..."""

    admission_review_versions: list[str] | None = None  # required
    client_config: WebhookClientConfig | None = None  # required
    failure_policy: str | None = None
    match_conditions: list[MatchCondition] | None = None
    match_policy: str | None = None
    name: str | None = None  # required
    namespace_selector: LabelSelector | None = None
    object_selector: LabelSelector | None = None
    rules: list[RuleWithOperations] | None = None
    side_effects: str | None = None  # required
    timeout_seconds: int | None = None


@model
class ValidatingWebhookConfiguration(Resource):
    """ValidatingWebhookConfiguration describes the configuration of and admission webhook t..."""

    api_version: ClassVar[str] = "admissionregistration.k8s.io/v1"
    kind: ClassVar[str] = "ValidatingWebhookConfiguration"
    plural: ClassVar[str | None] = "validatingwebhookconfigurations"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "admissionregistration.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    webhooks: list[ValidatingWebhook] | None = None


@model
class ValidatingWebhookConfigurationList(Model):
    """ValidatingWebhookConfigurationList is a list of ValidatingWebhookConfiguration."""

    api_version: str | None = None
    items: list[ValidatingWebhookConfiguration] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class Validation(Model):
    """Validation specifies the CEL expression which is used to apply the validation."""

    expression: str | None = None  # required
    message: str | None = None
    message_expression: str | None = None
    reason: str | None = None


@model
class Variable(Model):
    """Variable is the definition of a variable that is used for composition."""

    expression: str | None = None  # required
    name: str | None = None  # required


@model
class WebhookClientConfig(Model):
    """WebhookClientConfig contains the information to make a TLS connection with the webhook"""

    ca_bundle: str | None = None
    service: ServiceReference | None = None
    url: str | None = None
