"""Public import path of the apimachinery types (ObjectMeta, ListMeta, Status, Time...)."""

from __future__ import annotations

from cloudcoil_cache.models._quantity import Quantity
from cloudcoil_cache.models._time import MicroTime, Time
from cloudcoil_cache.models.apimachinery import (
    APIGroup,
    APIGroupList,
    APIResource,
    APIResourceList,
    APIVersions,
    Condition,
    DeleteOptions,
    GroupVersionForDiscovery,
    Info,
    LabelSelector,
    LabelSelectorRequirement,
    ListMeta,
    ManagedFieldsEntry,
    ObjectMeta,
    OwnerReference,
    Preconditions,
    ServerAddressByClientCIDR,
    Status,
    StatusCause,
    StatusDetails,
    WatchEvent,
)

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
    "MicroTime",
    "ObjectMeta",
    "OwnerReference",
    "Preconditions",
    "Quantity",
    "ServerAddressByClientCIDR",
    "Status",
    "StatusCause",
    "StatusDetails",
    "Time",
    "WatchEvent",
]
