"""Owned children: ``ctx.ensure(desired)`` applies a child owned by the primary, writing only on a change."""

from __future__ import annotations

from typing import Any, Callable, Mapping, TypeVar

from cloudcoil_cache.client import Config
from cloudcoil_cache.controller._kinds import bind_kinds
from cloudcoil_cache.controller._outcomes import TerminalError
from cloudcoil_cache.errors import ResourceNotFound

__all__ = ["ensure_child", "owner_reference", "subset"]

T = TypeVar("T")

#: Reads the current child: ``(cls, name, namespace) -> object | None`` (the controller's cache for owned kinds).
ReadChild = Callable[[Any, str, "str | None"], Any]


def owner_reference(parent: Any) -> dict[str, Any]:
    """The controller ownerReference to ``parent`` (what ``Controller.owns()`` maps back to it)."""
    cls = type(parent)
    return {
        "apiVersion": cls.api_version,
        "kind": cls.kind,
        "name": parent.metadata.name,
        "uid": parent.metadata.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def subset(wanted: Any, actual: Any) -> bool:
    """Does ``actual`` have every field of ``wanted`` with the same value (objects compared key by
    key, lists element by element)? Fields the server added (defaults) do not count as changes."""
    if isinstance(wanted, dict):
        return isinstance(actual, dict) and all(k in actual and subset(v, actual[k]) for k, v in wanted.items())
    if isinstance(wanted, list):
        return isinstance(actual, list) and len(wanted) == len(actual) and all(map(subset, wanted, actual))
    return bool(wanted == actual)


def live_read(config: Config) -> ReadChild:
    def read(cls: Any, name: str, namespace: str | None) -> Any:
        try:
            return cls.client(config).live_get(name, namespace)
        except ResourceNotFound:
            return None

    return read


def _desired(parent: Any, desired: Any, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``desired`` as the JSON to apply: its name (default the parent's), namespace (the parent's),
    ``labels`` added (a sharded parent's shard label) and the owner reference; refuses what ensure
    manages or cannot do."""
    cls = type(desired)
    data = desired.to_dict()
    meta = dict(data.get("metadata") or {})
    if meta.get("uid") or meta.get("resourceVersion"):
        raise ValueError("ensure() takes the desired child, not an object read from the server (uid/resourceVersion)")
    if meta.get("ownerReferences"):
        raise ValueError("ensure() sets the owner reference: leave ownerReferences out of the desired child")
    if data.get("status") is not None:
        raise ValueError("ensure() applies a child's desired state, not its status")
    data.pop("status", None)
    meta.setdefault("name", parent.metadata.name)
    parent_ns = parent.metadata.namespace
    if cls.namespaced:
        meta.setdefault("namespace", parent_ns)
        if not meta.get("namespace") or (parent_ns and meta["namespace"] != parent_ns):
            raise ValueError(
                f"a {cls.kind} owned by {type(parent).kind} {parent.metadata.name!r} must be in namespace {parent_ns!r}"
            )
    elif parent_ns or meta.get("namespace"):
        raise ValueError(f"a cluster-scoped {cls.kind} can only be owned by a cluster-scoped object")
    meta["ownerReferences"] = [owner_reference(parent)]
    if labels:
        meta["labels"] = {**(meta.get("labels") or {}), **labels}
    data["metadata"] = meta
    return dict(data)


def _not_controlled_elsewhere(current: Any, owner: dict[str, Any]) -> bool:
    refs = current.to_dict().get("metadata", {}).get("ownerReferences") or ()
    controllers = [r for r in refs if r.get("controller")]
    return not controllers or any(r.get("uid") == owner["uid"] for r in controllers)


def ensure_child(
    parent: Any,
    desired: T,
    *,
    config: Config,
    field_manager: str,
    read: ReadChild,
    labels: Mapping[str, str] | None = None,
) -> T:
    """Create or update the child ``desired`` of ``parent`` by server-side apply (``field_manager``,
    forced), with a controller owner reference to ``parent`` and ``labels`` (a sharded parent's shard
    label: the child lands in its owner's shard); no write when the current child already has every
    desired field. Returns the live (or cached, when unchanged) child.

    Raises ``TerminalError`` when a child of that name is controlled by another object (never adopted).
    """
    meta = getattr(parent, "metadata", None)
    if meta is None or not meta.name or not meta.uid:
        raise ValueError("ensure() needs a primary read from the server (metadata.name and metadata.uid)")
    if meta.deletion_timestamp is not None:
        raise TerminalError(f"{type(parent).kind} {meta.name!r} is being deleted: children are not ensured")
    cls: Any = type(desired)
    bind_kinds([cls], config)  # a dynamic child kind not declared with owns(): its scope, from discovery
    data = _desired(parent, desired, labels)
    child_meta = data["metadata"]
    current = read(cls, child_meta["name"], child_meta.get("namespace"))
    if current is not None:
        owner = child_meta["ownerReferences"][0]
        if not _not_controlled_elsewhere(current, owner):
            raise TerminalError(f"{cls.kind} {child_meta['name']!r} is controlled by another object: not adopted")
        wanted = {**data, "metadata": {k: v for k, v in child_meta.items() if k != "ownerReferences"}}
        if subset(wanted, current.to_dict()) and _controlled_by(current, owner):
            return current  # type: ignore[no-any-return]
    applied: T = cls.client(config).apply(cls.from_dict(data), field_manager=field_manager, force=True)
    return applied


def _controlled_by(current: Any, owner: dict[str, Any]) -> bool:
    refs = current.to_dict().get("metadata", {}).get("ownerReferences") or ()
    return any(r.get("uid") == owner["uid"] and r.get("controller") for r in refs)
