"""Kind names as kubectl takes them (``po``, ``deploy``, ``deployments.apps``, a CRD's plural) via discovery."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cloudcoil_cache.cli._errors import CliError
from cloudcoil_cache.client._discovery import api_resources, group_versions
from cloudcoil_cache.errors import APIError
from cloudcoil_cache.resources import GenericResource, resource_class_for

__all__ = ["ResolvedKind", "resolve_kind"]


@dataclass(frozen=True)
class ResolvedKind:
    """A resource type the server serves: its class, plural, group/version and scope."""

    cls: Any
    kind: str
    plural: str
    group_version: str
    namespaced: bool

    @property
    def qualified(self) -> str:
        """``pods``, ``deployments.apps``: the name kubectl prints."""
        group = self.group_version.rpartition("/")[0]
        return f"{self.plural}.{group}" if group else self.plural


def _resources(transport: Any, group_version: str) -> list[dict[str, Any]]:
    try:
        return api_resources(transport, group_version)
    except APIError:  # an unavailable aggregated API (e.g. metrics) must not hide the others
        return []


def _matches(entry: dict[str, Any], name: str) -> bool:
    if "/" in entry.get("name", "/"):
        return False  # a subresource (pods/log, deployments/scale)
    names = {entry.get("name", ""), entry.get("singularName", ""), str(entry.get("kind", "")).lower()}
    names.update(entry.get("shortNames") or [])
    return name in names


def resolve_kind(transport: Any, name: str) -> ResolvedKind:
    """The resource type ``name`` designates on this server, like kubectl resolves it.

    Raises:
        CliError: no served resource has that name, or it cannot be listed and watched.
    """
    wanted = name.strip().lower()
    resource, _, group = wanted.partition(".")
    if not resource:
        raise CliError("a kind is required, e.g. pods, po, deployments.apps or a custom resource's plural", 2)
    for group_version in group_versions(transport):
        gv_group = group_version.rpartition("/")[0]
        if group and gv_group != group:
            continue
        for entry in _resources(transport, group_version):
            if _matches(entry, resource):
                return _resolved(entry, group_version, name)
    raise CliError(
        f'the server has no resource type "{name}"; use a kubectl name such as pods (po), '
        "deployments (deploy), services (svc), configmaps (cm), nodes (no), or a custom resource's plural",
        1,
    )


def _resolved(entry: dict[str, Any], group_version: str, asked: str) -> ResolvedKind:
    verbs = set(entry.get("verbs") or [])
    if not {"list", "watch"} <= verbs:
        raise CliError(f'"{asked}" ({entry["name"]}) cannot be listed and watched, so it cannot be cached', 1)
    kind = str(entry["kind"])
    namespaced = bool(entry.get("namespaced", True))
    cls = resource_class_for(group_version, kind)
    if cls is None:
        cls = GenericResource.define(
            api_version=group_version, kind=kind, plural=str(entry["name"]), namespaced=namespaced
        )
    return ResolvedKind(
        cls=cls, kind=kind, plural=str(entry["name"]), group_version=group_version, namespaced=namespaced
    )
