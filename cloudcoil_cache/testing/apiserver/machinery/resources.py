"""The resource types the fake API server serves, and the discovery documents built from them."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any

from .schema import definition_for, resource_table

__all__ = ["ResourceType", "ResourceRegistry"]

_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

# Field selectors each built-in kind supports beyond metadata.name/namespace (docs/protocol.md §1.8).
_POD_FIELDS = (
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.podIPs",
    "status.nominatedNodeName",
)
_EVENT_FIELDS = (
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)


@dataclass(frozen=True)
class ResourceType:
    """One served resource: where it lives (group/version/plural), its kind and its scope.

    ``field_selectors`` lists the extra selectable fields; ``has_status`` says whether a ``/status``
    subresource exists (the main resource then ignores status changes); ``builtin`` controls whether
    LIST items omit ``kind``/``apiVersion`` (built-ins do, custom resources do not).
    """

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True
    singular: str = ""
    short_names: tuple[str, ...] = field(default=(), compare=False)
    field_selectors: tuple[str, ...] = ()
    has_status: bool = False
    builtin: bool = True
    has_generation: bool = False
    legacy_field_error: bool = False
    categories: tuple[str, ...] = field(default=(), compare=False)
    # Verbs served (empty: all eight) and subresources listed in discovery besides status/scale.
    verbs: tuple[str, ...] = field(default=(), compare=False)
    subresources: tuple[tuple[str, str, str, str, tuple[str, ...]], ...] = field(default=(), compare=False)
    # A custom resource's openAPIV3Schema (from its CRD), used for validation and ownership.
    schema: Any = field(default=None, compare=False, hash=False, repr=False)
    # A custom resource's scale subresource: (specReplicasPath, statusReplicasPath,
    # labelSelectorPath), as its CRD declares them ("" where not given).
    scale_paths: tuple[str, str, str] | None = field(default=None, compare=False)

    def schema_node(self) -> Any:
        """The root schema node of this kind's objects (None when unknown)."""
        if not self.builtin:
            return self.schema
        name = definition_for(self.api_version, self.kind)
        return {"$ref": f"#/definitions/{name}"} if name else None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """The name used in messages: ``pods``, ``deployments.apps``."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def singular_name(self) -> str:
        return self.singular or self.kind.lower()

    @property
    def served_verbs(self) -> tuple[str, ...]:
        return self.verbs or tuple(_VERBS)

    def discovery_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "name": self.plural,
            "singularName": self.singular_name,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": list(self.served_verbs),
        }
        if self.short_names:
            entry["shortNames"] = list(self.short_names)
        if self.categories:
            entry["categories"] = list(self.categories)
        return entry

    def subresource_entries(self) -> list[dict[str, Any]]:
        """Discovery entries of ``<plural>/<subresource>``."""
        subs: dict[str, dict[str, Any]] = {}
        if self.has_status:
            subs["status"] = {"kind": self.kind, "verbs": ["get", "patch", "update"]}
        if (self.group, self.kind) in _SCALABLE or any(s[0] == "scale" for s in self.subresources):
            subs["scale"] = {
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }
        for name, group, version, kind, verbs in self.subresources:
            if name not in subs:
                subs[name] = {"kind": kind, "verbs": list(verbs)}
                if (group, version) != (self.group, self.version):
                    subs[name].update(group=group, version=version)
        return [
            {"name": f"{self.plural}/{name}", "singularName": "", "namespaced": self.namespaced, **sub}
            for name, sub in sorted(subs.items())
        ]


# The most used built-in kinds, ready without reading the shipped table: (group, kind, plural,
# options). Every other kind of the 1.30 spec is added on first need (``_from_table``).
_BUILTIN: tuple[tuple[str, str, str, dict[str, Any]], ...] = (
    (
        "",
        "Pod",
        "pods",
        {"short_names": ("po",), "field_selectors": _POD_FIELDS, "has_status": True, "legacy_field_error": True},
    ),
    ("", "ConfigMap", "configmaps", {"short_names": ("cm",)}),
    ("", "Secret", "secrets", {"field_selectors": ("type",)}),
    ("", "Service", "services", {"short_names": ("svc",), "has_status": True}),
    (
        "",
        "Namespace",
        "namespaces",
        {
            "namespaced": False,
            "short_names": ("ns",),
            "field_selectors": ("status.phase",),
            "has_status": True,
            "verbs": ("create", "delete", "get", "list", "patch", "update", "watch"),
        },
    ),
    (
        "",
        "Node",
        "nodes",
        {"namespaced": False, "short_names": ("no",), "field_selectors": ("spec.unschedulable",), "has_status": True},
    ),
    ("", "Event", "events", {"short_names": ("ev",), "field_selectors": _EVENT_FIELDS}),
    ("apps", "Deployment", "deployments", {"short_names": ("deploy",), "has_status": True, "has_generation": True}),
    (
        "apps",
        "ReplicaSet",
        "replicasets",
        {"short_names": ("rs",), "has_status": True, "has_generation": True, "field_selectors": ("status.replicas",)},
    ),
    ("apps", "StatefulSet", "statefulsets", {"short_names": ("sts",), "has_status": True, "has_generation": True}),
    ("apps", "DaemonSet", "daemonsets", {"short_names": ("ds",), "has_status": True, "has_generation": True}),
    ("batch", "Job", "jobs", {"has_status": True, "has_generation": True, "field_selectors": ("status.successful",)}),
    ("coordination.k8s.io", "Lease", "leases", {}),
)


def _builtin_types() -> list[ResourceType]:
    return [
        ResourceType(group=group, version="v1", kind=kind, plural=plural, **options)
        for group, kind, plural, options in _BUILTIN
    ]


# Short names and categories of the built-in resources (kube-apiserver 1.30 discovery).
_SHORT_NAMES: dict[str, tuple[str, ...]] = {
    "componentstatuses": ("cs",),
    "configmaps": ("cm",),
    "endpoints": ("ep",),
    "events": ("ev",),
    "limitranges": ("limits",),
    "namespaces": ("ns",),
    "nodes": ("no",),
    "persistentvolumeclaims": ("pvc",),
    "persistentvolumes": ("pv",),
    "pods": ("po",),
    "replicationcontrollers": ("rc",),
    "resourcequotas": ("quota",),
    "serviceaccounts": ("sa",),
    "services": ("svc",),
    "customresourcedefinitions": ("crd", "crds"),
    "daemonsets": ("ds",),
    "deployments": ("deploy",),
    "replicasets": ("rs",),
    "statefulsets": ("sts",),
    "horizontalpodautoscalers": ("hpa",),
    "cronjobs": ("cj",),
    "certificatesigningrequests": ("csr",),
    "ingresses": ("ing",),
    "networkpolicies": ("netpol",),
    "poddisruptionbudgets": ("pdb",),
    "priorityclasses": ("pc",),
    "storageclasses": ("sc",),
}
_CATEGORIES: dict[str, tuple[str, ...]] = {
    "pods": ("all",),
    "replicationcontrollers": ("all",),
    "services": ("all",),
    "daemonsets": ("all",),
    "deployments": ("all",),
    "replicasets": ("all",),
    "statefulsets": ("all",),
    "horizontalpodautoscalers": ("all",),
    "cronjobs": ("all",),
    "jobs": ("all",),
    "apiservices": ("api-extensions",),
    "customresourcedefinitions": ("api-extensions",),
    "mutatingwebhookconfigurations": ("api-extensions",),
    "validatingwebhookconfigurations": ("api-extensions",),
    "validatingadmissionpolicies": ("api-extensions",),
    "validatingadmissionpolicybindings": ("api-extensions",),
}
_GENERATION_GROUPS = frozenset(
    {
        "apps",
        "batch",
        "networking.k8s.io",
        "policy",
        "autoscaling",
        "apiextensions.k8s.io",
        "admissionregistration.k8s.io",
        "flowcontrol.apiserver.k8s.io",
    }
)
_SCALABLE = frozenset(
    {("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "StatefulSet"), ("", "ReplicationController")}
)


def _version_key(version: str) -> tuple[int, int, int]:
    """Kubernetes version priority: GA before beta before alpha, higher numbers first."""
    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if match is None:
        return (-1, 0, 0)
    stage = {"alpha": 0, "beta": 1}.get(match.group(2) or "", 2)
    return (stage, int(match.group(1)), int(match.group(3) or 0))


def _from_table(entry: dict[str, Any]) -> ResourceType:
    subs = entry["subresources"]
    group, plural = entry["group"], entry["plural"]
    return ResourceType(
        group=group,
        version=entry["version"],
        kind=entry["kind"],
        plural=plural,
        namespaced=entry["namespaced"],
        short_names=_SHORT_NAMES.get(plural, ()),
        categories=_CATEGORIES.get(plural, ()),
        has_status="status" in subs,
        has_generation=(group in _GENERATION_GROUPS and plural != "horizontalpodautoscalers")
        or plural == "replicationcontrollers",
        verbs=tuple(entry["verbs"]),
        subresources=tuple(
            (name, sub["group"], sub["version"], sub["kind"], tuple(sub["verbs"]))
            for name, sub in subs.items()
            if name != "status"
        ),
    )


class ResourceRegistry:
    """Thread-safe lookup of resource types by (group, version, plural), kind or plural.group.

    The most used built-in kinds are ready at once; every other kind of the 1.30 spec is added
    on first need (the shipped table is read then).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_gvr: dict[tuple[str, str, str], ResourceType] = {}
        self._complete = False
        for rtype in _builtin_types():
            self._by_gvr[(rtype.group, rtype.version, rtype.plural)] = self._decorate(rtype)

    @staticmethod
    def _decorate(rtype: ResourceType) -> ResourceType:
        return ResourceType(
            **{
                **{f: getattr(rtype, f) for f in rtype.__dataclass_fields__},
                "categories": rtype.categories or _CATEGORIES.get(rtype.plural, ()),
            }
        )

    def _ensure_complete(self) -> None:
        if self._complete:
            return
        table = resource_table()
        with self._lock:
            if self._complete:
                return
            for entry in table:
                key = (entry["group"], entry["version"], entry["plural"])
                known = self._by_gvr.get(key)
                if known is None:
                    self._by_gvr[key] = _from_table(entry)
                elif known.builtin and not known.subresources:
                    extra = _from_table(entry)
                    self._by_gvr[key] = ResourceType(
                        **{
                            **{f: getattr(known, f) for f in known.__dataclass_fields__},
                            "subresources": extra.subresources,
                            "verbs": extra.verbs,
                            "short_names": known.short_names or extra.short_names,
                        }
                    )
            self._complete = True

    def add(self, rtype: ResourceType) -> None:
        with self._lock:
            self._by_gvr[(rtype.group, rtype.version, rtype.plural)] = rtype

    def remove(self, group: str, version: str, plural: str) -> ResourceType | None:
        with self._lock:
            return self._by_gvr.pop((group, version, plural), None)

    def get(self, group: str, version: str, plural: str) -> ResourceType | None:
        found = self._by_gvr.get((group, version, plural))
        if found is None and not self._complete:
            self._ensure_complete()
            found = self._by_gvr.get((group, version, plural))
        return found

    def all(self) -> list[ResourceType]:
        self._ensure_complete()
        with self._lock:
            return list(self._by_gvr.values())

    def resolve(self, name: str) -> ResourceType:
        """Find a type by ``pods``, ``deployments.apps``, ``Pod``, ``Deployment`` or ``po``.

        Raises ``KeyError`` naming the unknown resource.
        """
        plural, _, group = name.partition(".")
        for complete in (False, True):
            if complete:
                self._ensure_complete()
            with self._lock:
                candidates = sorted(self._by_gvr.values(), key=lambda t: _version_key(t.version), reverse=True)
            for rtype in candidates:
                if rtype.plural == plural and (not group or rtype.group == group):
                    return rtype
            for rtype in candidates:
                if name in (rtype.kind, rtype.singular_name) or name in rtype.short_names:
                    return rtype
        raise KeyError(f"unknown resource {name!r}: register it with register_resource()")

    # -- discovery documents -----------------------------------------------------------------

    def api_versions(self, server_address: str) -> dict[str, Any]:
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
        }

    def resource_list(self, group: str, version: str) -> dict[str, Any] | None:
        types = [t for t in self.all() if t.group == group and t.version == version]
        if not types:
            return None
        resources: list[dict[str, Any]] = []
        for rtype in sorted(types, key=lambda t: t.plural):
            resources.append(rtype.discovery_entry())
            resources.extend(rtype.subresource_entries())
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": resources,
        }

    def group_versions(self) -> dict[str, list[str]]:
        """Group → its versions, preferred first."""
        versions: dict[str, list[str]] = {}
        for rtype in self.all():
            if rtype.group and rtype.version not in versions.setdefault(rtype.group, []):
                versions[rtype.group].append(rtype.version)
        return {g: sorted(v, key=_version_key, reverse=True) for g, v in versions.items()}

    def group_list(self) -> dict[str, Any]:
        groups = []
        for group, versions in sorted(self.group_versions().items()):
            gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
            groups.append({"name": group, "versions": gvs, "preferredVersion": gvs[0]})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
