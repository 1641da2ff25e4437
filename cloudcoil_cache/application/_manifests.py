"""The manifests of an Application, in apply order: Namespace, ServiceAccount, RBAC, Service, Deployment, webhooks."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from cloudcoil_cache.application._rbac import Need, rules_by_target

__all__ = ["Layout", "WebhookLayout", "build_manifests", "crd_document"]

RBAC = "rbac.authorization.k8s.io"
TLS_VOLUME = "webhook-tls"


@dataclasses.dataclass(frozen=True)
class WebhookLayout:
    """The webhook side of the manifests: the Service (``service_port`` → the container's ``port``),
    the TLS Secret mounted at ``cert_dir`` and the configurations (built by the admission layer)."""

    service_name: str
    service_port: int
    port: int
    tls_secret: str
    cert_dir: str
    configurations: Sequence[dict[str, Any]]


@dataclasses.dataclass(frozen=True)
class Layout:
    """What the manifests are built from (all checked by ``Application``)."""

    name: str
    namespace: str
    needs: Sequence[Need]
    image: str | None
    replicas: int
    health_port: int | None
    module: str | None
    create_namespace: bool = False
    webhooks: WebhookLayout | None = None


def crd_document(crd: Any) -> dict[str, Any]:
    """A CustomResourceDefinition as a dict (a model object or a dict), checked."""
    data = crd.to_dict() if hasattr(crd, "to_dict") else crd
    if not isinstance(data, dict):
        raise TypeError(
            f"Application(crds=...) takes CustomResourceDefinition objects or dicts, got {type(crd).__name__}"
        )
    if data.get("kind") != "CustomResourceDefinition" or not str(data.get("apiVersion", "")).startswith(
        "apiextensions.k8s.io/"
    ):
        raise ValueError(
            "Application(crds=...): expected an apiextensions.k8s.io CustomResourceDefinition, "
            f"got apiVersion={data.get('apiVersion')!r} kind={data.get('kind')!r}"
        )
    if not (data.get("metadata") or {}).get("name"):
        raise ValueError("Application(crds=...): a CustomResourceDefinition needs metadata.name")
    return dict(data)


def _labels(name: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": "cloudcoil-cache"}


def _meta(name: str, namespace: str | None, labels: dict[str, str]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = dict(labels)
    return meta


def _rbac(layout: Layout, labels: dict[str, str]) -> list[dict[str, Any]]:
    subject = {"kind": "ServiceAccount", "name": layout.name, "namespace": layout.namespace}
    docs: list[dict[str, Any]] = []
    for target, rules in rules_by_target(layout.needs).items():
        if target is None:  # cluster objects: named after the namespace too, so two installs do not collide
            role_kind, role_name = "ClusterRole", f"{layout.name}.{layout.namespace}"
        else:
            role_kind, role_name = "Role", layout.name
        docs.append(
            {
                "apiVersion": f"{RBAC}/v1",
                "kind": role_kind,
                "metadata": _meta(role_name, target, labels),
                "rules": rules,
            }
        )
        docs.append(
            {
                "apiVersion": f"{RBAC}/v1",
                "kind": f"{role_kind}Binding",
                "metadata": _meta(role_name, target, labels),
                "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": role_name},
                "subjects": [dict(subject)],
            }
        )
    return docs


def _deployment(layout: Layout, image: str, labels: dict[str, str]) -> dict[str, Any]:
    if not layout.module:
        raise ValueError(
            f"Application {layout.name!r}: the Deployment runs `python -m <module> run`, and the module is "
            "unknown: pass Application(module=...)"
        )
    selector = {"app.kubernetes.io/name": layout.name}
    container: dict[str, Any] = {
        "name": "manager",
        "image": image,
        "command": ["python", "-m", layout.module, "run"],
    }
    if layout.health_port is not None:
        port = layout.health_port
        container["command"] += ["--health-host", "0.0.0.0", "--health-port", str(port)]
        container["ports"] = [{"name": "health", "containerPort": port, "protocol": "TCP"}]
        container["livenessProbe"] = {"httpGet": {"path": "/healthz", "port": "health"}}
        container["readinessProbe"] = {"httpGet": {"path": "/readyz", "port": "health"}}
    pod: dict[str, Any] = {"serviceAccountName": layout.name, "containers": [container]}
    hooks = layout.webhooks
    if hooks is not None:
        webhook_port = {"name": "webhook", "containerPort": hooks.port, "protocol": "TCP"}
        container["ports"] = [*container.get("ports", []), webhook_port]
        container["volumeMounts"] = [{"name": TLS_VOLUME, "mountPath": hooks.cert_dir, "readOnly": True}]
        pod["volumes"] = [{"name": TLS_VOLUME, "secret": {"secretName": hooks.tls_secret}}]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(layout.name, layout.namespace, labels),
        "spec": {
            "replicas": layout.replicas,
            "selector": {"matchLabels": selector},
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod},
        },
    }


def _service(layout: Layout, hooks: WebhookLayout, labels: dict[str, str]) -> dict[str, Any]:
    """The Service the webhook configurations call (HTTPS on ``service_port``)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(hooks.service_name, layout.namespace, labels),
        "spec": {
            "selector": {"app.kubernetes.io/name": layout.name},
            "ports": [{"name": "webhook", "port": hooks.service_port, "targetPort": "webhook", "protocol": "TCP"}],
        },
    }


def build_manifests(layout: Layout) -> list[dict[str, Any]]:
    """Every object, in apply order. No Deployment without an image (RBAC only, e.g. to run locally),
    and then no webhook objects either (a configuration without its server would block writes). The
    webhook configurations come last: admission is enabled once what serves it is applied."""
    labels = _labels(layout.name)
    docs: list[dict[str, Any]] = []
    if layout.create_namespace:
        docs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(layout.namespace, None, labels)})
    docs.append(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(layout.name, layout.namespace, labels)}
    )
    docs += _rbac(layout, labels)
    if layout.image is None:
        return docs
    if layout.webhooks is not None:
        docs.append(_service(layout, layout.webhooks, labels))
    docs.append(_deployment(layout, layout.image, labels))
    if layout.webhooks is not None:
        docs += [dict(doc) for doc in layout.webhooks.configurations]
    return docs
