"""API discovery: the group versions a server serves, their resources, and the binding of dynamic kinds."""

from __future__ import annotations

from typing import Any, Iterator, Protocol

from cloudcoil_cache.errors import APIError, ConfigError, ResourceNotFound, TransportError
from cloudcoil_cache.models._dynamic import bind_served, discovered_classes

__all__ = ["api_resources", "bind_dynamic", "group_versions", "refresh_bindings"]

_ACCEPT = {"Accept": "application/json"}


class Config(Protocol):
    """What discovery needs of a ``Config`` (not imported: ``_config`` imports this module)."""

    @property
    def transport(self) -> Any: ...

    @property
    def server(self) -> str: ...


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
    if _bind_from(cls, entries):
        return
    raise ConfigError(
        f"{kind} ({api_version}) is not registered with the server {config.server}: "
        "no such kind in its discovery (is the CRD installed and established?)"
    )


def _bind_from(cls: Any, entries: list[dict[str, Any]], again: bool = False) -> bool:
    """Bind ``cls`` from its group version's discovery ``entries``; False when they have no such kind."""
    for entry in entries:
        plural = str(entry.get("name", ""))
        if entry.get("kind") == cls.kind and plural and "/" not in plural:
            prefix = f"{plural}/"
            subresources = frozenset(
                str(e.get("name"))[len(prefix) :] for e in entries if str(e.get("name", "")).startswith(prefix)
            )
            bind_served(cls, plural, bool(entry.get("namespaced", True)), subresources, again=again)
            return True
    return False


def refresh_bindings(config: Config) -> None:
    """Read ``config``'s server's discovery again for every dynamic class (``Config.refresh_api_resources``).

    One GET per group version that has ``get_dynamic_resource`` classes or classes bound from
    discovery: a kind served now is bound (again, if discovery changed its plural, scope or
    subresources); a kind not served keeps its binding, or stays unbound. Every group version is
    read even when one fails; the first failure is raised at the end.

    Raises:
        APIError: a group version answered with an error other than 404 (which means none served).
        TransportError: the server could not be reached.
    """
    by_version: dict[str, list[Any]] = {}
    for cls in sorted(discovered_classes(), key=lambda c: (str(c.api_version), str(c.kind))):
        if cls.api_version and cls.kind:
            by_version.setdefault(cls.api_version, []).append(cls)
    failure: APIError | TransportError | None = None
    for group_version, classes in by_version.items():
        try:
            entries = api_resources(config.transport, group_version)
        except ResourceNotFound:
            continue  # nothing served there (a CRD's group deleted): bindings are kept
        except (APIError, TransportError) as exc:
            failure = failure or exc
            continue
        for cls in classes:
            _bind_from(cls, entries, again=True)
    if failure is not None:
        raise failure
