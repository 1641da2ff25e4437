"""Generated models of storage/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

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
from cloudcoil_cache.models.kubernetes.core.v1 import (
    PersistentVolumeSpec,
    TopologySelectorTerm,
)

__all__ = [
    "CSIDriver",
    "CSIDriverList",
    "CSIDriverSpec",
    "CSINode",
    "CSINodeDriver",
    "CSINodeList",
    "CSINodeSpec",
    "CSIStorageCapacity",
    "CSIStorageCapacityList",
    "StorageClass",
    "StorageClassList",
    "TokenRequest",
    "VolumeAttachment",
    "VolumeAttachmentList",
    "VolumeAttachmentSource",
    "VolumeAttachmentSpec",
    "VolumeAttachmentStatus",
    "VolumeError",
    "VolumeNodeResources",
]


@model
class CSIDriver(Resource):
    """CSIDriver captures information about a Container Storage Interface (CSI) volume drive..."""

    api_version: ClassVar[str] = "storage.k8s.io/v1"
    kind: ClassVar[str] = "CSIDriver"
    plural: ClassVar[str | None] = "csidrivers"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "storage.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: CSIDriverSpec | None = None  # required


@model
class CSIDriverList(Model):
    """CSIDriverList is a collection of CSIDriver objects."""

    api_version: str | None = None
    items: list[CSIDriver] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class CSIDriverSpec(Model):
    """CSIDriverSpec is the specification of a CSIDriver."""

    attach_required: bool | None = None
    fs_group_policy: str | None = None
    pod_info_on_mount: bool | None = None
    requires_republish: bool | None = None
    se_linux_mount: bool | None = None
    storage_capacity: bool | None = None
    token_requests: list[TokenRequest] | None = None
    volume_lifecycle_modes: list[str] | None = None


@model
class CSINode(Resource):
    """CSINode holds information about all CSI drivers installed on a node."""

    api_version: ClassVar[str] = "storage.k8s.io/v1"
    kind: ClassVar[str] = "CSINode"
    plural: ClassVar[str | None] = "csinodes"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "storage.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: CSINodeSpec | None = None  # required


@model
class CSINodeDriver(Model):
    """CSINodeDriver holds information about the specification of one CSI driver installed o..."""

    _wire: ClassVar[dict[str, str]] = {"node_id": "nodeID"}

    allocatable: VolumeNodeResources | None = None
    name: str | None = None  # required
    node_id: str | None = None  # required
    topology_keys: list[str] | None = None


@model
class CSINodeList(Model):
    """CSINodeList is a collection of CSINode objects."""

    api_version: str | None = None
    items: list[CSINode] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class CSINodeSpec(Model):
    """CSINodeSpec holds information about the specification of all CSI drivers installed on..."""

    drivers: list[CSINodeDriver] | None = None  # required


@model
class CSIStorageCapacity(Resource):
    """CSIStorageCapacity stores the result of one CSI GetCapacity call."""

    api_version: ClassVar[str] = "storage.k8s.io/v1"
    kind: ClassVar[str] = "CSIStorageCapacity"
    plural: ClassVar[str | None] = "csistoragecapacities"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "storage.k8s.io"
    version: ClassVar[str] = "v1"

    capacity: str | None = None
    maximum_volume_size: str | None = None
    metadata: ObjectMeta | None = None
    node_topology: LabelSelector | None = None
    storage_class_name: str | None = None  # required


@model
class CSIStorageCapacityList(Model):
    """CSIStorageCapacityList is a collection of CSIStorageCapacity objects."""

    api_version: str | None = None
    items: list[CSIStorageCapacity] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class StorageClass(Resource):
    """StorageClass describes the parameters for a class of storage for which PersistentVolu..."""

    api_version: ClassVar[str] = "storage.k8s.io/v1"
    kind: ClassVar[str] = "StorageClass"
    plural: ClassVar[str | None] = "storageclasses"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "storage.k8s.io"
    version: ClassVar[str] = "v1"

    allow_volume_expansion: bool | None = None
    allowed_topologies: list[TopologySelectorTerm] | None = None
    metadata: ObjectMeta | None = None
    mount_options: list[str] | None = None
    parameters: dict[str, str] | None = None
    provisioner: str | None = None  # required
    reclaim_policy: str | None = None
    volume_binding_mode: str | None = None


@model
class StorageClassList(Model):
    """StorageClassList is a collection of storage classes."""

    api_version: str | None = None
    items: list[StorageClass] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class TokenRequest(Model):
    """TokenRequest contains parameters of a service account token."""

    audience: str | None = None  # required
    expiration_seconds: int | None = None


@model
class VolumeAttachment(Resource):
    """VolumeAttachment captures the intent to attach or detach the specified volume to/from..."""

    api_version: ClassVar[str] = "storage.k8s.io/v1"
    kind: ClassVar[str] = "VolumeAttachment"
    plural: ClassVar[str | None] = "volumeattachments"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "storage.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: VolumeAttachmentSpec | None = None  # required
    status: VolumeAttachmentStatus | None = None


@model
class VolumeAttachmentList(Model):
    """VolumeAttachmentList is a collection of VolumeAttachment objects."""

    api_version: str | None = None
    items: list[VolumeAttachment] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class VolumeAttachmentSource(Model):
    """VolumeAttachmentSource represents a volume that should be attached."""

    inline_volume_spec: PersistentVolumeSpec | None = None
    persistent_volume_name: str | None = None


@model
class VolumeAttachmentSpec(Model):
    """VolumeAttachmentSpec is the specification of a VolumeAttachment request."""

    attacher: str | None = None  # required
    node_name: str | None = None  # required
    source: VolumeAttachmentSource | None = None  # required


@model
class VolumeAttachmentStatus(Model):
    """VolumeAttachmentStatus is the status of a VolumeAttachment request."""

    attach_error: VolumeError | None = None
    attached: bool | None = None  # required
    attachment_metadata: dict[str, str] | None = None
    detach_error: VolumeError | None = None


@model
class VolumeError(Model):
    """VolumeError captures an error encountered during a volume operation."""

    message: str | None = None
    time: Time | None = None


@model
class VolumeNodeResources(Model):
    """VolumeNodeResources is a set of resource limits for scheduling of volumes."""

    count: int | None = None
