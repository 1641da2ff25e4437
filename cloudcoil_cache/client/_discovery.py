"""API discovery: the group versions a server serves, their resources, and the binding of dynamic kinds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from cloudcoil_cache.errors import ConfigError, ResourceNotFound
from cloudcoil_cache.models._unstructured import bind_served

if TYPE_CHECKING:
    from cloudcoil_cache.client._config import Config

__all__ = ["api_resources", "bind_dynamic", "group_versions"]

_ACCEPT = {"Accept": "application/json"}


def group_versions(transport: Any) -> Iterator[str]:
    """The core version, then each group's preferred version, in the server's priority order."""
    core = transport.request("GET", "/api", headers=_ACCEPT).json()
    for version in core.get("versions") or ["v1"]:
        yield version
    groups = transport.request("GET", "/apis", headers=_ACCEPT).json()
    for group in groups.get("groups") or []:
        preferred = (group.get("preferredVersion") or {}).get("groupVersion")
        if not preferred and group.get("versions"):
            preferred = group["versions"][0].get("groupVersion")
        if preferred:
            yield preferred


def api_resources(transport: Any, group_version: str) -> list[dict[str, Any]]:
    """The ``resources`` of ``/api/<v>`` or ``/apis/<group>/<v>`` (``APIError`` as the server answers)."""
    path = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
    return list(transport.request("GET", path, headers=_ACCEPT).json().get("resources") or [])


def bind_dynamic(cls: Any, config: Config) -> None:
    """Fill in a dynamic class's plural, scope and subresources from ``config``'s server (one GET).

    Raises:
        ConfigError: the server serves no such kind in that group version (a ``ValueError``; a
            kind not served yet, such as a CRD just created, can be bound by a later call).
    """
    api_version, kind = cls.api_version, cls.kind
    try:
        entries = api_resources(config.transport, api_version)
    except ResourceNotFound:
        entries = []
    for entry in entries:
        plural = str(entry.get("name", ""))
        if entry.get("kind") == kind and plural and "/" not in plural:
            prefix = f"{plural}/"
            subresources = frozenset(
                str(e.get("name"))[len(prefix) :] for e in entries if str(e.get("name", "")).startswith(prefix)
            )
            bind_served(cls, plural, bool(entry.get("namespaced", True)), subresources)
            return
    raise ConfigError(
        f"{kind} ({api_version}) is not registered with the server {config.server}: "
        "no such kind in its discovery (is the CRD installed and established?)"
    )
