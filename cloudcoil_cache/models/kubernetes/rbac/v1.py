"""Generated models of rbac/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import ClassVar

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.models._base import Model, model
from cloudcoil_cache.models.apimachinery import (
    LabelSelector,
    ListMeta,
    ObjectMeta,
)

__all__ = [
    "AggregationRule",
    "ClusterRole",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "ClusterRoleList",
    "PolicyRule",
    "Role",
    "RoleBinding",
    "RoleBindingList",
    "RoleList",
    "RoleRef",
    "Subject",
]


@model
class AggregationRule(Model):
    """AggregationRule describes how to locate ClusterRoles to aggregate into the ClusterRole"""

    cluster_role_selectors: list[LabelSelector] | None = None


@model
class ClusterRole(Resource):
    """ClusterRole is a cluster level, logical grouping of PolicyRules that can be reference..."""

    api_version: ClassVar[str] = "rbac.authorization.k8s.io/v1"
    kind: ClassVar[str] = "ClusterRole"
    plural: ClassVar[str | None] = "clusterroles"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "rbac.authorization.k8s.io"
    version: ClassVar[str] = "v1"

    aggregation_rule: AggregationRule | None = None
    metadata: ObjectMeta | None = None
    rules: list[PolicyRule] | None = None


@model
class ClusterRoleBinding(Resource):
    """ClusterRoleBinding references a ClusterRole, but not contain it."""

    api_version: ClassVar[str] = "rbac.authorization.k8s.io/v1"
    kind: ClassVar[str] = "ClusterRoleBinding"
    plural: ClassVar[str | None] = "clusterrolebindings"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "rbac.authorization.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    role_ref: RoleRef | None = None  # required
    subjects: list[Subject] | None = None


@model
class ClusterRoleBindingList(Model):
    """ClusterRoleBindingList is a collection of ClusterRoleBindings"""

    api_version: str | None = None
    items: list[ClusterRoleBinding] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class ClusterRoleList(Model):
    """ClusterRoleList is a collection of ClusterRoles"""

    api_version: str | None = None
    items: list[ClusterRole] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class PolicyRule(Model):
    """PolicyRule holds information that describes a policy rule, but does not contain infor..."""

    _wire: ClassVar[dict[str, str]] = {"non_resource_urls": "nonResourceURLs"}

    api_groups: list[str] | None = None
    non_resource_urls: list[str] | None = None
    resource_names: list[str] | None = None
    resources: list[str] | None = None
    verbs: list[str] | None = None  # required


@model
class Role(Resource):
    """Role is a namespaced, logical grouping of PolicyRules that can be referenced as a uni..."""

    api_version: ClassVar[str] = "rbac.authorization.k8s.io/v1"
    kind: ClassVar[str] = "Role"
    plural: ClassVar[str | None] = "roles"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "rbac.authorization.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    rules: list[PolicyRule] | None = None


@model
class RoleBinding(Resource):
    """RoleBinding references a role, but does not contain it."""

    api_version: ClassVar[str] = "rbac.authorization.k8s.io/v1"
    kind: ClassVar[str] = "RoleBinding"
    plural: ClassVar[str | None] = "rolebindings"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "rbac.authorization.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    role_ref: RoleRef | None = None  # required
    subjects: list[Subject] | None = None


@model
class RoleBindingList(Model):
    """RoleBindingList is a collection of RoleBindings"""

    api_version: str | None = None
    items: list[RoleBinding] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class RoleList(Model):
    """RoleList is a collection of Roles"""

    api_version: str | None = None
    items: list[Role] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class RoleRef(Model):
    """RoleRef contains information that points to the role being used"""

    api_group: str | None = None  # required
    kind: str | None = None  # required
    name: str | None = None  # required


@model
class Subject(Model):
    """Subject contains a reference to the object or user identities a role binding applies to."""

    api_group: str | None = None
    kind: str | None = None  # required
    name: str | None = None  # required
    namespace: str | None = None
