"""Generated models of networking/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

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
from cloudcoil_cache.models.kubernetes.core.v1 import (
    TypedLocalObjectReference,
)

__all__ = [
    "HTTPIngressPath",
    "HTTPIngressRuleValue",
    "IPBlock",
    "Ingress",
    "IngressBackend",
    "IngressClass",
    "IngressClassList",
    "IngressClassParametersReference",
    "IngressClassSpec",
    "IngressList",
    "IngressLoadBalancerIngress",
    "IngressLoadBalancerStatus",
    "IngressPortStatus",
    "IngressRule",
    "IngressServiceBackend",
    "IngressSpec",
    "IngressStatus",
    "IngressTLS",
    "NetworkPolicy",
    "NetworkPolicyEgressRule",
    "NetworkPolicyIngressRule",
    "NetworkPolicyList",
    "NetworkPolicyPeer",
    "NetworkPolicyPort",
    "NetworkPolicySpec",
    "ServiceBackendPort",
]


@model
class HTTPIngressPath(Model):
    """HTTPIngressPath associates a path with a backend."""

    backend: IngressBackend | None = None  # required
    path: str | None = None
    path_type: str | None = None  # required


@model
class HTTPIngressRuleValue(Model):
    """HTTPIngressRuleValue is a list of http selectors pointing to backends."""

    paths: list[HTTPIngressPath] | None = None  # required


@model
class IPBlock(Model):
    """IPBlock describes a particular CIDR (Ex."""

    cidr: str | None = None  # required
    except_: list[str] | None = None


@model
class Ingress(Resource):
    """Ingress is a collection of rules that allow inbound connections to reach the endpoint..."""

    api_version: ClassVar[str] = "networking.k8s.io/v1"
    kind: ClassVar[str] = "Ingress"
    plural: ClassVar[str | None] = "ingresses"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "networking.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: IngressSpec | None = None
    status: IngressStatus | None = None


@model
class IngressBackend(Model):
    """IngressBackend describes all endpoints for a given service and port."""

    resource: TypedLocalObjectReference | None = None
    service: IngressServiceBackend | None = None


@model
class IngressClass(Resource):
    """IngressClass represents the class of the Ingress, referenced by the Ingress Spec."""

    api_version: ClassVar[str] = "networking.k8s.io/v1"
    kind: ClassVar[str] = "IngressClass"
    plural: ClassVar[str | None] = "ingressclasses"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "networking.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: IngressClassSpec | None = None


@model
class IngressClassList(Model):
    """IngressClassList is a collection of IngressClasses."""

    api_version: str | None = None
    items: list[IngressClass] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class IngressClassParametersReference(Model):
    """IngressClassParametersReference identifies an API object."""

    api_group: str | None = None
    kind: str | None = None  # required
    name: str | None = None  # required
    namespace: str | None = None
    scope: str | None = None


@model
class IngressClassSpec(Model):
    """IngressClassSpec provides information about the class of an Ingress."""

    controller: str | None = None
    parameters: IngressClassParametersReference | None = None


@model
class IngressList(Model):
    """IngressList is a collection of Ingress."""

    api_version: str | None = None
    items: list[Ingress] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class IngressLoadBalancerIngress(Model):
    """IngressLoadBalancerIngress represents the status of a load-balancer ingress point."""

    hostname: str | None = None
    ip: str | None = None
    ports: list[IngressPortStatus] | None = None


@model
class IngressLoadBalancerStatus(Model):
    """IngressLoadBalancerStatus represents the status of a load-balancer."""

    ingress: list[IngressLoadBalancerIngress] | None = None


@model
class IngressPortStatus(Model):
    """IngressPortStatus represents the error condition of a service port"""

    error: str | None = None
    port: int | None = None  # required
    protocol: str | None = None  # required


@model
class IngressRule(Model):
    """IngressRule represents the rules mapping the paths under a specified host to the rela..."""

    host: str | None = None
    http: HTTPIngressRuleValue | None = None


@model
class IngressServiceBackend(Model):
    """IngressServiceBackend references a Kubernetes Service as a Backend."""

    name: str | None = None  # required
    port: ServiceBackendPort | None = None


@model
class IngressSpec(Model):
    """IngressSpec describes the Ingress the user wishes to exist."""

    default_backend: IngressBackend | None = None
    ingress_class_name: str | None = None
    rules: list[IngressRule] | None = None
    tls: list[IngressTLS] | None = None


@model
class IngressStatus(Model):
    """IngressStatus describe the current state of the Ingress."""

    load_balancer: IngressLoadBalancerStatus | None = None


@model
class IngressTLS(Model):
    """IngressTLS describes the transport layer security associated with an ingress."""

    hosts: list[str] | None = None
    secret_name: str | None = None


@model
class NetworkPolicy(Resource):
    """NetworkPolicy describes what network traffic is allowed for a set of Pods"""

    api_version: ClassVar[str] = "networking.k8s.io/v1"
    kind: ClassVar[str] = "NetworkPolicy"
    plural: ClassVar[str | None] = "networkpolicies"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "networking.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: NetworkPolicySpec | None = None


@model
class NetworkPolicyEgressRule(Model):
    """NetworkPolicyEgressRule describes a particular set of traffic that is allowed out of..."""

    ports: list[NetworkPolicyPort] | None = None
    to: list[NetworkPolicyPeer] | None = None


@model
class NetworkPolicyIngressRule(Model):
    """NetworkPolicyIngressRule describes a particular set of traffic that is allowed to the..."""

    from_: list[NetworkPolicyPeer] | None = None
    ports: list[NetworkPolicyPort] | None = None


@model
class NetworkPolicyList(Model):
    """NetworkPolicyList is a list of NetworkPolicy objects."""

    api_version: str | None = None
    items: list[NetworkPolicy] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class NetworkPolicyPeer(Model):
    """NetworkPolicyPeer describes a peer to allow traffic to/from."""

    ip_block: IPBlock | None = None
    namespace_selector: LabelSelector | None = None
    pod_selector: LabelSelector | None = None


@model
class NetworkPolicyPort(Model):
    """NetworkPolicyPort describes a port to allow traffic on"""

    end_port: int | None = None
    port: int | str | None = None
    protocol: str | None = None


@model
class NetworkPolicySpec(Model):
    """NetworkPolicySpec provides the specification of a NetworkPolicy"""

    egress: list[NetworkPolicyEgressRule] | None = None
    ingress: list[NetworkPolicyIngressRule] | None = None
    pod_selector: LabelSelector | None = None  # required
    policy_types: list[str] | None = None


@model
class ServiceBackendPort(Model):
    """ServiceBackendPort is the service port being referenced."""

    name: str | None = None
    number: int | None = None
