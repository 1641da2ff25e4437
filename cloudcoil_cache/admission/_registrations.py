"""The Mutating- and ValidatingWebhookConfiguration documents that register a webhook's routes with kube-apiserver."""

from __future__ import annotations

import base64
from typing import Any, Iterable, Mapping

from cloudcoil_cache.admission._routes import Route

__all__ = ["KINDS", "client_config", "configuration_documents", "encode_ca_bundle"]

#: route kind → the configuration kind that registers it
KINDS = {"mutate": "MutatingWebhookConfiguration", "validate": "ValidatingWebhookConfiguration"}
API_VERSION = "admissionregistration.k8s.io/v1"


def encode_ca_bundle(ca_bundle: bytes | str) -> str:
    """``caBundle``: the PEM, base64-encoded."""
    if isinstance(ca_bundle, str):
        ca_bundle = ca_bundle.encode()
    if not isinstance(ca_bundle, bytes) or b"-----BEGIN CERTIFICATE-----" not in ca_bundle:
        raise ValueError("ca_bundle: expected PEM certificate(s) (bytes)")
    return base64.b64encode(ca_bundle).decode()


def client_config(
    *, url: str | None, service: tuple[str, str, int] | None, ca_bundle: bytes | str | None
) -> Mapping[str, Any]:
    """The ``clientConfig`` shared by every route (the path is added per route): ``url`` or ``service``."""
    if (url is None) == (service is None):
        raise ValueError("give either url= or a service (name and namespace), not both or neither")
    config: dict[str, Any] = {}
    if url is not None:
        if not isinstance(url, str) or not url.startswith("https://"):
            raise ValueError(f"url={url!r}: kube-apiserver calls webhooks over HTTPS only (https://...)")
        config["url"] = url.rstrip("/")
    else:
        assert service is not None
        namespace, name, port = service
        if not (isinstance(namespace, str) and namespace and isinstance(name, str) and name):
            raise ValueError(f"service={service!r}: expected (namespace, name, port)")
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            raise ValueError(f"service port {port!r}: expected an integer from 1 to 65535")
        config["service"] = {"namespace": namespace, "name": name, "port": port}
    if ca_bundle is not None:
        config["caBundle"] = encode_ca_bundle(ca_bundle)
    return config


def _rule(route: Route) -> dict[str, Any]:
    resource = f"{route.resource}/{route.subresource}" if route.subresource else route.resource
    rule: dict[str, Any] = {
        "apiGroups": [route.group],
        "apiVersions": [route.version],
        "resources": [resource],
        "operations": list(route.operations),
    }
    rule["scope"] = route.scope or ("Namespaced" if route.model.namespaced else "Cluster")
    return rule


def _webhook(route: Route, index: int, name: str, client: Mapping[str, Any], selector: Any) -> dict[str, Any]:
    clientconfig = dict(client)
    if "url" in clientconfig:
        clientconfig["url"] = clientconfig["url"] + route.path
    else:
        clientconfig["service"] = {**clientconfig["service"], "path": route.path}
    hook: dict[str, Any] = {
        "name": f"{route.kind}-{index}.{name}",
        "admissionReviewVersions": ["v1"],
        "sideEffects": route.side_effects,
        "failurePolicy": route.failure_policy,
        "matchPolicy": route.match_policy,
        "timeoutSeconds": route.timeout_seconds,
        "clientConfig": clientconfig,
        "rules": [_rule(route)],
    }
    namespace_selector = route.namespace_selector if route.namespace_selector is not None else selector
    if namespace_selector is not None:
        hook["namespaceSelector"] = dict(namespace_selector)
    if route.object_selector is not None:
        hook["objectSelector"] = dict(route.object_selector)
    if route.kind == "mutate":
        hook["reinvocationPolicy"] = route.reinvocation_policy
    return hook


def configuration_documents(
    routes: Iterable[Route],
    *,
    name: str,
    client: Mapping[str, Any],
    default_namespace_selector: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, Any] | None]:
    """Configuration kind → its document, or None for a kind with no routes.

    ``default_namespace_selector`` goes to routes without a ``namespace_selector`` of their own."""
    if not isinstance(name, str) or not name:
        raise ValueError("name: expected the configurations' name (a DNS subdomain)")
    routes = list(routes)
    documents: dict[str, dict[str, Any] | None] = {}
    for kind, config_kind in KINDS.items():
        mine = [r for r in routes if r.kind == kind]
        if not mine:
            documents[config_kind] = None
            continue
        documents[config_kind] = {
            "apiVersion": API_VERSION,
            "kind": config_kind,
            "metadata": {"name": name},
            "webhooks": [_webhook(r, i, name, client, default_namespace_selector) for i, r in enumerate(mine)],
        }
    return documents
