"""The resource types the fake API server serves, and the discovery documents built from them."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from ._schema import definition_for

__all__ = ["ResourceType", "ResourceRegistry"]

_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

# Field selectors each built-in kind supports beyond metadata.name/namespace (protocol.md §1.8).
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
    short_names: tuple[str, ...] = ()
    field_selectors: tuple[str, ...] = ()
    has_status: bool = False
    builtin: bool = True
    has_generation: bool = False
    legacy_field_error: bool = False
    categories: tuple[str, ...] = ()
    # A custom resource's openAPIV3Schema (from its CRD), used for validation and ownership.
    schema: Any = field(default=None, compare=False, hash=False, repr=False)

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

    def discovery_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "name": self.plural,
            "singularName": self.singular_name,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": list(_VERBS),
        }
        if self.short_names:
            entry["shortNames"] = list(self.short_names)
        return entry


def _builtin_types() -> list[ResourceType]:
    def rt(group: str, kind: str, plural: str, **kw: Any) -> ResourceType:
        return ResourceType(group=group, version="v1", kind=kind, plural=plural, **kw)

    return [
        rt(
            "",
            "Pod",
            "pods",
            short_names=("po",),
            field_selectors=_POD_FIELDS,
            has_status=True,
            legacy_field_error=True,
        ),
        rt("", "ConfigMap", "configmaps", short_names=("cm",)),
        rt("", "Secret", "secrets", field_selectors=("type",)),
        rt("", "Service", "services", short_names=("svc",), has_status=True),
        rt(
            "",
            "Namespace",
            "namespaces",
            namespaced=False,
            short_names=("ns",),
            field_selectors=("status.phase",),
            has_status=True,
        ),
        rt(
            "",
            "Node",
            "nodes",
            namespaced=False,
            short_names=("no",),
            field_selectors=("spec.unschedulable",),
            has_status=True,
        ),
        rt("", "Event", "events", short_names=("ev",), field_selectors=_EVENT_FIELDS),
        rt(
            "apps",
            "Deployment",
            "deployments",
            short_names=("deploy",),
            has_status=True,
            has_generation=True,
        ),
        rt(
            "apps",
            "ReplicaSet",
            "replicasets",
            short_names=("rs",),
            has_status=True,
            has_generation=True,
            field_selectors=("status.replicas",),
        ),
        rt(
            "apps",
            "StatefulSet",
            "statefulsets",
            short_names=("sts",),
            has_status=True,
            has_generation=True,
        ),
        rt(
            "apps",
            "DaemonSet",
            "daemonsets",
            short_names=("ds",),
            has_status=True,
            has_generation=True,
        ),
        rt(
            "batch",
            "Job",
            "jobs",
            has_status=True,
            has_generation=True,
            field_selectors=("status.successful",),
        ),
        rt("coordination.k8s.io", "Lease", "leases"),
    ]


class ResourceRegistry:
    """Thread-safe lookup of resource types by (group, version, plural), kind or plural.group."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_gvr: dict[tuple[str, str, str], ResourceType] = {}
        for rtype in _builtin_types():
            self._by_gvr[(rtype.group, rtype.version, rtype.plural)] = rtype

    def add(self, rtype: ResourceType) -> None:
        with self._lock:
            self._by_gvr[(rtype.group, rtype.version, rtype.plural)] = rtype

    def get(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_gvr.get((group, version, plural))

    def all(self) -> list[ResourceType]:
        with self._lock:
            return list(self._by_gvr.values())

    def resolve(self, name: str) -> ResourceType:
        """Find a type by ``pods``, ``deployments.apps``, ``Pod``, ``Deployment`` or ``po``.

        Raises ``KeyError`` naming the unknown resource.
        """
        plural, _, group = name.partition(".")
        candidates = self.all()
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
            "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
            ],
        }

    def resource_list(self, group: str, version: str) -> dict[str, Any] | None:
        types = [t for t in self.all() if t.group == group and t.version == version]
        if not types:
            return None
        resources: list[dict[str, Any]] = []
        for rtype in sorted(types, key=lambda t: t.plural):
            resources.append(rtype.discovery_entry())
            if rtype.has_status:
                resources.append(
                    {
                        "name": f"{rtype.plural}/status",
                        "singularName": "",
                        "namespaced": rtype.namespaced,
                        "kind": rtype.kind,
                        "verbs": ["get", "patch", "update"],
                    }
                )
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": resources,
        }

    def group_list(self) -> dict[str, Any]:
        versions: dict[str, list[str]] = {}
        for rtype in self.all():
            if rtype.group and rtype.version not in versions.setdefault(rtype.group, []):
                versions[rtype.group].append(rtype.version)
        groups = []
        for group in sorted(versions):
            gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions[group]]
            groups.append({"name": group, "versions": gvs, "preferredVersion": gvs[0]})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
