"""Generated models of authorization/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import ClassVar

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.models._base import Model, model
from cloudcoil_cache.models.apimachinery import (
    ObjectMeta,
)

__all__ = [
    "LocalSubjectAccessReview",
    "NonResourceAttributes",
    "NonResourceRule",
    "ResourceAttributes",
    "ResourceRule",
    "SelfSubjectAccessReview",
    "SelfSubjectAccessReviewSpec",
    "SelfSubjectRulesReview",
    "SelfSubjectRulesReviewSpec",
    "SubjectAccessReview",
    "SubjectAccessReviewSpec",
    "SubjectAccessReviewStatus",
    "SubjectRulesReviewStatus",
]


@model
class LocalSubjectAccessReview(Resource):
    """LocalSubjectAccessReview checks whether or not a user or group can perform an action..."""

    api_version: ClassVar[str] = "authorization.k8s.io/v1"
    kind: ClassVar[str] = "LocalSubjectAccessReview"
    plural: ClassVar[str | None] = "localsubjectaccessreviews"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "authorization.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: SubjectAccessReviewSpec | None = None  # required
    status: SubjectAccessReviewStatus | None = None


@model
class NonResourceAttributes(Model):
    """NonResourceAttributes includes the authorization attributes available for non-resourc..."""

    path: str | None = None
    verb: str | None = None


@model
class NonResourceRule(Model):
    """NonResourceRule holds information that describes a rule for the non-resource"""

    _wire: ClassVar[dict[str, str]] = {"non_resource_urls": "nonResourceURLs"}

    non_resource_urls: list[str] | None = None
    verbs: list[str] | None = None  # required


@model
class ResourceAttributes(Model):
    """ResourceAttributes includes the authorization attributes available for resource reque..."""

    group: str | None = None
    name: str | None = None
    namespace: str | None = None
    resource: str | None = None
    subresource: str | None = None
    verb: str | None = None
    version: str | None = None


@model
class ResourceRule(Model):
    """ResourceRule is the list of actions the subject is allowed to perform on resources."""

    api_groups: list[str] | None = None
    resource_names: list[str] | None = None
    resources: list[str] | None = None
    verbs: list[str] | None = None  # required


@model
class SelfSubjectAccessReview(Resource):
    """SelfSubjectAccessReview checks whether or the current user can perform an action."""

    api_version: ClassVar[str] = "authorization.k8s.io/v1"
    kind: ClassVar[str] = "SelfSubjectAccessReview"
    plural: ClassVar[str | None] = "selfsubjectaccessreviews"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "authorization.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: SelfSubjectAccessReviewSpec | None = None  # required
    status: SubjectAccessReviewStatus | None = None


@model
class SelfSubjectAccessReviewSpec(Model):
    """SelfSubjectAccessReviewSpec is a description of the access request."""

    non_resource_attributes: NonResourceAttributes | None = None
    resource_attributes: ResourceAttributes | None = None


@model
class SelfSubjectRulesReview(Resource):
    """SelfSubjectRulesReview enumerates the set of actions the current user can perform wit..."""

    api_version: ClassVar[str] = "authorization.k8s.io/v1"
    kind: ClassVar[str] = "SelfSubjectRulesReview"
    plural: ClassVar[str | None] = "selfsubjectrulesreviews"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "authorization.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: SelfSubjectRulesReviewSpec | None = None  # required
    status: SubjectRulesReviewStatus | None = None


@model
class SelfSubjectRulesReviewSpec(Model):
    """SelfSubjectRulesReviewSpec defines the specification for SelfSubjectRulesReview."""

    namespace: str | None = None


@model
class SubjectAccessReview(Resource):
    """SubjectAccessReview checks whether or not a user or group can perform an action."""

    api_version: ClassVar[str] = "authorization.k8s.io/v1"
    kind: ClassVar[str] = "SubjectAccessReview"
    plural: ClassVar[str | None] = "subjectaccessreviews"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "authorization.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: SubjectAccessReviewSpec | None = None  # required
    status: SubjectAccessReviewStatus | None = None


@model
class SubjectAccessReviewSpec(Model):
    """SubjectAccessReviewSpec is a description of the access request."""

    extra: dict[str, list[str]] | None = None
    groups: list[str] | None = None
    non_resource_attributes: NonResourceAttributes | None = None
    resource_attributes: ResourceAttributes | None = None
    uid: str | None = None
    user: str | None = None


@model
class SubjectAccessReviewStatus(Model):
    """SubjectAccessReviewStatus"""

    allowed: bool | None = None  # required
    denied: bool | None = None
    evaluation_error: str | None = None
    reason: str | None = None


@model
class SubjectRulesReviewStatus(Model):
    """SubjectRulesReviewStatus contains the result of a rules check."""

    evaluation_error: str | None = None
    incomplete: bool | None = None  # required
    non_resource_rules: list[NonResourceRule] | None = None  # required
    resource_rules: list[ResourceRule] | None = None  # required
