"""Generated models of core/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import ClassVar

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.models._base import Model, model
from cloudcoil_cache.models._time import MicroTime, Time
from cloudcoil_cache.models.apimachinery import (
    Condition,
    LabelSelector,
    ListMeta,
    ObjectMeta,
)

__all__ = [
    "AWSElasticBlockStoreVolumeSource",
    "Affinity",
    "AppArmorProfile",
    "AttachedVolume",
    "AzureDiskVolumeSource",
    "AzureFilePersistentVolumeSource",
    "AzureFileVolumeSource",
    "Binding",
    "CSIPersistentVolumeSource",
    "CSIVolumeSource",
    "Capabilities",
    "CephFSPersistentVolumeSource",
    "CephFSVolumeSource",
    "CinderPersistentVolumeSource",
    "CinderVolumeSource",
    "ClaimSource",
    "ClientIPConfig",
    "ClusterTrustBundleProjection",
    "ComponentCondition",
    "ComponentStatus",
    "ComponentStatusList",
    "ConfigMap",
    "ConfigMapEnvSource",
    "ConfigMapKeySelector",
    "ConfigMapList",
    "ConfigMapNodeConfigSource",
    "ConfigMapProjection",
    "ConfigMapVolumeSource",
    "Container",
    "ContainerImage",
    "ContainerPort",
    "ContainerResizePolicy",
    "ContainerState",
    "ContainerStateRunning",
    "ContainerStateTerminated",
    "ContainerStateWaiting",
    "ContainerStatus",
    "DaemonEndpoint",
    "DownwardAPIProjection",
    "DownwardAPIVolumeFile",
    "DownwardAPIVolumeSource",
    "EmptyDirVolumeSource",
    "EndpointAddress",
    "EndpointPort",
    "EndpointSubset",
    "Endpoints",
    "EndpointsList",
    "EnvFromSource",
    "EnvVar",
    "EnvVarSource",
    "EphemeralContainer",
    "EphemeralVolumeSource",
    "Event",
    "EventList",
    "EventSeries",
    "EventSource",
    "ExecAction",
    "FCVolumeSource",
    "FlexPersistentVolumeSource",
    "FlexVolumeSource",
    "FlockerVolumeSource",
    "GCEPersistentDiskVolumeSource",
    "GRPCAction",
    "GitRepoVolumeSource",
    "GlusterfsPersistentVolumeSource",
    "GlusterfsVolumeSource",
    "HTTPGetAction",
    "HTTPHeader",
    "HostAlias",
    "HostIP",
    "HostPathVolumeSource",
    "ISCSIPersistentVolumeSource",
    "ISCSIVolumeSource",
    "KeyToPath",
    "Lifecycle",
    "LifecycleHandler",
    "LimitRange",
    "LimitRangeItem",
    "LimitRangeList",
    "LimitRangeSpec",
    "LoadBalancerIngress",
    "LoadBalancerStatus",
    "LocalObjectReference",
    "LocalVolumeSource",
    "ModifyVolumeStatus",
    "NFSVolumeSource",
    "Namespace",
    "NamespaceCondition",
    "NamespaceList",
    "NamespaceSpec",
    "NamespaceStatus",
    "Node",
    "NodeAddress",
    "NodeAffinity",
    "NodeCondition",
    "NodeConfigSource",
    "NodeConfigStatus",
    "NodeDaemonEndpoints",
    "NodeList",
    "NodeRuntimeHandler",
    "NodeRuntimeHandlerFeatures",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "NodeSpec",
    "NodeStatus",
    "NodeSystemInfo",
    "ObjectFieldSelector",
    "ObjectReference",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "PersistentVolumeClaimCondition",
    "PersistentVolumeClaimList",
    "PersistentVolumeClaimSpec",
    "PersistentVolumeClaimStatus",
    "PersistentVolumeClaimTemplate",
    "PersistentVolumeClaimVolumeSource",
    "PersistentVolumeList",
    "PersistentVolumeSpec",
    "PersistentVolumeStatus",
    "PhotonPersistentDiskVolumeSource",
    "Pod",
    "PodAffinity",
    "PodAffinityTerm",
    "PodAntiAffinity",
    "PodCondition",
    "PodDNSConfig",
    "PodDNSConfigOption",
    "PodIP",
    "PodList",
    "PodOS",
    "PodReadinessGate",
    "PodResourceClaim",
    "PodResourceClaimStatus",
    "PodSchedulingGate",
    "PodSecurityContext",
    "PodSpec",
    "PodStatus",
    "PodTemplate",
    "PodTemplateList",
    "PodTemplateSpec",
    "PortStatus",
    "PortworxVolumeSource",
    "PreferredSchedulingTerm",
    "Probe",
    "ProjectedVolumeSource",
    "QuobyteVolumeSource",
    "RBDPersistentVolumeSource",
    "RBDVolumeSource",
    "ReplicationController",
    "ReplicationControllerCondition",
    "ReplicationControllerList",
    "ReplicationControllerSpec",
    "ReplicationControllerStatus",
    "ResourceClaim",
    "ResourceFieldSelector",
    "ResourceQuota",
    "ResourceQuotaList",
    "ResourceQuotaSpec",
    "ResourceQuotaStatus",
    "ResourceRequirements",
    "SELinuxOptions",
    "ScaleIOPersistentVolumeSource",
    "ScaleIOVolumeSource",
    "ScopeSelector",
    "ScopedResourceSelectorRequirement",
    "SeccompProfile",
    "Secret",
    "SecretEnvSource",
    "SecretKeySelector",
    "SecretList",
    "SecretProjection",
    "SecretReference",
    "SecretVolumeSource",
    "SecurityContext",
    "Service",
    "ServiceAccount",
    "ServiceAccountList",
    "ServiceAccountTokenProjection",
    "ServiceList",
    "ServicePort",
    "ServiceSpec",
    "ServiceStatus",
    "SessionAffinityConfig",
    "SleepAction",
    "StorageOSPersistentVolumeSource",
    "StorageOSVolumeSource",
    "Sysctl",
    "TCPSocketAction",
    "Taint",
    "Toleration",
    "TopologySelectorLabelRequirement",
    "TopologySelectorTerm",
    "TopologySpreadConstraint",
    "TypedLocalObjectReference",
    "TypedObjectReference",
    "Volume",
    "VolumeDevice",
    "VolumeMount",
    "VolumeMountStatus",
    "VolumeNodeAffinity",
    "VolumeProjection",
    "VolumeResourceRequirements",
    "VsphereVirtualDiskVolumeSource",
    "WeightedPodAffinityTerm",
    "WindowsSecurityContextOptions",
]


@model
class AWSElasticBlockStoreVolumeSource(Model):
    """Represents a Persistent Disk resource in AWS. An AWS EBS disk must exist before mount..."""

    _wire: ClassVar[dict[str, str]] = {"volume_id": "volumeID"}

    fs_type: str | None = None
    partition: int | None = None
    read_only: bool | None = None
    volume_id: str | None = None  # required


@model
class Affinity(Model):
    """Affinity is a group of affinity scheduling rules."""

    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAntiAffinity | None = None


@model
class AppArmorProfile(Model):
    """AppArmorProfile defines a pod or container's AppArmor settings."""

    localhost_profile: str | None = None
    type: str | None = None  # required


@model
class AttachedVolume(Model):
    """AttachedVolume describes a volume attached to a node"""

    device_path: str | None = None  # required
    name: str | None = None  # required


@model
class AzureDiskVolumeSource(Model):
    """AzureDisk represents an Azure Data Disk mount on the host and bind mount to the pod."""

    _wire: ClassVar[dict[str, str]] = {"disk_uri": "diskURI"}

    caching_mode: str | None = None
    disk_name: str | None = None  # required
    disk_uri: str | None = None  # required
    fs_type: str | None = None
    kind: str | None = None
    read_only: bool | None = None


@model
class AzureFilePersistentVolumeSource(Model):
    """AzureFile represents an Azure File Service mount on the host and bind mount to the pod."""

    read_only: bool | None = None
    secret_name: str | None = None  # required
    secret_namespace: str | None = None
    share_name: str | None = None  # required


@model
class AzureFileVolumeSource(Model):
    """AzureFile represents an Azure File Service mount on the host and bind mount to the pod."""

    read_only: bool | None = None
    secret_name: str | None = None  # required
    share_name: str | None = None  # required


@model
class Binding(Resource):
    """Binding ties one object to another; for example, a pod is bound to a node by a schedu..."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "Binding"
    plural: ClassVar[str | None] = "bindings"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    target: ObjectReference | None = None  # required


@model
class CSIPersistentVolumeSource(Model):
    """Represents storage that is managed by an external CSI volume driver (Beta feature)"""

    controller_expand_secret_ref: SecretReference | None = None
    controller_publish_secret_ref: SecretReference | None = None
    driver: str | None = None  # required
    fs_type: str | None = None
    node_expand_secret_ref: SecretReference | None = None
    node_publish_secret_ref: SecretReference | None = None
    node_stage_secret_ref: SecretReference | None = None
    read_only: bool | None = None
    volume_attributes: dict[str, str] | None = None
    volume_handle: str | None = None  # required


@model
class CSIVolumeSource(Model):
    """Represents a source location of a volume to mount, managed by an external CSI driver"""

    driver: str | None = None  # required
    fs_type: str | None = None
    node_publish_secret_ref: LocalObjectReference | None = None
    read_only: bool | None = None
    volume_attributes: dict[str, str] | None = None


@model
class Capabilities(Model):
    """Adds and removes POSIX capabilities from running containers."""

    add: list[str] | None = None
    drop: list[str] | None = None


@model
class CephFSPersistentVolumeSource(Model):
    """Represents a Ceph Filesystem mount that lasts the lifetime of a pod Cephfs volumes do..."""

    monitors: list[str] | None = None  # required
    path: str | None = None
    read_only: bool | None = None
    secret_file: str | None = None
    secret_ref: SecretReference | None = None
    user: str | None = None


@model
class CephFSVolumeSource(Model):
    """Represents a Ceph Filesystem mount that lasts the lifetime of a pod Cephfs volumes do..."""

    monitors: list[str] | None = None  # required
    path: str | None = None
    read_only: bool | None = None
    secret_file: str | None = None
    secret_ref: LocalObjectReference | None = None
    user: str | None = None


@model
class CinderPersistentVolumeSource(Model):
    """Represents a cinder volume resource in Openstack."""

    _wire: ClassVar[dict[str, str]] = {"volume_id": "volumeID"}

    fs_type: str | None = None
    read_only: bool | None = None
    secret_ref: SecretReference | None = None
    volume_id: str | None = None  # required


@model
class CinderVolumeSource(Model):
    """Represents a cinder volume resource in Openstack."""

    _wire: ClassVar[dict[str, str]] = {"volume_id": "volumeID"}

    fs_type: str | None = None
    read_only: bool | None = None
    secret_ref: LocalObjectReference | None = None
    volume_id: str | None = None  # required


@model
class ClaimSource(Model):
    """ClaimSource describes a reference to a ResourceClaim."""

    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


@model
class ClientIPConfig(Model):
    """ClientIPConfig represents the configurations of Client IP based session affinity."""

    timeout_seconds: int | None = None


@model
class ClusterTrustBundleProjection(Model):
    """ClusterTrustBundleProjection describes how to select a set of ClusterTrustBundle obje..."""

    label_selector: LabelSelector | None = None
    name: str | None = None
    optional: bool | None = None
    path: str | None = None  # required
    signer_name: str | None = None


@model
class ComponentCondition(Model):
    """Information about the condition of a component."""

    error: str | None = None
    message: str | None = None
    status: str | None = None  # required
    type: str | None = None  # required


@model
class ComponentStatus(Resource):
    """ComponentStatus (and ComponentStatusList) holds the cluster validation info."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "ComponentStatus"
    plural: ClassVar[str | None] = "componentstatuses"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    conditions: list[ComponentCondition] | None = None
    metadata: ObjectMeta | None = None


@model
class ComponentStatusList(Model):
    """Status of all the conditions for the component as a list of ComponentStatus objects."""

    api_version: str | None = None
    items: list[ComponentStatus] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class ConfigMap(Resource):
    """ConfigMap holds configuration data for pods to consume."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "ConfigMap"
    plural: ClassVar[str | None] = "configmaps"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    binary_data: dict[str, str] | None = None
    data: dict[str, str] | None = None
    immutable: bool | None = None
    metadata: ObjectMeta | None = None


@model
class ConfigMapEnvSource(Model):
    """ConfigMapEnvSource selects a ConfigMap to populate the environment variables with."""

    name: str | None = None
    optional: bool | None = None


@model
class ConfigMapKeySelector(Model):
    """Selects a key from a ConfigMap."""

    key: str | None = None  # required
    name: str | None = None
    optional: bool | None = None


@model
class ConfigMapList(Model):
    """ConfigMapList is a resource containing a list of ConfigMap objects."""

    api_version: str | None = None
    items: list[ConfigMap] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class ConfigMapNodeConfigSource(Model):
    """ConfigMapNodeConfigSource contains the information to reference a ConfigMap as a conf..."""

    kubelet_config_key: str | None = None  # required
    name: str | None = None  # required
    namespace: str | None = None  # required
    resource_version: str | None = None
    uid: str | None = None


@model
class ConfigMapProjection(Model):
    """Adapts a ConfigMap into a projected volume."""

    items: list[KeyToPath] | None = None
    name: str | None = None
    optional: bool | None = None


@model
class ConfigMapVolumeSource(Model):
    """Adapts a ConfigMap into a volume."""

    default_mode: int | None = None
    items: list[KeyToPath] | None = None
    name: str | None = None
    optional: bool | None = None


@model
class Container(Model):
    """A single application container that you want to run within a pod."""

    args: list[str] | None = None
    command: list[str] | None = None
    env: list[EnvVar] | None = None
    env_from: list[EnvFromSource] | None = None
    image: str | None = None
    image_pull_policy: str | None = None
    lifecycle: Lifecycle | None = None
    liveness_probe: Probe | None = None
    name: str | None = None  # required
    ports: list[ContainerPort] | None = None
    readiness_probe: Probe | None = None
    resize_policy: list[ContainerResizePolicy] | None = None
    resources: ResourceRequirements | None = None
    restart_policy: str | None = None
    security_context: SecurityContext | None = None
    startup_probe: Probe | None = None
    stdin: bool | None = None
    stdin_once: bool | None = None
    termination_message_path: str | None = None
    termination_message_policy: str | None = None
    tty: bool | None = None
    volume_devices: list[VolumeDevice] | None = None
    volume_mounts: list[VolumeMount] | None = None
    working_dir: str | None = None


@model
class ContainerImage(Model):
    """Describe a container image"""

    names: list[str] | None = None
    size_bytes: int | None = None


@model
class ContainerPort(Model):
    """ContainerPort represents a network port in a single container."""

    _wire: ClassVar[dict[str, str]] = {"host_ip": "hostIP"}

    container_port: int | None = None  # required
    host_ip: str | None = None
    host_port: int | None = None
    name: str | None = None
    protocol: str | None = None


@model
class ContainerResizePolicy(Model):
    """ContainerResizePolicy represents resource resize policy for the container."""

    resource_name: str | None = None  # required
    restart_policy: str | None = None  # required


@model
class ContainerState(Model):
    """ContainerState holds a possible state of container."""

    running: ContainerStateRunning | None = None
    terminated: ContainerStateTerminated | None = None
    waiting: ContainerStateWaiting | None = None


@model
class ContainerStateRunning(Model):
    """ContainerStateRunning is a running state of a container."""

    started_at: Time | None = None


@model
class ContainerStateTerminated(Model):
    """ContainerStateTerminated is a terminated state of a container."""

    _wire: ClassVar[dict[str, str]] = {"container_id": "containerID"}

    container_id: str | None = None
    exit_code: int | None = None  # required
    finished_at: Time | None = None
    message: str | None = None
    reason: str | None = None
    signal: int | None = None
    started_at: Time | None = None


@model
class ContainerStateWaiting(Model):
    """ContainerStateWaiting is a waiting state of a container."""

    message: str | None = None
    reason: str | None = None


@model
class ContainerStatus(Model):
    """ContainerStatus contains details for the current status of this container."""

    _wire: ClassVar[dict[str, str]] = {"container_id": "containerID", "image_id": "imageID"}

    allocated_resources: dict[str, str] | None = None
    container_id: str | None = None
    image: str | None = None  # required
    image_id: str | None = None  # required
    last_state: ContainerState | None = None
    name: str | None = None  # required
    ready: bool | None = None  # required
    resources: ResourceRequirements | None = None
    restart_count: int | None = None  # required
    started: bool | None = None
    state: ContainerState | None = None
    volume_mounts: list[VolumeMountStatus] | None = None


@model
class DaemonEndpoint(Model):
    """DaemonEndpoint contains information about a single Daemon endpoint."""

    _wire: ClassVar[dict[str, str]] = {"port": "Port"}

    port: int | None = None  # required


@model
class DownwardAPIProjection(Model):
    """Represents downward API info for projecting into a projected volume."""

    items: list[DownwardAPIVolumeFile] | None = None


@model
class DownwardAPIVolumeFile(Model):
    """DownwardAPIVolumeFile represents information to create the file containing the pod field"""

    field_ref: ObjectFieldSelector | None = None
    mode: int | None = None
    path: str | None = None  # required
    resource_field_ref: ResourceFieldSelector | None = None


@model
class DownwardAPIVolumeSource(Model):
    """DownwardAPIVolumeSource represents a volume containing downward API info."""

    default_mode: int | None = None
    items: list[DownwardAPIVolumeFile] | None = None


@model
class EmptyDirVolumeSource(Model):
    """Represents an empty directory for a pod."""

    medium: str | None = None
    size_limit: str | None = None


@model
class EndpointAddress(Model):
    """EndpointAddress is a tuple that describes single IP address."""

    hostname: str | None = None
    ip: str | None = None  # required
    node_name: str | None = None
    target_ref: ObjectReference | None = None


@model
class EndpointPort(Model):
    """EndpointPort is a tuple that describes a single port."""

    app_protocol: str | None = None
    name: str | None = None
    port: int | None = None  # required
    protocol: str | None = None


@model
class EndpointSubset(Model):
    """EndpointSubset is a group of addresses with a common set of ports."""

    addresses: list[EndpointAddress] | None = None
    not_ready_addresses: list[EndpointAddress] | None = None
    ports: list[EndpointPort] | None = None


@model
class Endpoints(Resource):
    """Endpoints is a collection of endpoints that implement the actual service."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "Endpoints"
    plural: ClassVar[str | None] = "endpoints"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    subsets: list[EndpointSubset] | None = None


@model
class EndpointsList(Model):
    """EndpointsList is a list of endpoints."""

    api_version: str | None = None
    items: list[Endpoints] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class EnvFromSource(Model):
    """EnvFromSource represents the source of a set of ConfigMaps"""

    config_map_ref: ConfigMapEnvSource | None = None
    prefix: str | None = None
    secret_ref: SecretEnvSource | None = None


@model
class EnvVar(Model):
    """EnvVar represents an environment variable present in a Container."""

    name: str | None = None  # required
    value: str | None = None
    value_from: EnvVarSource | None = None


@model
class EnvVarSource(Model):
    """EnvVarSource represents a source for the value of an EnvVar."""

    config_map_key_ref: ConfigMapKeySelector | None = None
    field_ref: ObjectFieldSelector | None = None
    resource_field_ref: ResourceFieldSelector | None = None
    secret_key_ref: SecretKeySelector | None = None


@model
class EphemeralContainer(Model):
    """An EphemeralContainer is a temporary container that you may add to an existing Pod fo..."""

    args: list[str] | None = None
    command: list[str] | None = None
    env: list[EnvVar] | None = None
    env_from: list[EnvFromSource] | None = None
    image: str | None = None
    image_pull_policy: str | None = None
    lifecycle: Lifecycle | None = None
    liveness_probe: Probe | None = None
    name: str | None = None  # required
    ports: list[ContainerPort] | None = None
    readiness_probe: Probe | None = None
    resize_policy: list[ContainerResizePolicy] | None = None
    resources: ResourceRequirements | None = None
    restart_policy: str | None = None
    security_context: SecurityContext | None = None
    startup_probe: Probe | None = None
    stdin: bool | None = None
    stdin_once: bool | None = None
    target_container_name: str | None = None
    termination_message_path: str | None = None
    termination_message_policy: str | None = None
    tty: bool | None = None
    volume_devices: list[VolumeDevice] | None = None
    volume_mounts: list[VolumeMount] | None = None
    working_dir: str | None = None


@model
class EphemeralVolumeSource(Model):
    """Represents an ephemeral volume that is handled by a normal storage driver."""

    volume_claim_template: PersistentVolumeClaimTemplate | None = None


@model
class Event(Resource):
    """Event is a report of an event somewhere in the cluster."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "Event"
    plural: ClassVar[str | None] = "events"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    action: str | None = None
    count: int | None = None
    event_time: MicroTime | None = None
    first_timestamp: Time | None = None
    involved_object: ObjectReference | None = None  # required
    last_timestamp: Time | None = None
    message: str | None = None
    metadata: ObjectMeta | None = None  # required
    reason: str | None = None
    related: ObjectReference | None = None
    reporting_component: str | None = None
    reporting_instance: str | None = None
    series: EventSeries | None = None
    source: EventSource | None = None
    type: str | None = None


@model
class EventList(Model):
    """EventList is a list of events."""

    api_version: str | None = None
    items: list[Event] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class EventSeries(Model):
    """EventSeries contain information on series of events, i.e."""

    count: int | None = None
    last_observed_time: MicroTime | None = None


@model
class EventSource(Model):
    """EventSource contains information for an event."""

    component: str | None = None
    host: str | None = None


@model
class ExecAction(Model):
    """ExecAction describes a "run in container" action."""

    command: list[str] | None = None


@model
class FCVolumeSource(Model):
    """Represents a Fibre Channel volume."""

    _wire: ClassVar[dict[str, str]] = {"target_wwns": "targetWWNs"}

    fs_type: str | None = None
    lun: int | None = None
    read_only: bool | None = None
    target_wwns: list[str] | None = None
    wwids: list[str] | None = None


@model
class FlexPersistentVolumeSource(Model):
    """FlexPersistentVolumeSource represents a generic persistent volume resource that is pr..."""

    driver: str | None = None  # required
    fs_type: str | None = None
    options: dict[str, str] | None = None
    read_only: bool | None = None
    secret_ref: SecretReference | None = None


@model
class FlexVolumeSource(Model):
    """FlexVolume represents a generic volume resource that is provisioned/attached using an..."""

    driver: str | None = None  # required
    fs_type: str | None = None
    options: dict[str, str] | None = None
    read_only: bool | None = None
    secret_ref: LocalObjectReference | None = None


@model
class FlockerVolumeSource(Model):
    """Represents a Flocker volume mounted by the Flocker agent."""

    _wire: ClassVar[dict[str, str]] = {"dataset_uuid": "datasetUUID"}

    dataset_name: str | None = None
    dataset_uuid: str | None = None


@model
class GCEPersistentDiskVolumeSource(Model):
    """Represents a Persistent Disk resource in Google Compute Engine."""

    fs_type: str | None = None
    partition: int | None = None
    pd_name: str | None = None  # required
    read_only: bool | None = None


@model
class GRPCAction(Model):
    """GRPCAction"""

    port: int | None = None  # required
    service: str | None = None


@model
class GitRepoVolumeSource(Model):
    """Represents a volume that is populated with the contents of a git repository."""

    directory: str | None = None
    repository: str | None = None  # required
    revision: str | None = None


@model
class GlusterfsPersistentVolumeSource(Model):
    """Represents a Glusterfs mount that lasts the lifetime of a pod."""

    endpoints: str | None = None  # required
    endpoints_namespace: str | None = None
    path: str | None = None  # required
    read_only: bool | None = None


@model
class GlusterfsVolumeSource(Model):
    """Represents a Glusterfs mount that lasts the lifetime of a pod."""

    endpoints: str | None = None  # required
    path: str | None = None  # required
    read_only: bool | None = None


@model
class HTTPGetAction(Model):
    """HTTPGetAction describes an action based on HTTP Get requests."""

    host: str | None = None
    http_headers: list[HTTPHeader] | None = None
    path: str | None = None
    port: int | str | None = None  # required
    scheme: str | None = None


@model
class HTTPHeader(Model):
    """HTTPHeader describes a custom header to be used in HTTP probes"""

    name: str | None = None  # required
    value: str | None = None  # required


@model
class HostAlias(Model):
    """HostAlias holds the mapping between IP and hostnames that will be injected as an entr..."""

    hostnames: list[str] | None = None
    ip: str | None = None  # required


@model
class HostIP(Model):
    """HostIP represents a single IP address allocated to the host."""

    ip: str | None = None


@model
class HostPathVolumeSource(Model):
    """Represents a host path mapped into a pod."""

    path: str | None = None  # required
    type: str | None = None


@model
class ISCSIPersistentVolumeSource(Model):
    """ISCSIPersistentVolumeSource represents an ISCSI disk."""

    chap_auth_discovery: bool | None = None
    chap_auth_session: bool | None = None
    fs_type: str | None = None
    initiator_name: str | None = None
    iqn: str | None = None  # required
    iscsi_interface: str | None = None
    lun: int | None = None  # required
    portals: list[str] | None = None
    read_only: bool | None = None
    secret_ref: SecretReference | None = None
    target_portal: str | None = None  # required


@model
class ISCSIVolumeSource(Model):
    """Represents an ISCSI disk."""

    chap_auth_discovery: bool | None = None
    chap_auth_session: bool | None = None
    fs_type: str | None = None
    initiator_name: str | None = None
    iqn: str | None = None  # required
    iscsi_interface: str | None = None
    lun: int | None = None  # required
    portals: list[str] | None = None
    read_only: bool | None = None
    secret_ref: LocalObjectReference | None = None
    target_portal: str | None = None  # required


@model
class KeyToPath(Model):
    """Maps a string key to a path within a volume."""

    key: str | None = None  # required
    mode: int | None = None
    path: str | None = None  # required


@model
class Lifecycle(Model):
    """Lifecycle describes actions that the management system should take in response to con..."""

    post_start: LifecycleHandler | None = None
    pre_stop: LifecycleHandler | None = None


@model
class LifecycleHandler(Model):
    """LifecycleHandler defines a specific action that should be taken in a lifecycle hook."""

    exec: ExecAction | None = None
    http_get: HTTPGetAction | None = None
    sleep: SleepAction | None = None
    tcp_socket: TCPSocketAction | None = None


@model
class LimitRange(Resource):
    """LimitRange sets resource usage limits for each kind of resource in a Namespace."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "LimitRange"
    plural: ClassVar[str | None] = "limitranges"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: LimitRangeSpec | None = None


@model
class LimitRangeItem(Model):
    """LimitRangeItem defines a min/max usage limit for any resource that matches on kind."""

    default: dict[str, str] | None = None
    default_request: dict[str, str] | None = None
    max: dict[str, str] | None = None
    max_limit_request_ratio: dict[str, str] | None = None
    min: dict[str, str] | None = None
    type: str | None = None  # required


@model
class LimitRangeList(Model):
    """LimitRangeList is a list of LimitRange items."""

    api_version: str | None = None
    items: list[LimitRange] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class LimitRangeSpec(Model):
    """LimitRangeSpec defines a min/max usage limit for resources that match on kind."""

    limits: list[LimitRangeItem] | None = None  # required


@model
class LoadBalancerIngress(Model):
    """LoadBalancerIngress represents the status of a load-balancer ingress point: traffic i..."""

    hostname: str | None = None
    ip: str | None = None
    ip_mode: str | None = None
    ports: list[PortStatus] | None = None


@model
class LoadBalancerStatus(Model):
    """LoadBalancerStatus represents the status of a load-balancer."""

    ingress: list[LoadBalancerIngress] | None = None


@model
class LocalObjectReference(Model):
    """LocalObjectReference contains enough information to let you locate the referenced obj..."""

    name: str | None = None


@model
class LocalVolumeSource(Model):
    """Local represents directly-attached storage with node affinity (Beta feature)"""

    fs_type: str | None = None
    path: str | None = None  # required


@model
class ModifyVolumeStatus(Model):
    """ModifyVolumeStatus represents the status object of ControllerModifyVolume operation"""

    status: str | None = None  # required
    target_volume_attributes_class_name: str | None = None


@model
class NFSVolumeSource(Model):
    """Represents an NFS mount that lasts the lifetime of a pod."""

    path: str | None = None  # required
    read_only: bool | None = None
    server: str | None = None  # required


@model
class Namespace(Resource):
    """Namespace provides a scope for Names."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "Namespace"
    plural: ClassVar[str | None] = "namespaces"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: NamespaceSpec | None = None
    status: NamespaceStatus | None = None


@model
class NamespaceCondition(Model):
    """NamespaceCondition contains details about state of namespace."""

    last_transition_time: Time | None = None
    message: str | None = None
    reason: str | None = None
    status: str | None = None  # required
    type: str | None = None  # required


@model
class NamespaceList(Model):
    """NamespaceList is a list of Namespaces."""

    api_version: str | None = None
    items: list[Namespace] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class NamespaceSpec(Model):
    """NamespaceSpec describes the attributes on a Namespace."""

    finalizers: list[str] | None = None


@model
class NamespaceStatus(Model):
    """NamespaceStatus is information about the current status of a Namespace."""

    conditions: list[NamespaceCondition] | None = None
    phase: str | None = None


@model
class Node(Resource):
    """Node is a worker node in Kubernetes."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "Node"
    plural: ClassVar[str | None] = "nodes"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: NodeSpec | None = None
    status: NodeStatus | None = None


@model
class NodeAddress(Model):
    """NodeAddress contains information for the node's address."""

    address: str | None = None  # required
    type: str | None = None  # required


@model
class NodeAffinity(Model):
    """Node affinity is a group of node affinity scheduling rules."""

    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] | None = None
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None


@model
class NodeCondition(Model):
    """NodeCondition contains condition information for a node."""

    last_heartbeat_time: Time | None = None
    last_transition_time: Time | None = None
    message: str | None = None
    reason: str | None = None
    status: str | None = None  # required
    type: str | None = None  # required


@model
class NodeConfigSource(Model):
    """NodeConfigSource specifies a source of node configuration."""

    config_map: ConfigMapNodeConfigSource | None = None


@model
class NodeConfigStatus(Model):
    """NodeConfigStatus describes the status of the config assigned by Node.Spec.ConfigSource."""

    active: NodeConfigSource | None = None
    assigned: NodeConfigSource | None = None
    error: str | None = None
    last_known_good: NodeConfigSource | None = None


@model
class NodeDaemonEndpoints(Model):
    """NodeDaemonEndpoints lists ports opened by daemons running on the Node."""

    kubelet_endpoint: DaemonEndpoint | None = None


@model
class NodeList(Model):
    """NodeList is the whole list of all Nodes which have been registered with master."""

    api_version: str | None = None
    items: list[Node] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class NodeRuntimeHandler(Model):
    """NodeRuntimeHandler is a set of runtime handler information."""

    features: NodeRuntimeHandlerFeatures | None = None
    name: str | None = None


@model
class NodeRuntimeHandlerFeatures(Model):
    """NodeRuntimeHandlerFeatures is a set of runtime features."""

    recursive_read_only_mounts: bool | None = None


@model
class NodeSelector(Model):
    """A node selector represents the union of the results of one or more label queries over..."""

    node_selector_terms: list[NodeSelectorTerm] | None = None  # required


@model
class NodeSelectorRequirement(Model):
    """A node selector requirement is a selector that contains values, a key, and an operato..."""

    key: str | None = None  # required
    operator: str | None = None  # required
    values: list[str] | None = None


@model
class NodeSelectorTerm(Model):
    """A null or empty node selector term matches no objects."""

    match_expressions: list[NodeSelectorRequirement] | None = None
    match_fields: list[NodeSelectorRequirement] | None = None


@model
class NodeSpec(Model):
    """NodeSpec describes the attributes that a node is created with."""

    _wire: ClassVar[dict[str, str]] = {
        "external_id": "externalID",
        "pod_cidr": "podCIDR",
        "pod_cidrs": "podCIDRs",
        "provider_id": "providerID",
    }

    config_source: NodeConfigSource | None = None
    external_id: str | None = None
    pod_cidr: str | None = None
    pod_cidrs: list[str] | None = None
    provider_id: str | None = None
    taints: list[Taint] | None = None
    unschedulable: bool | None = None


@model
class NodeStatus(Model):
    """NodeStatus is information about the current status of a node."""

    addresses: list[NodeAddress] | None = None
    allocatable: dict[str, str] | None = None
    capacity: dict[str, str] | None = None
    conditions: list[NodeCondition] | None = None
    config: NodeConfigStatus | None = None
    daemon_endpoints: NodeDaemonEndpoints | None = None
    images: list[ContainerImage] | None = None
    node_info: NodeSystemInfo | None = None
    phase: str | None = None
    runtime_handlers: list[NodeRuntimeHandler] | None = None
    volumes_attached: list[AttachedVolume] | None = None
    volumes_in_use: list[str] | None = None


@model
class NodeSystemInfo(Model):
    """NodeSystemInfo is a set of ids/uuids to uniquely identify the node."""

    _wire: ClassVar[dict[str, str]] = {
        "boot_id": "bootID",
        "machine_id": "machineID",
        "system_uuid": "systemUUID",
    }

    architecture: str | None = None  # required
    boot_id: str | None = None  # required
    container_runtime_version: str | None = None  # required
    kernel_version: str | None = None  # required
    kube_proxy_version: str | None = None  # required
    kubelet_version: str | None = None  # required
    machine_id: str | None = None  # required
    operating_system: str | None = None  # required
    os_image: str | None = None  # required
    system_uuid: str | None = None  # required


@model
class ObjectFieldSelector(Model):
    """ObjectFieldSelector selects an APIVersioned field of an object."""

    api_version: str | None = None
    field_path: str | None = None  # required


@model
class ObjectReference(Model):
    """ObjectReference contains enough information to let you inspect or modify the referred..."""

    api_version: str | None = None
    field_path: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    resource_version: str | None = None
    uid: str | None = None


@model
class PersistentVolume(Resource):
    """PersistentVolume (PV) is a storage resource provisioned by an administrator."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "PersistentVolume"
    plural: ClassVar[str | None] = "persistentvolumes"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: PersistentVolumeSpec | None = None
    status: PersistentVolumeStatus | None = None


@model
class PersistentVolumeClaim(Resource):
    """PersistentVolumeClaim is a user's request for and claim to a persistent volume"""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "PersistentVolumeClaim"
    plural: ClassVar[str | None] = "persistentvolumeclaims"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: PersistentVolumeClaimSpec | None = None
    status: PersistentVolumeClaimStatus | None = None


@model
class PersistentVolumeClaimCondition(Model):
    """PersistentVolumeClaimCondition contains details about state of pvc"""

    last_probe_time: Time | None = None
    last_transition_time: Time | None = None
    message: str | None = None
    reason: str | None = None
    status: str | None = None  # required
    type: str | None = None  # required


@model
class PersistentVolumeClaimList(Model):
    """PersistentVolumeClaimList is a list of PersistentVolumeClaim items."""

    api_version: str | None = None
    items: list[PersistentVolumeClaim] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class PersistentVolumeClaimSpec(Model):
    """PersistentVolumeClaimSpec describes the common attributes of storage devices and allo..."""

    access_modes: list[str] | None = None
    data_source: TypedLocalObjectReference | None = None
    data_source_ref: TypedObjectReference | None = None
    resources: VolumeResourceRequirements | None = None
    selector: LabelSelector | None = None
    storage_class_name: str | None = None
    volume_attributes_class_name: str | None = None
    volume_mode: str | None = None
    volume_name: str | None = None


@model
class PersistentVolumeClaimStatus(Model):
    """PersistentVolumeClaimStatus is the current status of a persistent volume claim."""

    access_modes: list[str] | None = None
    allocated_resource_statuses: dict[str, str] | None = None
    allocated_resources: dict[str, str] | None = None
    capacity: dict[str, str] | None = None
    conditions: list[PersistentVolumeClaimCondition] | None = None
    current_volume_attributes_class_name: str | None = None
    modify_volume_status: ModifyVolumeStatus | None = None
    phase: str | None = None


@model
class PersistentVolumeClaimTemplate(Model):
    """PersistentVolumeClaimTemplate is used to produce PersistentVolumeClaim objects as par..."""

    metadata: ObjectMeta | None = None
    spec: PersistentVolumeClaimSpec | None = None  # required


@model
class PersistentVolumeClaimVolumeSource(Model):
    """PersistentVolumeClaimVolumeSource references the user's PVC in the same namespace."""

    claim_name: str | None = None  # required
    read_only: bool | None = None


@model
class PersistentVolumeList(Model):
    """PersistentVolumeList is a list of PersistentVolume items."""

    api_version: str | None = None
    items: list[PersistentVolume] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class PersistentVolumeSpec(Model):
    """PersistentVolumeSpec is the specification of a persistent volume."""

    _wire: ClassVar[dict[str, str]] = {"scale_io": "scaleIO"}

    access_modes: list[str] | None = None
    aws_elastic_block_store: AWSElasticBlockStoreVolumeSource | None = None
    azure_disk: AzureDiskVolumeSource | None = None
    azure_file: AzureFilePersistentVolumeSource | None = None
    capacity: dict[str, str] | None = None
    cephfs: CephFSPersistentVolumeSource | None = None
    cinder: CinderPersistentVolumeSource | None = None
    claim_ref: ObjectReference | None = None
    csi: CSIPersistentVolumeSource | None = None
    fc: FCVolumeSource | None = None
    flex_volume: FlexPersistentVolumeSource | None = None
    flocker: FlockerVolumeSource | None = None
    gce_persistent_disk: GCEPersistentDiskVolumeSource | None = None
    glusterfs: GlusterfsPersistentVolumeSource | None = None
    host_path: HostPathVolumeSource | None = None
    iscsi: ISCSIPersistentVolumeSource | None = None
    local: LocalVolumeSource | None = None
    mount_options: list[str] | None = None
    nfs: NFSVolumeSource | None = None
    node_affinity: VolumeNodeAffinity | None = None
    persistent_volume_reclaim_policy: str | None = None
    photon_persistent_disk: PhotonPersistentDiskVolumeSource | None = None
    portworx_volume: PortworxVolumeSource | None = None
    quobyte: QuobyteVolumeSource | None = None
    rbd: RBDPersistentVolumeSource | None = None
    scale_io: ScaleIOPersistentVolumeSource | None = None
    storage_class_name: str | None = None
    storageos: StorageOSPersistentVolumeSource | None = None
    volume_attributes_class_name: str | None = None
    volume_mode: str | None = None
    vsphere_volume: VsphereVirtualDiskVolumeSource | None = None


@model
class PersistentVolumeStatus(Model):
    """PersistentVolumeStatus is the current status of a persistent volume."""

    last_phase_transition_time: Time | None = None
    message: str | None = None
    phase: str | None = None
    reason: str | None = None


@model
class PhotonPersistentDiskVolumeSource(Model):
    """Represents a Photon Controller persistent disk resource."""

    _wire: ClassVar[dict[str, str]] = {"pd_id": "pdID"}

    fs_type: str | None = None
    pd_id: str | None = None  # required


@model
class Pod(Resource):
    """Pod is a collection of containers that can run on a host."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "Pod"
    plural: ClassVar[str | None] = "pods"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: PodSpec | None = None
    status: PodStatus | None = None


@model
class PodAffinity(Model):
    """Pod affinity is a group of inter pod affinity scheduling rules."""

    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] | None = None
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] | None = None


@model
class PodAffinityTerm(Model):
    """Defines a set of pods (namely those matching the labelSelector relative to the given..."""

    label_selector: LabelSelector | None = None
    match_label_keys: list[str] | None = None
    mismatch_label_keys: list[str] | None = None
    namespace_selector: LabelSelector | None = None
    namespaces: list[str] | None = None
    topology_key: str | None = None  # required


@model
class PodAntiAffinity(Model):
    """Pod anti affinity is a group of inter pod anti affinity scheduling rules."""

    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] | None = None
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] | None = None


@model
class PodCondition(Model):
    """PodCondition contains details for the current condition of this pod."""

    last_probe_time: Time | None = None
    last_transition_time: Time | None = None
    message: str | None = None
    reason: str | None = None
    status: str | None = None  # required
    type: str | None = None  # required


@model
class PodDNSConfig(Model):
    """PodDNSConfig defines the DNS parameters of a pod in addition to those generated from..."""

    nameservers: list[str] | None = None
    options: list[PodDNSConfigOption] | None = None
    searches: list[str] | None = None


@model
class PodDNSConfigOption(Model):
    """PodDNSConfigOption defines DNS resolver options of a pod."""

    name: str | None = None
    value: str | None = None


@model
class PodIP(Model):
    """PodIP represents a single IP address allocated to the pod."""

    ip: str | None = None


@model
class PodList(Model):
    """PodList is a list of Pods."""

    api_version: str | None = None
    items: list[Pod] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class PodOS(Model):
    """PodOS defines the OS parameters of a pod."""

    name: str | None = None  # required


@model
class PodReadinessGate(Model):
    """PodReadinessGate contains the reference to a pod condition"""

    condition_type: str | None = None  # required


@model
class PodResourceClaim(Model):
    """PodResourceClaim references exactly one ResourceClaim through a ClaimSource."""

    name: str | None = None  # required
    source: ClaimSource | None = None


@model
class PodResourceClaimStatus(Model):
    """PodResourceClaimStatus is stored in the PodStatus for each PodResourceClaim which ref..."""

    name: str | None = None  # required
    resource_claim_name: str | None = None


@model
class PodSchedulingGate(Model):
    """PodSchedulingGate is associated to a Pod to guard its scheduling."""

    name: str | None = None  # required


@model
class PodSecurityContext(Model):
    """PodSecurityContext holds pod-level security attributes and common container settings."""

    app_armor_profile: AppArmorProfile | None = None
    fs_group: int | None = None
    fs_group_change_policy: str | None = None
    run_as_group: int | None = None
    run_as_non_root: bool | None = None
    run_as_user: int | None = None
    se_linux_options: SELinuxOptions | None = None
    seccomp_profile: SeccompProfile | None = None
    supplemental_groups: list[int] | None = None
    sysctls: list[Sysctl] | None = None
    windows_options: WindowsSecurityContextOptions | None = None


@model
class PodSpec(Model):
    """PodSpec is a description of a pod."""

    _wire: ClassVar[dict[str, str]] = {
        "host_ipc": "hostIPC",
        "host_pid": "hostPID",
        "set_hostname_as_fqdn": "setHostnameAsFQDN",
    }

    active_deadline_seconds: int | None = None
    affinity: Affinity | None = None
    automount_service_account_token: bool | None = None
    containers: list[Container] | None = None  # required
    dns_config: PodDNSConfig | None = None
    dns_policy: str | None = None
    enable_service_links: bool | None = None
    ephemeral_containers: list[EphemeralContainer] | None = None
    host_aliases: list[HostAlias] | None = None
    host_ipc: bool | None = None
    host_network: bool | None = None
    host_pid: bool | None = None
    host_users: bool | None = None
    hostname: str | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    init_containers: list[Container] | None = None
    node_name: str | None = None
    node_selector: dict[str, str] | None = None
    os: PodOS | None = None
    overhead: dict[str, str] | None = None
    preemption_policy: str | None = None
    priority: int | None = None
    priority_class_name: str | None = None
    readiness_gates: list[PodReadinessGate] | None = None
    resource_claims: list[PodResourceClaim] | None = None
    restart_policy: str | None = None
    runtime_class_name: str | None = None
    scheduler_name: str | None = None
    scheduling_gates: list[PodSchedulingGate] | None = None
    security_context: PodSecurityContext | None = None
    service_account: str | None = None
    service_account_name: str | None = None
    set_hostname_as_fqdn: bool | None = None
    share_process_namespace: bool | None = None
    subdomain: str | None = None
    termination_grace_period_seconds: int | None = None
    tolerations: list[Toleration] | None = None
    topology_spread_constraints: list[TopologySpreadConstraint] | None = None
    volumes: list[Volume] | None = None


@model
class PodStatus(Model):
    """PodStatus represents information about the status of a pod."""

    _wire: ClassVar[dict[str, str]] = {
        "host_ip": "hostIP",
        "host_ips": "hostIPs",
        "pod_ip": "podIP",
        "pod_ips": "podIPs",
    }

    conditions: list[PodCondition] | None = None
    container_statuses: list[ContainerStatus] | None = None
    ephemeral_container_statuses: list[ContainerStatus] | None = None
    host_ip: str | None = None
    host_ips: list[HostIP] | None = None
    init_container_statuses: list[ContainerStatus] | None = None
    message: str | None = None
    nominated_node_name: str | None = None
    phase: str | None = None
    pod_ip: str | None = None
    pod_ips: list[PodIP] | None = None
    qos_class: str | None = None
    reason: str | None = None
    resize: str | None = None
    resource_claim_statuses: list[PodResourceClaimStatus] | None = None
    start_time: Time | None = None


@model
class PodTemplate(Resource):
    """PodTemplate describes a template for creating copies of a predefined pod."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "PodTemplate"
    plural: ClassVar[str | None] = "podtemplates"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    template: PodTemplateSpec | None = None


@model
class PodTemplateList(Model):
    """PodTemplateList is a list of PodTemplates."""

    api_version: str | None = None
    items: list[PodTemplate] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class PodTemplateSpec(Model):
    """PodTemplateSpec describes the data a pod should have when created from a template"""

    metadata: ObjectMeta | None = None
    spec: PodSpec | None = None


@model
class PortStatus(Model):
    """PortStatus"""

    error: str | None = None
    port: int | None = None  # required
    protocol: str | None = None  # required


@model
class PortworxVolumeSource(Model):
    """PortworxVolumeSource represents a Portworx volume resource."""

    _wire: ClassVar[dict[str, str]] = {"volume_id": "volumeID"}

    fs_type: str | None = None
    read_only: bool | None = None
    volume_id: str | None = None  # required


@model
class PreferredSchedulingTerm(Model):
    """An empty preferred scheduling term matches all objects with implicit weight 0 (i.e."""

    preference: NodeSelectorTerm | None = None  # required
    weight: int | None = None  # required


@model
class Probe(Model):
    """Probe describes a health check to be performed against a container to determine wheth..."""

    exec: ExecAction | None = None
    failure_threshold: int | None = None
    grpc: GRPCAction | None = None
    http_get: HTTPGetAction | None = None
    initial_delay_seconds: int | None = None
    period_seconds: int | None = None
    success_threshold: int | None = None
    tcp_socket: TCPSocketAction | None = None
    termination_grace_period_seconds: int | None = None
    timeout_seconds: int | None = None


@model
class ProjectedVolumeSource(Model):
    """Represents a projected volume source"""

    default_mode: int | None = None
    sources: list[VolumeProjection] | None = None


@model
class QuobyteVolumeSource(Model):
    """Represents a Quobyte mount that lasts the lifetime of a pod."""

    group: str | None = None
    read_only: bool | None = None
    registry: str | None = None  # required
    tenant: str | None = None
    user: str | None = None
    volume: str | None = None  # required


@model
class RBDPersistentVolumeSource(Model):
    """Represents a Rados Block Device mount that lasts the lifetime of a pod."""

    fs_type: str | None = None
    image: str | None = None  # required
    keyring: str | None = None
    monitors: list[str] | None = None  # required
    pool: str | None = None
    read_only: bool | None = None
    secret_ref: SecretReference | None = None
    user: str | None = None


@model
class RBDVolumeSource(Model):
    """Represents a Rados Block Device mount that lasts the lifetime of a pod."""

    fs_type: str | None = None
    image: str | None = None  # required
    keyring: str | None = None
    monitors: list[str] | None = None  # required
    pool: str | None = None
    read_only: bool | None = None
    secret_ref: LocalObjectReference | None = None
    user: str | None = None


@model
class ReplicationController(Resource):
    """ReplicationController represents the configuration of a replication controller."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "ReplicationController"
    plural: ClassVar[str | None] = "replicationcontrollers"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: ReplicationControllerSpec | None = None
    status: ReplicationControllerStatus | None = None


@model
class ReplicationControllerCondition(Model):
    """ReplicationControllerCondition describes the state of a replication controller at a c..."""

    last_transition_time: Time | None = None
    message: str | None = None
    reason: str | None = None
    status: str | None = None  # required
    type: str | None = None  # required


@model
class ReplicationControllerList(Model):
    """ReplicationControllerList is a collection of replication controllers."""

    api_version: str | None = None
    items: list[ReplicationController] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class ReplicationControllerSpec(Model):
    """ReplicationControllerSpec is the specification of a replication controller."""

    min_ready_seconds: int | None = None
    replicas: int | None = None
    selector: dict[str, str] | None = None
    template: PodTemplateSpec | None = None


@model
class ReplicationControllerStatus(Model):
    """ReplicationControllerStatus represents the current status of a replication controller."""

    available_replicas: int | None = None
    conditions: list[ReplicationControllerCondition] | None = None
    fully_labeled_replicas: int | None = None
    observed_generation: int | None = None
    ready_replicas: int | None = None
    replicas: int | None = None  # required


@model
class ResourceClaim(Model):
    """ResourceClaim references one entry in PodSpec.ResourceClaims."""

    name: str | None = None  # required


@model
class ResourceFieldSelector(Model):
    """ResourceFieldSelector represents container resources (cpu, memory) and their output f..."""

    container_name: str | None = None
    divisor: str | None = None
    resource: str | None = None  # required


@model
class ResourceQuota(Resource):
    """ResourceQuota sets aggregate quota restrictions enforced per namespace"""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "ResourceQuota"
    plural: ClassVar[str | None] = "resourcequotas"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: ResourceQuotaSpec | None = None
    status: ResourceQuotaStatus | None = None


@model
class ResourceQuotaList(Model):
    """ResourceQuotaList is a list of ResourceQuota items."""

    api_version: str | None = None
    items: list[ResourceQuota] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class ResourceQuotaSpec(Model):
    """ResourceQuotaSpec defines the desired hard limits to enforce for Quota."""

    hard: dict[str, str] | None = None
    scope_selector: ScopeSelector | None = None
    scopes: list[str] | None = None


@model
class ResourceQuotaStatus(Model):
    """ResourceQuotaStatus defines the enforced hard limits and observed use."""

    hard: dict[str, str] | None = None
    used: dict[str, str] | None = None


@model
class ResourceRequirements(Model):
    """ResourceRequirements describes the compute resource requirements."""

    claims: list[ResourceClaim] | None = None
    limits: dict[str, str] | None = None
    requests: dict[str, str] | None = None


@model
class SELinuxOptions(Model):
    """SELinuxOptions are the labels to be applied to the container"""

    level: str | None = None
    role: str | None = None
    type: str | None = None
    user: str | None = None


@model
class ScaleIOPersistentVolumeSource(Model):
    """ScaleIOPersistentVolumeSource represents a persistent ScaleIO volume"""

    fs_type: str | None = None
    gateway: str | None = None  # required
    protection_domain: str | None = None
    read_only: bool | None = None
    secret_ref: SecretReference | None = None  # required
    ssl_enabled: bool | None = None
    storage_mode: str | None = None
    storage_pool: str | None = None
    system: str | None = None  # required
    volume_name: str | None = None


@model
class ScaleIOVolumeSource(Model):
    """ScaleIOVolumeSource represents a persistent ScaleIO volume"""

    fs_type: str | None = None
    gateway: str | None = None  # required
    protection_domain: str | None = None
    read_only: bool | None = None
    secret_ref: LocalObjectReference | None = None  # required
    ssl_enabled: bool | None = None
    storage_mode: str | None = None
    storage_pool: str | None = None
    system: str | None = None  # required
    volume_name: str | None = None


@model
class ScopeSelector(Model):
    """A scope selector represents the AND of the selectors represented by the scoped-resour..."""

    match_expressions: list[ScopedResourceSelectorRequirement] | None = None


@model
class ScopedResourceSelectorRequirement(Model):
    """A scoped-resource selector requirement is a selector that contains values, a scope na..."""

    operator: str | None = None  # required
    scope_name: str | None = None  # required
    values: list[str] | None = None


@model
class SeccompProfile(Model):
    """SeccompProfile defines a pod/container's seccomp profile settings."""

    localhost_profile: str | None = None
    type: str | None = None  # required


@model
class Secret(Resource):
    """Secret holds secret data of a certain type."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "Secret"
    plural: ClassVar[str | None] = "secrets"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    data: dict[str, str] | None = None
    immutable: bool | None = None
    metadata: ObjectMeta | None = None
    string_data: dict[str, str] | None = None
    type: str | None = None


@model
class SecretEnvSource(Model):
    """SecretEnvSource selects a Secret to populate the environment variables with."""

    name: str | None = None
    optional: bool | None = None


@model
class SecretKeySelector(Model):
    """SecretKeySelector selects a key of a Secret."""

    key: str | None = None  # required
    name: str | None = None
    optional: bool | None = None


@model
class SecretList(Model):
    """SecretList is a list of Secret."""

    api_version: str | None = None
    items: list[Secret] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class SecretProjection(Model):
    """Adapts a secret into a projected volume."""

    items: list[KeyToPath] | None = None
    name: str | None = None
    optional: bool | None = None


@model
class SecretReference(Model):
    """SecretReference represents a Secret Reference."""

    name: str | None = None
    namespace: str | None = None


@model
class SecretVolumeSource(Model):
    """Adapts a Secret into a volume."""

    default_mode: int | None = None
    items: list[KeyToPath] | None = None
    optional: bool | None = None
    secret_name: str | None = None


@model
class SecurityContext(Model):
    """SecurityContext holds security configuration that will be applied to a container."""

    allow_privilege_escalation: bool | None = None
    app_armor_profile: AppArmorProfile | None = None
    capabilities: Capabilities | None = None
    privileged: bool | None = None
    proc_mount: str | None = None
    read_only_root_filesystem: bool | None = None
    run_as_group: int | None = None
    run_as_non_root: bool | None = None
    run_as_user: int | None = None
    se_linux_options: SELinuxOptions | None = None
    seccomp_profile: SeccompProfile | None = None
    windows_options: WindowsSecurityContextOptions | None = None


@model
class Service(Resource):
    """Service is a named abstraction of software service (for example, mysql) consisting of..."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "Service"
    plural: ClassVar[str | None] = "services"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: ServiceSpec | None = None
    status: ServiceStatus | None = None


@model
class ServiceAccount(Resource):
    """ServiceAccount binds together: * a name, understood by users, and perhaps by peripher..."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "ServiceAccount"
    plural: ClassVar[str | None] = "serviceaccounts"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = ""
    version: ClassVar[str] = "v1"

    automount_service_account_token: bool | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    metadata: ObjectMeta | None = None
    secrets: list[ObjectReference] | None = None


@model
class ServiceAccountList(Model):
    """ServiceAccountList is a list of ServiceAccount objects"""

    api_version: str | None = None
    items: list[ServiceAccount] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class ServiceAccountTokenProjection(Model):
    """ServiceAccountTokenProjection represents a projected service account token volume."""

    audience: str | None = None
    expiration_seconds: int | None = None
    path: str | None = None  # required


@model
class ServiceList(Model):
    """ServiceList holds a list of services."""

    api_version: str | None = None
    items: list[Service] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class ServicePort(Model):
    """ServicePort contains information on service's port."""

    app_protocol: str | None = None
    name: str | None = None
    node_port: int | None = None
    port: int | None = None  # required
    protocol: str | None = None
    target_port: int | str | None = None


@model
class ServiceSpec(Model):
    """ServiceSpec describes the attributes that a user creates on a service."""

    _wire: ClassVar[dict[str, str]] = {
        "cluster_ip": "clusterIP",
        "cluster_ips": "clusterIPs",
        "external_ips": "externalIPs",
        "load_balancer_ip": "loadBalancerIP",
    }

    allocate_load_balancer_node_ports: bool | None = None
    cluster_ip: str | None = None
    cluster_ips: list[str] | None = None
    external_ips: list[str] | None = None
    external_name: str | None = None
    external_traffic_policy: str | None = None
    health_check_node_port: int | None = None
    internal_traffic_policy: str | None = None
    ip_families: list[str] | None = None
    ip_family_policy: str | None = None
    load_balancer_class: str | None = None
    load_balancer_ip: str | None = None
    load_balancer_source_ranges: list[str] | None = None
    ports: list[ServicePort] | None = None
    publish_not_ready_addresses: bool | None = None
    selector: dict[str, str] | None = None
    session_affinity: str | None = None
    session_affinity_config: SessionAffinityConfig | None = None
    traffic_distribution: str | None = None
    type: str | None = None


@model
class ServiceStatus(Model):
    """ServiceStatus represents the current status of a service."""

    conditions: list[Condition] | None = None
    load_balancer: LoadBalancerStatus | None = None


@model
class SessionAffinityConfig(Model):
    """SessionAffinityConfig represents the configurations of session affinity."""

    _wire: ClassVar[dict[str, str]] = {"client_ip": "clientIP"}

    client_ip: ClientIPConfig | None = None


@model
class SleepAction(Model):
    """SleepAction describes a "sleep" action."""

    seconds: int | None = None  # required


@model
class StorageOSPersistentVolumeSource(Model):
    """Represents a StorageOS persistent volume resource."""

    fs_type: str | None = None
    read_only: bool | None = None
    secret_ref: ObjectReference | None = None
    volume_name: str | None = None
    volume_namespace: str | None = None


@model
class StorageOSVolumeSource(Model):
    """Represents a StorageOS persistent volume resource."""

    fs_type: str | None = None
    read_only: bool | None = None
    secret_ref: LocalObjectReference | None = None
    volume_name: str | None = None
    volume_namespace: str | None = None


@model
class Sysctl(Model):
    """Sysctl defines a kernel parameter to be set"""

    name: str | None = None  # required
    value: str | None = None  # required


@model
class TCPSocketAction(Model):
    """TCPSocketAction describes an action based on opening a socket"""

    host: str | None = None
    port: int | str | None = None  # required


@model
class Taint(Model):
    """The node this Taint is attached to has the "effect" on any pod that does not tolerate..."""

    effect: str | None = None  # required
    key: str | None = None  # required
    time_added: Time | None = None
    value: str | None = None


@model
class Toleration(Model):
    """The pod this Toleration is attached to tolerates any taint that matches the triple <k..."""

    effect: str | None = None
    key: str | None = None
    operator: str | None = None
    toleration_seconds: int | None = None
    value: str | None = None


@model
class TopologySelectorLabelRequirement(Model):
    """A topology selector requirement is a selector that matches given label."""

    key: str | None = None  # required
    values: list[str] | None = None  # required


@model
class TopologySelectorTerm(Model):
    """A topology selector term represents the result of label queries."""

    match_label_expressions: list[TopologySelectorLabelRequirement] | None = None


@model
class TopologySpreadConstraint(Model):
    """TopologySpreadConstraint specifies how to spread matching pods among the given topology."""

    label_selector: LabelSelector | None = None
    match_label_keys: list[str] | None = None
    max_skew: int | None = None  # required
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    topology_key: str | None = None  # required
    when_unsatisfiable: str | None = None  # required


@model
class TypedLocalObjectReference(Model):
    """TypedLocalObjectReference contains enough information to let you locate the typed ref..."""

    api_group: str | None = None
    kind: str | None = None  # required
    name: str | None = None  # required


@model
class TypedObjectReference(Model):
    """TypedObjectReference"""

    api_group: str | None = None
    kind: str | None = None  # required
    name: str | None = None  # required
    namespace: str | None = None


@model
class Volume(Model):
    """Volume represents a named volume in a pod that may be accessed by any container in th..."""

    _wire: ClassVar[dict[str, str]] = {"downward_api": "downwardAPI", "scale_io": "scaleIO"}

    aws_elastic_block_store: AWSElasticBlockStoreVolumeSource | None = None
    azure_disk: AzureDiskVolumeSource | None = None
    azure_file: AzureFileVolumeSource | None = None
    cephfs: CephFSVolumeSource | None = None
    cinder: CinderVolumeSource | None = None
    config_map: ConfigMapVolumeSource | None = None
    csi: CSIVolumeSource | None = None
    downward_api: DownwardAPIVolumeSource | None = None
    empty_dir: EmptyDirVolumeSource | None = None
    ephemeral: EphemeralVolumeSource | None = None
    fc: FCVolumeSource | None = None
    flex_volume: FlexVolumeSource | None = None
    flocker: FlockerVolumeSource | None = None
    gce_persistent_disk: GCEPersistentDiskVolumeSource | None = None
    git_repo: GitRepoVolumeSource | None = None
    glusterfs: GlusterfsVolumeSource | None = None
    host_path: HostPathVolumeSource | None = None
    iscsi: ISCSIVolumeSource | None = None
    name: str | None = None  # required
    nfs: NFSVolumeSource | None = None
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None
    photon_persistent_disk: PhotonPersistentDiskVolumeSource | None = None
    portworx_volume: PortworxVolumeSource | None = None
    projected: ProjectedVolumeSource | None = None
    quobyte: QuobyteVolumeSource | None = None
    rbd: RBDVolumeSource | None = None
    scale_io: ScaleIOVolumeSource | None = None
    secret: SecretVolumeSource | None = None
    storageos: StorageOSVolumeSource | None = None
    vsphere_volume: VsphereVirtualDiskVolumeSource | None = None


@model
class VolumeDevice(Model):
    """volumeDevice describes a mapping of a raw block device within a container."""

    device_path: str | None = None  # required
    name: str | None = None  # required


@model
class VolumeMount(Model):
    """VolumeMount describes a mounting of a Volume within a container."""

    mount_path: str | None = None  # required
    mount_propagation: str | None = None
    name: str | None = None  # required
    read_only: bool | None = None
    recursive_read_only: str | None = None
    sub_path: str | None = None
    sub_path_expr: str | None = None


@model
class VolumeMountStatus(Model):
    """VolumeMountStatus shows status of volume mounts."""

    mount_path: str | None = None  # required
    name: str | None = None  # required
    read_only: bool | None = None
    recursive_read_only: str | None = None


@model
class VolumeNodeAffinity(Model):
    """VolumeNodeAffinity defines constraints that limit what nodes this volume can be acces..."""

    required: NodeSelector | None = None


@model
class VolumeProjection(Model):
    """Projection that may be projected along with other supported volume types"""

    _wire: ClassVar[dict[str, str]] = {"downward_api": "downwardAPI"}

    cluster_trust_bundle: ClusterTrustBundleProjection | None = None
    config_map: ConfigMapProjection | None = None
    downward_api: DownwardAPIProjection | None = None
    secret: SecretProjection | None = None
    service_account_token: ServiceAccountTokenProjection | None = None


@model
class VolumeResourceRequirements(Model):
    """VolumeResourceRequirements describes the storage resource requirements for a volume."""

    limits: dict[str, str] | None = None
    requests: dict[str, str] | None = None


@model
class VsphereVirtualDiskVolumeSource(Model):
    """Represents a vSphere volume resource."""

    _wire: ClassVar[dict[str, str]] = {"storage_policy_id": "storagePolicyID"}

    fs_type: str | None = None
    storage_policy_id: str | None = None
    storage_policy_name: str | None = None
    volume_path: str | None = None  # required


@model
class WeightedPodAffinityTerm(Model):
    """The weights of all of the matched WeightedPodAffinityTerm fields are added per-node t..."""

    pod_affinity_term: PodAffinityTerm | None = None  # required
    weight: int | None = None  # required


@model
class WindowsSecurityContextOptions(Model):
    """WindowsSecurityContextOptions contain Windows-specific options and credentials."""

    gmsa_credential_spec: str | None = None
    gmsa_credential_spec_name: str | None = None
    host_process: bool | None = None
    run_as_user_name: str | None = None
