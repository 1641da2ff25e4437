"""Realistic, deterministic Kubernetes objects for tests and benchmarks (a Pod is ~6.5 KB JSON)."""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

__all__ = [
    "make_configmap",
    "make_deployment",
    "make_node",
    "make_pod",
    "make_replica_set",
    "owner_name",
    "seeded_apps",
    "seeded_pod",
]

_APPS = ("web", "api", "worker", "cache", "gateway", "scheduler", "indexer", "billing")
_PHASES = ("Running", "Running", "Running", "Running", "Running", "Running", "Pending", "Succeeded")


def _hex(seed: str, n: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def _uid(seed: str) -> str:
    h = _hex(seed, 32)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _ts(index: int, offset: int = 0) -> str:
    seconds = (index * 37 + offset) % 86400
    hms = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return f"2024-06-{1 + index % 28:02d}T{hms}Z"


def _container(name: str, app: str, index: int, port: int) -> dict[str, Any]:
    return {
        "name": name,
        "image": f"registry.example.com/{app}/{name}:1.{index % 7}.{index % 13}",
        "imagePullPolicy": "IfNotPresent",
        "args": [f"--port={port}", f"--config=/etc/{app}/config.yaml"],
        "ports": [
            {"name": "http", "containerPort": port, "protocol": "TCP"},
            {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
        ],
        "env": [
            {"name": "APP_NAME", "value": app},
            {
                "name": "POD_NAME",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
            },
            {
                "name": "POD_NAMESPACE",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}},
            },
            {
                "name": "DATABASE_URL",
                "valueFrom": {"secretKeyRef": {"name": f"{app}-db", "key": "url"}},
            },
        ],
        "resources": {
            "limits": {"cpu": "500m", "memory": "512Mi"},
            "requests": {"cpu": "100m", "memory": "128Mi"},
        },
        "volumeMounts": [
            {"name": "config", "mountPath": f"/etc/{app}", "readOnly": True},
            {
                "name": "kube-api-access",
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "readOnly": True,
            },
        ],
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": port, "scheme": "HTTP"},
            "initialDelaySeconds": 10,
            "timeoutSeconds": 1,
            "periodSeconds": 10,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        "readinessProbe": {
            "httpGet": {"path": "/ready", "port": port, "scheme": "HTTP"},
            "timeoutSeconds": 1,
            "periodSeconds": 5,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True},
    }


def _container_status(name: str, app: str, index: int, running: bool) -> dict[str, Any]:
    state: dict[str, Any] = (
        {"running": {"startedAt": _ts(index, 20)}} if running else {"waiting": {"reason": "ContainerCreating"}}
    )
    return {
        "name": name,
        "state": state,
        "lastState": {},
        "ready": running,
        "restartCount": index % 3,
        "started": running,
        "image": f"registry.example.com/{app}/{name}:1.{index % 7}.{index % 13}",
        "imageID": f"registry.example.com/{app}/{name}@sha256:{_hex(name + str(index), 64)}",
        "containerID": f"containerd://{_hex(app + name + str(index), 64)}" if running else "",
    }


def make_pod(
    name: str,
    namespace: str = "default",
    *,
    labels: dict[str, str] | None = None,
    node_name: str | None = None,
    phase: str = "Running",
    index: int = 0,
) -> dict[str, Any]:
    """A realistic Pod dict (~6.5 KB as JSON) owned by a ReplicaSet; deterministic for its args.

    It has no ``resourceVersion``: the server sets it (and ``uid``/``creationTimestamp``) on create.
    """
    app = _APPS[index % len(_APPS)]
    rs_hash = _hex(f"{namespace}/{app}", 10)
    node = node_name if node_name is not None else f"node-{index % 16:02d}"
    pod_labels = {
        "app.kubernetes.io/name": app,
        "app.kubernetes.io/part-of": "shop",
        "pod-template-hash": rs_hash,
        "tier": "backend" if index % 2 else "frontend",
    }
    pod_labels.update(labels or {})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _pod_metadata(name, namespace, app, rs_hash, pod_labels, index),
        "spec": _pod_spec(app, node, index),
        "status": _pod_status(app, phase, index),
    }


def _pod_metadata(
    name: str, namespace: str, app: str, rs_hash: str, pod_labels: dict[str, str], index: int
) -> dict[str, Any]:
    """A seeded pod's metadata: owned by its ReplicaSet, fields managed as a controller's are."""
    return {
        "name": name,
        "namespace": namespace,
        "generateName": f"{app}-{rs_hash}-",
        "labels": pod_labels,
        "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": f"{app}-{rs_hash}",
                "uid": _uid(f"rs/{namespace}/{app}"),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "managedFields": _pod_managed_fields(namespace, app, index),
    }


def _pod_managed_fields(namespace: str, app: str, index: int) -> list[dict[str, Any]]:
    """The managedFields of a seeded pod: its controller's and the kubelet's entries."""
    return [
        {
            "manager": "kube-controller-manager",
            "operation": "Update",
            "apiVersion": "v1",
            "time": _ts(index),
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {
                    "f:generateName": {},
                    "f:labels": {
                        ".": {},
                        "f:app.kubernetes.io/name": {},
                        "f:pod-template-hash": {},
                    },
                    "f:ownerReferences": {".": {}, f'k:{{"uid":"{_uid(f"rs/{namespace}/{app}")}"}}': {}},
                },
                "f:spec": {"f:containers": {f'k:{{"name":"{app}"}}': {".": {}, "f:image": {}, "f:name": {}}}},
            },
        },
        {
            "manager": "kubelet",
            "operation": "Update",
            "apiVersion": "v1",
            "time": _ts(index, 30),
            "fieldsType": "FieldsV1",
            "subresource": "status",
            "fieldsV1": {
                "f:status": {
                    "f:conditions": {},
                    "f:containerStatuses": {},
                    "f:hostIP": {},
                    "f:phase": {},
                    "f:podIP": {},
                    "f:podIPs": {},
                    "f:startTime": {},
                }
            },
        },
    ]


def _pod_spec(app: str, node: str, index: int) -> dict[str, Any]:
    """A seeded pod's spec: an app container and a sidecar, its volumes, defaults filled in."""
    return {
        "containers": [
            _container(app, app, index, 8080),
            _container("sidecar", app, index, 15000),
        ],
        "volumes": _pod_volumes(app),
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": app,
        "serviceAccount": app,
        "nodeName": node,
        "securityContext": {"runAsUser": 1000, "fsGroup": 2000},
        "schedulerName": "default-scheduler",
        "tolerations": [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
        ],
        "priority": 0,
        "enableServiceLinks": True,
    }


def _pod_volumes(app: str) -> list[dict[str, Any]]:
    """A seeded pod's volumes: its app's ConfigMap and the projected service account token."""
    return [
        {"name": "config", "configMap": {"name": f"{app}-config", "defaultMode": 420}},
        {
            "name": "kube-api-access",
            "projected": {
                "defaultMode": 420,
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {
                        "configMap": {
                            "name": "kube-root-ca.crt",
                            "items": [{"key": "ca.crt", "path": "ca.crt"}],
                        }
                    },
                    {
                        "downwardAPI": {
                            "items": [
                                {
                                    "path": "namespace",
                                    "fieldRef": {
                                        "apiVersion": "v1",
                                        "fieldPath": "metadata.namespace",
                                    },
                                }
                            ]
                        }
                    },
                ],
            },
        },
    ]


def _pod_status(app: str, phase: str, index: int) -> dict[str, Any]:
    """A seeded pod's status in ``phase`` (its conditions true when it is Running)."""
    running = phase == "Running"
    ip = f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 256}"
    conditions = [
        {
            "type": t,
            "status": "True" if running or t == "PodScheduled" else "False",
            "lastProbeTime": None,
            "lastTransitionTime": _ts(index, k * 5),
        }
        for k, t in enumerate(("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"))
    ]
    return {
        "phase": phase,
        "conditions": conditions,
        "hostIP": f"192.168.{index // 256 % 16}.{index % 16 + 10}",
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": _ts(index, 10),
        "containerStatuses": [
            _container_status(app, app, index, running),
            _container_status("sidecar", app, index, running),
        ],
        "qosClass": "Burstable",
    }


def make_configmap(
    name: str,
    namespace: str = "default",
    *,
    data: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A small ConfigMap."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
        "data": dict(data if data is not None else {"config.yaml": "logLevel: info\n"}),
    }


def make_deployment(
    name: str,
    namespace: str = "default",
    *,
    replicas: int = 3,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """An apps/v1 Deployment whose template is ``make_pod``'s spec."""
    pod = make_pod(f"{name}-template", namespace)
    selector = {"app.kubernetes.io/name": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {**selector, **(labels or {})},
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": selector},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
            },
            "template": {"metadata": {"labels": selector}, "spec": pod["spec"]},
        },
        "status": {
            "replicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
            "updatedReplicas": replicas,
            "observedGeneration": 1,
        },
    }


def seeded_pod(index: int, namespaces: Sequence[str]) -> tuple[str, str, dict[str, Any]]:
    """The ``index``-th pod ``seed_pods`` creates: its namespace, app and object (named
    ``<app>-<hash>-<index>``; about 1 in 8 is Pending or Succeeded)."""
    namespace = namespaces[index % len(namespaces)]
    app = _APPS[index % len(_APPS)]
    name = f"{owner_name(namespace, app)}-{index:05d}"
    return namespace, app, make_pod(name, namespace, phase=_PHASES[index % len(_PHASES)], index=index)


def seeded_apps(namespaces: Sequence[str], n: int) -> list[tuple[str, str]]:
    """The (namespace, app) pairs of the first ``n`` seeded pods, in order, each once."""
    pairs = (
        (namespaces[i % len(namespaces)], _APPS[i % len(_APPS)]) for i in range(min(n, len(namespaces) * len(_APPS)))
    )
    return list(dict.fromkeys(pairs))


def owner_name(namespace: str, app: str) -> str:
    """The name of the ReplicaSet that owns the seeded pods of ``app`` in ``namespace``."""
    return f"{app}-{_hex(f'{namespace}/{app}', 10)}"


def make_replica_set(name: str, namespace: str, app: str) -> dict[str, Any]:
    labels = {"app.kubernetes.io/name": app, "pod-template-hash": name.rsplit("-", 1)[-1]}
    template = make_pod(f"{name}-template", namespace)["spec"]
    return {
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {k: v for k, v in template.items() if k != "nodeName"},
            },
        },
    }


def make_node(name: str) -> dict[str, Any]:
    """A Ready Node (what ``make_pod``'s ``nodeName`` refers to)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}},
        "spec": {},
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                }
            ],
            "addresses": [{"type": "Hostname", "address": name}],
            "nodeInfo": {
                "kubeletVersion": "v1.30.2",
                "osImage": "Fake Linux",
                "kernelVersion": "6.1.0",
                "containerRuntimeVersion": "containerd://1.7",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
        },
    }
