"""Generated models of apimachinery (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import Any, ClassVar

from cloudcoil_cache.models._model import Model, model
from cloudcoil_cache.models._time import Time

__all__ = [
    "APIGroup",
    "APIGroupList",
    "APIResource",
    "APIResourceList",
    "APIVersions",
    "Condition",
    "DeleteOptions",
    "GroupVersionForDiscovery",
    "Info",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ListMeta",
    "ManagedFieldsEntry",
    "ObjectMeta",
    "OwnerReference",
    "Preconditions",
    "ServerAddressByClientCIDR",
    "Status",
    "StatusCause",
    "StatusDetails",
    "WatchEvent",
]


@model
class APIGroup(Model):
    """APIGroup contains the name, the supported versions, and the preferred version of a gr..."""

    _wire: ClassVar[dict[str, str]] = {
        "server_address_by_client_cidrs": "serverAddressByClientCIDRs",
    }

    api_version: str | None = None
    kind: str | None = None
    name: str | None = None  # required
    preferred_version: GroupVersionForDiscovery | None = None
    server_address_by_client_cidrs: list[ServerAddressByClientCIDR] | None = None
    versions: list[GroupVersionForDiscovery] | None = None  # required


@model
class APIGroupList(Model):
    """APIGroupList is a list of APIGroup, to allow clients to discover the API at /apis."""

    api_version: str | None = None
    groups: list[APIGroup] | None = None  # required
    kind: str | None = None


@model
class APIResource(Model):
    """APIResource specifies the name of a resource and whether it is namespaced."""

    categories: list[str] | None = None
    group: str | None = None
    kind: str | None = None  # required
    name: str | None = None  # required
    namespaced: bool | None = None  # required
    short_names: list[str] | None = None
    singular_name: str | None = None  # required
    storage_version_hash: str | None = None
    verbs: list[str] | None = None  # required
    version: str | None = None


@model
class APIResourceList(Model):
    """APIResourceList is a list of APIResource, it is used to expose the name of the resour..."""

    api_version: str | None = None
    group_version: str | None = None  # required
    kind: str | None = None
    resources: list[APIResource] | None = None  # required


@model
class APIVersions(Model):
    """APIVersions lists the versions that are available, to allow clients to discover the A..."""

    _wire: ClassVar[dict[str, str]] = {
        "server_address_by_client_cidrs": "serverAddressByClientCIDRs",
    }

    api_version: str | None = None
    kind: str | None = None
    server_address_by_client_cidrs: list[ServerAddressByClientCIDR] | None = None  # required
    versions: list[str] | None = None  # required


@model
class Condition(Model):
    """Condition contains details for one aspect of the current state of this API Resource."""

    last_transition_time: Time | None = None  # required
    message: str | None = None  # required
    observed_generation: int | None = None
    reason: str | None = None  # required
    status: str | None = None  # required
    type: str | None = None  # required


@model
class DeleteOptions(Model):
    """DeleteOptions may be provided when deleting an API object."""

    api_version: str | None = None
    dry_run: list[str] | None = None
    grace_period_seconds: int | None = None
    kind: str | None = None
    orphan_dependents: bool | None = None
    preconditions: Preconditions | None = None
    propagation_policy: str | None = None


@model
class GroupVersionForDiscovery(Model):
    """GroupVersion contains the "group/version" and "version" string of a version."""

    group_version: str | None = None  # required
    version: str | None = None  # required


@model
class Info(Model):
    """Info contains versioning information."""

    build_date: str | None = None  # required
    compiler: str | None = None  # required
    git_commit: str | None = None  # required
    git_tree_state: str | None = None  # required
    git_version: str | None = None  # required
    go_version: str | None = None  # required
    major: str | None = None  # required
    minor: str | None = None  # required
    platform: str | None = None  # required


@model
class LabelSelector(Model):
    """A label selector is a label query over a set of resources."""

    match_expressions: list[LabelSelectorRequirement] | None = None
    match_labels: dict[str, str] | None = None


@model
class LabelSelectorRequirement(Model):
    """A label selector requirement is a selector that contains values, a key, and an operat..."""

    key: str | None = None  # required
    operator: str | None = None  # required
    values: list[str] | None = None


@model
class ListMeta(Model):
    """ListMeta describes metadata that synthetic resources must have, including lists and v..."""

    continue_: str | None = None
    remaining_item_count: int | None = None
    resource_version: str | None = None
    self_link: str | None = None


@model
class ManagedFieldsEntry(Model):
    """ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the resource..."""

    api_version: str | None = None
    fields_type: str | None = None
    fields_v1: dict[str, Any] | None = None
    manager: str | None = None
    operation: str | None = None
    subresource: str | None = None
    time: Time | None = None


@model
class ObjectMeta(Model):
    """ObjectMeta is metadata that all persisted resources must have, which includes all obj..."""

    annotations: dict[str, str] | None = None
    creation_timestamp: Time | None = None
    deletion_grace_period_seconds: int | None = None
    deletion_timestamp: Time | None = None
    finalizers: list[str] | None = None
    generate_name: str | None = None
    generation: int | None = None
    labels: dict[str, str] | None = None
    managed_fields: list[ManagedFieldsEntry] | None = None
    name: str | None = None
    namespace: str | None = None
    owner_references: list[OwnerReference] | None = None
    resource_version: str | None = None
    self_link: str | None = None
    uid: str | None = None


@model
class OwnerReference(Model):
    """OwnerReference contains enough information to let you identify an owning object."""

    api_version: str | None = None  # required
    block_owner_deletion: bool | None = None
    controller: bool | None = None
    kind: str | None = None  # required
    name: str | None = None  # required
    uid: str | None = None  # required


@model
class Preconditions(Model):
    """Preconditions must be fulfilled before an operation (update, delete, etc.) is carried..."""

    resource_version: str | None = None
    uid: str | None = None


@model
class ServerAddressByClientCIDR(Model):
    """ServerAddressByClientCIDR helps the client to determine the server address that they..."""

    _wire: ClassVar[dict[str, str]] = {"client_cidr": "clientCIDR"}

    client_cidr: str | None = None  # required
    server_address: str | None = None  # required


@model
class Status(Model):
    """Status is a return value for calls that don't return other objects."""

    api_version: str | None = None
    code: int | None = None
    details: StatusDetails | None = None
    kind: str | None = None
    message: str | None = None
    metadata: ListMeta | None = None
    reason: str | None = None
    status: str | None = None


@model
class StatusCause(Model):
    """StatusCause provides more information about an api.Status failure, including cases wh..."""

    field: str | None = None
    message: str | None = None
    reason: str | None = None


@model
class StatusDetails(Model):
    """StatusDetails is a set of additional properties that MAY be set by the server to prov..."""

    causes: list[StatusCause] | None = None
    group: str | None = None
    kind: str | None = None
    name: str | None = None
    retry_after_seconds: int | None = None
    uid: str | None = None


@model
class WatchEvent(Model):
    """Event represents a single event to a watched resource."""

    object: dict[str, Any] | None = None  # required
    type: str | None = None  # required
