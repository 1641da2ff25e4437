"""The RBAC an Application needs: each controller's declared needs, merged into sorted rules per namespace."""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Sequence

__all__ = [
    "Need",
    "controller_needs",
    "controller_scopes",
    "extra_needs",
    "lease_needs",
    "ring_needs",
    "rules_by_target",
    "verbs_granted",
]

# Each tuple is what the controller runtime itself sends (see cloudcoil_cache.controller), nothing more:
#: Informers (primary, owned and watched kinds) LIST then WATCH; the runtime never GETs them.
INFORMER = ("list", "watch")
#: Finalizers are added and removed by a merge PATCH guarded by resourceVersion (``_finalizers.py``).
FINALIZE = ("patch",)
#: A pass's status is one guarded merge PATCH of the ``status`` subresource (``_operator.py``).
STATUS = ("patch",)
#: ``ctx.ensure`` server-side applies a child (PATCH); an apply that creates the child also needs create.
APPLY = ("create", "patch")
#: Events (events.k8s.io/v1) are created, then patched as a series when they repeat.
EVENTS = ("create", "patch")
#: Leader election: client-go's algorithm reads the Lease, creates it once, then updates (PUTs) it.
LEASE = ("create", "get", "update")

#: A sharding ring: each replica's Lease (created, renewed, released), the members' informer (list, watch),
#: the sharder's election (get); delete for removing the Leases of replicas gone for good.
RING_LEASES = ("create", "delete", "get", "list", "update", "watch")
#: The sharder and the drains label objects of the sharded kinds (guarded merge PATCHes).
RING_LABELS = ("patch",)
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


def _status_resource(kind: Any, plural: str) -> str:
    """Where the runtime writes status: the ``status`` subresource, unless the class knows its
    subresources and ``status`` is not one of them (then the object itself), as ``_operator.py`` does."""
    known = getattr(kind, "subresources", None)
    return plural if known is not None and "status" not in known else f"{plural}/status"


def _target(namespaced: bool, namespace: str | None) -> str | None:
    return namespace if namespaced else None


def controller_scopes(controller: Any, namespace: str, config: Any = None) -> list[str | None]:
    """The namespaces ``controller`` watches (None: all): its ``namespace``, else every namespace of
    its cache's set (``Cache(namespaces=["a", "b"])`` on its Config, else on ``config``: a Role
    in each, no ClusterRole), else ``namespace``."""
    if controller.all_namespaces:
        return [None]
    if controller.namespace:
        return [controller.namespace]
    for source in (getattr(controller, "config", None), config):
        cache = getattr(source, "cache", None)
        spread = None if cache is None else cache.namespace_set(controller.kind)
        if spread is not None:
            return list(spread)
    return [namespace]


def controller_needs(controller: Any, namespace: str, config: Any = None) -> list[Need]:
    """What ``controller`` needs when the Application runs in ``namespace`` (its default namespace);
    over a set of namespaces (``controller_scopes``), the namespaced needs in each of them."""
    return [need for scope in controller_scopes(controller, namespace, config) for need in _needs_in(controller, scope)]


def _needs_in(controller: Any, scope: str | None) -> list[Need]:
    """What ``controller`` needs in ``scope`` (a namespace, or None: all of them)."""
    name = controller.name
    group, plural, namespaced = _identity(controller.kind, f"controller {name!r}")
    primary = _target(namespaced, scope)
    needs = [Need(primary, group, plural, INFORMER, f"{name}: primary {controller.kind.kind} (informer)")]
    finalizers = tuple(controller.finalizers)
    if finalizers:
        needs.append(Need(primary, group, plural, FINALIZE, f"{name}: finalizers {', '.join(finalizers)}"))
    if controller.status_updates:
        resource = _status_resource(controller.kind, plural)
        needs.append(Need(primary, group, resource, STATUS, f"{name}: status updates"))
    for kind in controller.owned_kinds:
        g, p, ns = _identity(kind, f"controller {name!r} owns()")
        target = _target(ns, scope)
        needs.append(Need(target, g, p, INFORMER, f"{name}: owns {kind.kind} (informer)"))
        needs.append(Need(target, g, p, APPLY, f"{name}: owns {kind.kind} (ctx.ensure: server-side apply)"))
    for kind in controller.watched_kinds:
        g, p, ns = _identity(kind, f"controller {name!r} watch()")
        needs.append(Need(_target(ns, scope), g, p, INFORMER, f"{name}: watches {kind.kind} (informer)"))
    if controller.events:
        events_at = scope if namespaced else CLUSTER_EVENTS_NAMESPACE
        needs.append(Need(events_at, "events.k8s.io", "events", EVENTS, f"{name}: Events"))
    return needs


def lease_needs(lease_name: str, namespace: str) -> list[Need]:
    """What leader election on the Lease ``namespace/lease_name`` needs."""
    return [Need(namespace, "coordination.k8s.io", "leases", LEASE, f"leader election: Lease {lease_name}")]


def ring_needs(ring: Any, controllers: Iterable[Any], namespace: str, config: Any = None) -> list[Need]:
    """What a sharding ``ring`` needs: its Leases in its namespace (default ``namespace``), list/watch
    (the sharder's informers) and patch (labels) on the sharded kinds of ``controllers``."""
    needs = [
        Need(ring.namespace or namespace, "coordination.k8s.io", "leases", RING_LEASES, f"ring {ring.name}: Leases")
    ]
    for controller in controllers:
        for kind in (controller.kind, *controller.owned_kinds):
            group, plural, namespaced = _identity(kind, f"ring {ring.name}")
            for scope in controller_scopes(controller, namespace, config):
                why = f"ring {ring.name}: shard labels on {kind.kind}"
                needs.append(Need(_target(namespaced, scope), group, plural, INFORMER + RING_LABELS, why))
    return needs


_RULE_KEYS = frozenset({"apiGroups", "resources", "verbs"})


def _strings(rule: Any, key: str, where: str) -> list[str]:
    value = rule.get(key)
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where}: {key!r} must be a non-empty list of strings, got {value!r}")
    if key != "apiGroups" and not all(value):
        raise ValueError(f"{where}: {key!r} must not hold empty strings, got {value!r}")
    return list(value)


def extra_needs(rules: Iterable[Any], namespace: str) -> list[Need]:
    """``Application(extra_rules=...)``: what the controllers' own code does beyond the runtime (a live
    ``ctx.get``, writes through ``ctx.client``, ``mutate``). Each is a ``Need`` (its target: a
    namespace, or None for the ClusterRole) or a PolicyRule dict (``apiGroups``, ``resources``,
    ``verbs``) granted in the application's namespace."""
    if isinstance(rules, (str, bytes, dict)):
        raise TypeError("Application(extra_rules=...) takes a list of PolicyRule dicts or Needs")
    needs: list[Need] = []
    for index, rule in enumerate(rules):
        where = f"Application(extra_rules[{index}])"
        if isinstance(rule, Need):
            needs.append(rule)
            continue
        if not isinstance(rule, dict):
            raise TypeError(f"{where}: expected a PolicyRule dict or a Need, got {type(rule).__name__}")
        unknown = sorted(set(rule) - _RULE_KEYS)
        if unknown:
            raise ValueError(f"{where}: only apiGroups, resources and verbs are supported, got {unknown}")
        verbs = tuple(sorted(set(_strings(rule, "verbs", where))))
        for group in _strings(rule, "apiGroups", where):
            for resource in _strings(rule, "resources", where):
                needs.append(Need(namespace, group, resource, verbs, f"extra_rules[{index}]"))
    return needs


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
