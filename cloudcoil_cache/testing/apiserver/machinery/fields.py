"""Field ownership (``metadata.managedFields``) and server-side apply, modelled on structured-merge-diff.

A field set is a set of paths; a path is a tuple of ``fieldsV1`` elements (``f:spec``,
``k:{"name":"web"}``, ``v:"a"``). Leaf fields, list items with keys and set members are members;
for ``Update`` operations the maps (labels, annotations, ...) and keyed items an operation added are
members too (``"."`` in ``fieldsV1``).

- ``update_managed``: a create/update/patch by ``manager`` (operation ``Update``) owns what it
  added or changed; other managers lose those fields and any that were removed.
- ``apply``: the applied configuration is merged into the live object (lists by their
  ``x-kubernetes-list-map-keys``); a field another manager owns whose value would change is a
  conflict (409 unless ``force``, which takes it over); fields the manager applied before and no
  longer applies are removed unless another manager owns them.
"""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from typing import Any, Iterable

from . import status as _status
from .schema import item as _item
from .schema import keys as _keys
from .schema import property_of, resolve, shape

__all__ = ["apply", "fields_of", "path_string", "to_fields_v1", "update_managed"]

Path = tuple[str, ...]
_NODE = ("<node>",)  # the value of a member that is a container (compared by presence only)

_UNMANAGED_META = frozenset(
    {
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        "selfLink",
    }
)
# Struct fields Go declares as values, not pointers: present (empty) in a zero object, so an
# Update that fills them does not own them as a whole.
_VALUE_STRUCTS = frozenset({"f:metadata", "f:spec", "f:status", "f:template", "f:strategy", "f:updateStrategy"})
# Key fields that have a default, used when an item leaves them out (a port's protocol).
_KEY_DEFAULTS = {"protocol": "TCP"}


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _key_element(value: dict[str, Any], key_names: list[str]) -> str | None:
    found: dict[str, Any] = {}
    for name in sorted(key_names):
        if name in value:
            found[name] = value[name]
        elif name in _KEY_DEFAULTS:
            found[name] = _KEY_DEFAULTS[name]
    if not found:
        return None
    return "k:" + json.dumps(found, separators=(",", ":"), sort_keys=True)


def _value_element(value: Any) -> str:
    return "v:" + json.dumps(value, separators=(",", ":"), sort_keys=True)


def _walk(value: Any, node: Any, prefix: Path, out: dict[Path, Any], maps: bool, required: bool = False) -> None:
    kind = shape(node)
    if isinstance(value, dict) and kind in ("struct", "map", "unknown"):
        _walk_dict(value, node, kind, prefix, out, maps, required)
        return
    if isinstance(value, list) and value and kind == "list-map":
        if maps and not required:
            out[prefix] = _NODE
        key_names = _keys(node)
        elements = [_key_element(entry, key_names) if isinstance(entry, dict) else None for entry in value]
        if all(e is not None for e in elements) and len(set(elements)) == len(elements):
            child = _item(node)
            for entry, element in zip(value, elements):
                path = prefix + (str(element),)
                out[path] = _NODE
                for key, sub in entry.items():
                    _walk(sub, property_of(child, key), path + (f"f:{key}",), out, maps)
            return
    if isinstance(value, list) and value and kind == "set":
        for entry in value:
            out[prefix + (_value_element(entry),)] = entry
        return
    out[prefix] = value


def _walk_dict(
    value: dict[str, Any], node: Any, kind: str, prefix: Path, out: dict[Path, Any], maps: bool, required: bool
) -> None:
    """``_walk`` of a struct's or a map's members (``kind``: the schema's shape of ``node``)."""
    if not value:
        out[prefix] = {}
        return
    if maps and prefix and not required and (kind == "map" or (kind == "struct" and prefix[-1] not in _VALUE_STRUCTS)):
        out[prefix] = _NODE  # added where Go's zero object has nothing: a member itself
    needed = set((resolve(node) or {}).get("required") or ()) if kind == "struct" else set()
    for key, sub in value.items():
        if sub is not None:  # null: as absent
            _walk(sub, property_of(node, key), prefix + (f"f:{key}",), out, maps, key in needed)


def _filtered(obj: dict[str, Any], sections: str) -> dict[str, Any]:
    """The part of an object field management tracks: ``main`` (all but status) or ``status``."""
    if sections == "status":
        return {"status": obj["status"]} if "status" in obj else {}
    out = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    if sections == "main-with-status-sub":
        out.pop("status", None)
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        kept = {k: v for k, v in meta.items() if k not in _UNMANAGED_META}
        if kept:
            out["metadata"] = kept
    return out


def fields_of(obj: dict[str, Any], node: Any, sections: str = "main", *, maps: bool = False) -> dict[Path, Any]:
    """The member paths of ``obj`` (values of leaves; ``_NODE`` for containers)."""
    out: dict[Path, Any] = {}
    _walk(_filtered(obj, sections), node, (), out, maps)
    out.pop((), None)
    return out


# -- fieldsV1 <-> path sets --------------------------------------------------------------------


def to_fields_v1(paths: Iterable[Path]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    members: set[int] = set()
    for path in paths:
        cur = root
        for element in path:
            cur = cur.setdefault(element, {})
        members.add(id(cur))

    def render(tree: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if tree and id(tree) in members:
            out["."] = {}
        for key in sorted(tree):
            out[key] = render(tree[key])
        return out

    return render(root)


def from_fields_v1(fields: Any, prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    if not isinstance(fields, dict):
        return out
    for key, sub in fields.items():
        if key == ".":
            out.add(prefix)
        elif isinstance(sub, dict) and sub:
            out |= from_fields_v1(sub, prefix + (key,))
        else:
            out.add(prefix + (key,))
    return out


def path_string(path: Path) -> str:
    """``.spec.containers[name="web"].image`` (structured-merge-diff's notation)."""
    parts = []
    for element in path:
        kind, _, rest = element.partition(":")
        if kind == "f":
            parts.append(f".{rest}")
        elif kind == "k":
            found = json.loads(rest)
            parts.append("[" + ",".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in found.items()) + "]")
        elif kind == "v":
            parts.append(f"[={rest}]")
        else:
            parts.append(f"[{element}]")
    return "".join(parts)


# -- managers ---------------------------------------------------------------------------------


class _Manager:
    __slots__ = ("manager", "operation", "api_version", "time", "subresource", "fields")

    def __init__(self, entry: dict[str, Any]) -> None:
        self.manager = str(entry.get("manager", ""))
        self.operation = str(entry.get("operation", "Update"))
        self.api_version = str(entry.get("apiVersion", ""))
        self.time = entry.get("time")
        self.subresource = str(entry.get("subresource", ""))
        self.fields: set[Path] = from_fields_v1(entry.get("fieldsV1"))

    @property
    def key(self) -> tuple[str, str, str, str]:
        version = self.api_version if self.operation == "Update" else ""
        return (self.manager, self.operation, version, self.subresource)

    def label(self) -> str:
        text = json.dumps(self.manager)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
            if self.time:
                text += f" at {self.time}"
        return text

    def entry(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
        }
        if self.time:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = to_fields_v1(self.fields)
        if self.subresource:
            out["subresource"] = self.subresource
        return out


def _decode(obj: dict[str, Any] | None) -> list[_Manager]:
    entries = ((obj or {}).get("metadata") or {}).get("managedFields") or ()
    return [_Manager(e) for e in entries if isinstance(e, dict)]


def _encode(managers: list[_Manager]) -> list[dict[str, Any]]:
    kept = [m for m in managers if m.fields]
    kept.sort(key=lambda m: (m.operation, m.time or "", m.manager, m.api_version, m.subresource))
    return [m.entry() for m in kept]


def _sections(has_status: bool, subresource: str | None) -> str:
    if subresource == "status":
        return "status"
    return "main-with-status-sub" if has_status else "main"


def _compare(old: dict[Path, Any], new: dict[Path, Any]) -> tuple[set[Path], set[Path]]:
    """(added or modified, removed) paths."""
    changed = {p for p, v in new.items() if p not in old or old[p] != v}
    removed = {p for p in old if p not in new}
    return changed, removed


def update_managed(
    live: dict[str, Any] | None,
    new: dict[str, Any],
    node: Any,
    *,
    manager: str,
    api_version: str,
    has_status: bool,
    subresource: str | None = None,
) -> None:
    """Record an ``Update`` by ``manager`` in ``new``'s managedFields (``live``: None on create)."""
    sections = _sections(has_status, subresource)
    managers = _decode(new)
    if not managers or subresource:
        managers = _decode(live)
    old_fields = fields_of(live, node, sections, maps=True) if live else {}
    new_fields = fields_of(new, node, sections, maps=True)
    changed, removed = _compare(old_fields, new_fields)
    me_key = (manager, "Update", api_version, subresource or "")
    mine = next((m for m in managers if m.key == me_key), None)
    for other in managers:
        if other is not mine:
            other.fields -= changed
            other.fields -= removed
    if changed or removed:
        if mine is None:
            mine = _Manager({"manager": manager, "operation": "Update", "apiVersion": api_version})
            mine.subresource = subresource or ""
            managers.append(mine)
        mine.fields = (mine.fields - removed) | changed
        mine.time = _now()
    new["metadata"] = {**new["metadata"], "managedFields": _encode(managers)}
    if not new["metadata"]["managedFields"]:
        del new["metadata"]["managedFields"]


# -- apply ----------------------------------------------------------------------------------


def _merge(live: Any, config: Any, node: Any) -> Any:
    kind = shape(node)
    if isinstance(config, dict) and isinstance(live, dict) and kind in ("struct", "map", "unknown"):
        result = dict(live)
        for key, value in config.items():
            if value is None:
                result.pop(key, None)
            else:
                result[key] = _merge(live.get(key), value, property_of(node, key))
        return result
    if isinstance(config, list) and isinstance(live, list) and kind == "list-map":
        key_names = _keys(node)
        child = _item(node)
        merged = [copy.deepcopy(e) for e in live]
        positions = {_key_element(e, key_names): i for i, e in enumerate(merged) if isinstance(e, dict)}
        for entry in config:
            element = _key_element(entry, key_names) if isinstance(entry, dict) else None
            index = positions.get(element) if element is not None else None
            if index is None:
                merged.append(copy.deepcopy(entry))
            else:
                merged[index] = _merge(merged[index], entry, child)
        return merged
    if isinstance(config, list) and isinstance(live, list) and kind == "set":
        return list(live) + [copy.deepcopy(e) for e in config if e not in live]
    return copy.deepcopy(config)


def _remove(obj: dict[str, Any], path: Path, owned: set[Path]) -> None:
    """Remove the field at ``path`` from ``obj`` (in place), then empty parents nobody owns."""
    trail: list[tuple[Any, Any]] = []
    cur: Any = obj
    for element in path:
        kind, _, rest = element.partition(":")
        nxt: Any = None
        if kind == "f" and isinstance(cur, dict) and rest in cur:
            trail.append((cur, rest))
            nxt = cur[rest]
        elif kind in ("k", "v") and isinstance(cur, list):
            want = json.loads(rest)
            for i, entry in enumerate(cur):
                if (kind == "v" and entry == want) or (
                    kind == "k"
                    and isinstance(entry, dict)
                    and all(entry.get(k, _KEY_DEFAULTS.get(k)) == v for k, v in want.items())
                ):
                    trail.append((cur, i))
                    nxt = entry
                    break
        if nxt is None:
            return
        cur = nxt
    for depth in range(len(trail) - 1, -1, -1):
        container, key = trail[depth]
        if depth < len(trail) - 1:
            child = container[key]
            if child or path[: depth + 1] in owned:
                break
        del container[key]


def apply(
    live: dict[str, Any] | None,
    config: dict[str, Any],
    node: Any,
    *,
    manager: str,
    api_version: str,
    has_status: bool,
    subresource: str | None,
    force: bool,
) -> dict[str, Any]:
    """Server-side apply of ``config`` onto ``live`` (None: create); returns the new object with
    its managedFields. Raises a 409 Conflict ``StatusError`` listing the conflicts."""
    sections = _sections(has_status, subresource)
    base = live if live is not None else {}
    managers = _decode(base)
    applied = set(fields_of(config, node, sections))
    merged: dict[str, Any] = _merge(copy.deepcopy(base), {k: v for k, v in config.items() if k != "metadata"}, node)
    meta_config = {k: v for k, v in (config.get("metadata") or {}).items() if k not in _UNMANAGED_META}
    merged["metadata"] = _merge(dict(base.get("metadata") or {}), meta_config, property_of(node, "metadata"))
    me_key = (manager, "Apply", "", subresource or "")
    mine = next((m for m in managers if m.key == me_key), None)
    last = set(mine.fields) if mine is not None else set()
    others = [m for m in managers if m is not mine]
    owned_by_others: set[Path] = set()
    for other in others:
        owned_by_others |= other.fields
    # Prune what this manager applied before and no one (it included) owns any more.
    owned_now = owned_by_others | applied
    gone: list[Path] = []
    for path in sorted(last - owned_now, key=len):
        if any(path[: len(g)] == g for g in gone):
            continue  # inside something removed already
        if not any(p[: len(path)] == path for p in owned_now):
            _remove(merged, path, owned_now)
            gone.append(path)
    old_fields = fields_of(base, node, sections) if live is not None else {}
    new_fields = fields_of(merged, node, sections)
    changed, removed = _compare(old_fields, new_fields)
    conflicts: list[tuple[_Manager, Path]] = []
    for other in others:
        for path in sorted(other.fields & changed & applied):
            conflicts.append((other, path))
    if conflicts and not force:
        raise _conflict_error(conflicts)
    for other in others:
        other.fields -= changed & applied
        other.fields -= removed
    if mine is None:
        mine = _Manager({"manager": manager, "operation": "Apply", "apiVersion": api_version})
        mine.subresource = subresource or ""
        managers.append(mine)
    mine.fields = applied
    mine.api_version = api_version
    mine.time = _now()
    merged["metadata"]["managedFields"] = _encode(managers)
    return merged


def _conflict_error(conflicts: list[tuple[_Manager, Path]]) -> _status.StatusError:
    conflicts.sort(key=lambda c: (c[0].label(), path_string(c[1])))
    causes = [
        {"reason": "FieldManagerConflict", "message": f"conflict with {m.label()}", "field": path_string(p)}
        for m, p in conflicts
    ]
    if len(conflicts) == 1:
        manager, path = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {manager.label()}: {path_string(path)}"
    else:
        lines: list[str] = []
        by_manager: dict[str, list[str]] = {}
        for manager, path in conflicts:
            by_manager.setdefault(manager.label(), []).append(path_string(path))
        for label in sorted(by_manager):
            lines.append(f"conflicts with {label}:")
            lines.extend(f"- {p}" for p in by_manager[label])
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return _status.StatusError(409, _status.status_body(409, "Conflict", message, {"causes": causes}))
