"""The objects a fake cluster starts with: the system namespaces and the ``default/kubernetes`` Service."""

from __future__ import annotations

from typing import Any

from ..machinery.fields import update_managed
from ..machinery.resources import ResourceRegistry
from ..storage.store import Store

__all__ = ["KUBERNETES_SERVICE_IP", "SYSTEM_NAMESPACES", "preload_cluster"]

SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
# The first address of the service range (kubeadm's and kind's 10.96.0.0/12).
KUBERNETES_SERVICE_IP = "10.96.0.1"
# The port kube-apiserver listens on in kubeadm and kind clusters (the Service's targetPort).
_SECURE_PORT = 6443
# The field manager of the objects kube-apiserver itself writes.
_MANAGER = "kube-apiserver"


def _kubernetes_service() -> dict[str, Any]:
    """The Service kube-apiserver's bootstrap controller keeps in ``default``."""
    return {
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": _SECURE_PORT}],
            "clusterIP": KUBERNETES_SERVICE_IP,
            "clusterIPs": [KUBERNETES_SERVICE_IP],
            "type": "ClusterIP",
            "sessionAffinity": "None",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "internalTrafficPolicy": "Cluster",
        },
        "status": {"loadBalancer": {}},
    }


def preload_cluster(store: Store, registry: ResourceRegistry, *, namespaces: bool) -> None:
    """Store what exists before any history (revision 1, no events): the ``default/kubernetes``
    Service and, with ``namespaces``, the four system namespaces."""
    if namespaces:
        ns_type = registry.get("", "v1", "namespaces")
        assert ns_type is not None
        for name in SYSTEM_NAMESPACES:
            store.preload(
                ns_type,
                {
                    "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
                    "spec": {"finalizers": ["kubernetes"]},
                    "status": {"phase": "Active"},
                },
            )
    svc_type = registry.get("", "v1", "services")
    assert svc_type is not None
    service = _kubernetes_service()
    # The bootstrap controller writes the Service without the fields the allocator fills in.
    written = {**service, "spec": {k: v for k, v in service["spec"].items() if k not in ("clusterIPs", "ipFamilies")}}
    update_managed(
        None, written, svc_type.schema_node(), manager=_MANAGER, api_version="v1", has_status=svc_type.has_status
    )
    service["metadata"] = written["metadata"]
    store.preload(svc_type, service)
