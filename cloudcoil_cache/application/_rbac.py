"""The RBAC an Application needs: each controller's declared needs, merged into sorted rules per namespace."""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Sequence

__all__ = ["Need", "controller_needs", "lease_needs", "rules_by_target", "verbs_granted"]

#: Read verbs: the informers LIST and WATCH, reconciles GET live.
READ = ("get", "list", "watch")
#: Children are created, updated, or server-side applied (PATCH, which also needs create for a new object).
WRITE = ("create", "get", "patch", "update")
#: A finalizer is added and removed by a patch or an update of the primary.
FINALIZE = ("patch", "update")
#: Status written through the ``status`` subresource (PUT or PATCH).
STATUS = ("patch", "update")
#: Events (events.k8s.io/v1) are created, then patched as a series when they repeat.
EVENTS = ("create", "patch")
#: Leader election: client-go's algorithm reads the Lease, creates it once, then updates it.
LEASE = ("create", "get", "update")

#: Where the Events of cluster-scoped objects go (client-go's recorder uses ``default``).
CLUSTER_EVENTS_NAMESPACE = "default"


@dataclasses.dataclass(frozen=True)
class Need:
    """Verbs on one (group, resource) where they are needed: ``target`` is a namespace (a Role) or
    None (the ClusterRole); ``why`` names the declaration that needs them."""

    target: str | None
    group: str
    resource: str
    verbs: tuple[str, ...]
    why: str


def _identity(kind: Any, what: str) -> tuple[str, str, bool]:
    """(group, plural, namespaced) of a resource class, without asking a server."""
    plural = getattr(kind, "plural", None)
    if not isinstance(plural, str) or not plural:
        raise ValueError(
            f"{what}: {getattr(kind, 'kind', kind)!r} has no plural, so its RBAC cannot be computed offline: "
            "give the class a plural (GenericResource.define(..., plural=...))"
        )
    group = getattr(kind, "group", None)
    if group is None:
        api_version = str(getattr(kind, "api_version", "") or "")
        group = api_version.rpartition("/")[0]
    return str(group), plural, bool(kind.namespaced)


def _target(namespaced: bool, namespace: str | None) -> str | None:
    return namespace if namespaced else None


def controller_needs(controller: Any, namespace: str) -> list[Need]:
    """What ``controller`` needs when the Application runs in ``namespace`` (its default namespace)."""
    name = controller.name
    scope = None if controller.all_namespaces else (controller.namespace or namespace)
    group, plural, namespaced = _identity(controller.kind, f"controller {name!r}")
    primary = _target(namespaced, scope)
    needs = [Need(primary, group, plural, READ, f"{name}: primary {controller.kind.kind} (informer, reads)")]
    finalizers = tuple(controller.finalizers)
    if finalizers:
        needs.append(Need(primary, group, plural, FINALIZE, f"{name}: finalizers {', '.join(finalizers)}"))
    if controller.status_updates:
        needs.append(Need(primary, group, f"{plural}/status", STATUS, f"{name}: status updates"))
    for kind in controller.owned_kinds:
        g, p, ns = _identity(kind, f"controller {name!r} owns()")
        needs.append(Need(_target(ns, scope), g, p, READ + WRITE, f"{name}: owns {kind.kind} (informer, writes)"))
    for kind in controller.watched_kinds:
        g, p, ns = _identity(kind, f"controller {name!r} watch()")
        needs.append(Need(_target(ns, scope), g, p, READ, f"{name}: watches {kind.kind} (informer)"))
    if controller.events:
        events_at = scope if namespaced else CLUSTER_EVENTS_NAMESPACE
        needs.append(Need(events_at, "events.k8s.io", "events", EVENTS, f"{name}: Events"))
    return needs


def lease_needs(lease_name: str, namespace: str) -> list[Need]:
    """What leader election on the Lease ``namespace/lease_name`` needs."""
    return [Need(namespace, "coordination.k8s.io", "leases", LEASE, f"leader election: Lease {lease_name}")]


def rules_by_target(needs: Iterable[Need]) -> dict[str | None, list[dict[str, Any]]]:
    """PolicyRules per target (None: cluster-wide first, then namespaces in order): one rule per
    (group, resource), verbs merged and sorted, rules sorted by group then resource."""
    merged: dict[str | None, dict[tuple[str, str], set[str]]] = {}
    for need in needs:
        merged.setdefault(need.target, {}).setdefault((need.group, need.resource), set()).update(need.verbs)
    result: dict[str | None, list[dict[str, Any]]] = {}
    for target in sorted(merged, key=lambda t: (t is not None, t or "")):
        result[target] = [
            {"apiGroups": [group], "resources": [resource], "verbs": sorted(verbs)}
            for (group, resource), verbs in sorted(merged[target].items())
        ]
    return result


def verbs_granted(rules: Sequence[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """Every (group, resource, verb) a list of PolicyRules grants (for checks and tests)."""
    return {
        (group, resource, verb)
        for rule in rules
        for group in rule.get("apiGroups", ())
        for resource in rule.get("resources", ())
        for verb in rule.get("verbs", ())
    }
