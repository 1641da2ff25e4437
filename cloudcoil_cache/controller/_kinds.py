"""A controller's kinds: checked when declared; a dynamic kind's plural and scope learnt from discovery at start."""

from __future__ import annotations

from typing import Any, Iterable

from cloudcoil_cache.caching._options import awaits_discovery
from cloudcoil_cache.client import Config

__all__ = ["bind_kinds", "check_kind", "unbound"]


def unbound(kind: Any) -> bool:
    """A kind still waiting for discovery: kind and apiVersion, no plural (``get_dynamic_resource``
    classes, and a class declared without a plural)."""
    return awaits_discovery(kind)


def check_kind(kind: Any, where: str) -> None:
    """``kind`` is a resource class, or a dynamic one whose plural and scope the start binds.

    Raises:
        TypeError: naming what ``kind`` lacks.
    """
    for attr in ("kind", "api_version"):
        if not getattr(kind, attr, None):
            raise TypeError(f"{where}: {kind!r} is not a resource class (it has no {attr})")
    if unbound(kind):
        return  # plural and scope from the server's discovery, when the controller starts
    if getattr(kind, "namespaced", None) is None:
        raise TypeError(f"{where}: {kind!r} is not a resource class (it has no namespaced)")


def bind_kinds(kinds: Iterable[Any], config: Config) -> None:
    """Give each kind still waiting for discovery its plural and scope from ``config``'s server (one
    GET per kind, the one its first API call would make; a bound kind stays bound).

    Raises:
        ConfigError: the server serves no such kind, with the text a dynamic kind's first call
            gives ("Gadget (example.com/v1) is not registered with the server ...").
    """
    for kind in dict.fromkeys(kinds):
        if unbound(kind):
            config.client_for(kind, sync=True, cached=False).bind()
