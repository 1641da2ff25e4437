"""Which admission webhooks a request calls: rules, scope, namespaceSelector and objectSelector."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["Hook", "Target", "label_selector_matches", "rules_match"]


@dataclass(frozen=True)
class Target:
    """What a write is about, as webhook rules see it."""

    group: str
    version: str
    resource: str
    subresource: str  # "" for the main resource
    operation: str  # CREATE, UPDATE or DELETE
    namespace: str  # "" for cluster-scoped objects; a namespace's own name for namespaces


@dataclass(frozen=True)
class Hook:
    """One webhook of a stored Mutating/ValidatingWebhookConfiguration."""

    configuration: str
    mutating: bool
    spec: Mapping[str, Any]

    @property
    def name(self) -> str:
        return str(self.spec.get("name", ""))


def _listed(values: Any, value: str) -> bool:
    return isinstance(values, list) and ("*" in values or value in values)


def _resource_listed(resources: Any, resource: str, subresource: str) -> bool:
    """kube-apiserver's rule: ``pods`` and ``*`` match main resources only, ``pods/status``,
    ``pods/*``, ``*/status`` and ``*/*`` the subresources they name."""
    for entry in resources if isinstance(resources, list) else ():
        res, _, sub = str(entry).partition("/")
        if (res in ("*", resource)) and (sub in ("*", subresource)):
            return True
    return False


def _scope_ok(scope: Any, target: Target) -> bool:
    is_namespace = target.group == "" and target.resource == "namespaces"
    if scope == "Namespaced":
        return not is_namespace and bool(target.namespace)
    if scope == "Cluster":
        return is_namespace or not target.namespace
    return True  # "*" or unset


def rules_match(rules: Any, target: Target) -> bool:
    """Whether any of a webhook's ``rules`` covers the request (matchPolicy Exact)."""
    for rule in rules if isinstance(rules, list) else ():
        if not isinstance(rule, dict):
            continue
        if (
            _listed(rule.get("operations"), target.operation)
            and _listed(rule.get("apiGroups"), target.group)
            and _listed(rule.get("apiVersions"), target.version)
            and _resource_listed(rule.get("resources"), target.resource, target.subresource)
            and _scope_ok(rule.get("scope"), target)
        ):
            return True
    return False


def _expression_ok(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op = str(expr.get("key", "")), expr.get("operator")
    values = expr.get("values") or []
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    return False


def label_selector_matches(selector: Any, labels: Mapping[str, str] | None) -> bool:
    """A ``LabelSelector`` object (``matchLabels`` and ``matchExpressions``); empty or absent matches all."""
    if not isinstance(selector, dict):
        return True
    labels = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    return all(
        isinstance(expr, dict) and _expression_ok(expr, labels) for expr in selector.get("matchExpressions") or ()
    )
