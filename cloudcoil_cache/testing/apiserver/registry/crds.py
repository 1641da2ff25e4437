"""CustomResourceDefinitions in the fake server: create-time status, the apiextensions controllers, served types."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable

from ..machinery.resources import ResourceRegistry, ResourceType
from . import validation as _rules

if TYPE_CHECKING:
    from ..storage.store import Store

__all__ = ["after_commit", "commit_listener", "default_names", "is_crd", "nested", "prepare_create", "validate_scale"]

# The field manager of the controllers' status writes (kube-apiserver's loopback client).
_CONTROLLER = "kube-apiserver"
_SCALE_VERBS = ("get", "patch", "update")


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_crd(rtype: ResourceType) -> bool:
    return rtype.builtin and rtype.group == "apiextensions.k8s.io" and rtype.kind == "CustomResourceDefinition"


def default_names(obj: dict[str, Any]) -> None:
    """Default ``spec.names.singular`` and ``listKind`` (on every write, as the CRD defaulter does)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("names"), dict):
        return
    names = spec["names"]
    kind = str(names.get("kind", ""))
    if kind:
        names.setdefault("singular", kind.lower())
        names.setdefault("listKind", f"{kind}List")


def prepare_create(obj: dict[str, Any], errs: _rules.Errors) -> None:
    """Validate a new CRD's name and storage version and reset its status as the CRD strategy does.

    The names are not accepted and the CRD is not Established yet: ``after_commit`` does that in
    later writes, as the naming and establishing controllers do.
    """
    spec = obj.get("spec") or {}
    names = spec.get("names") or {}
    wanted = f"{names.get('plural', '')}.{spec.get('group', '')}"
    name = obj["metadata"].get("name", "")
    if name != wanted:
        errs.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group')
    storage = [v.get("name") for v in spec.get("versions") or () if v.get("storage")]
    if len(storage) != 1:
        errs.invalid(
            "spec.versions",
            [v.get("name") for v in spec.get("versions") or ()],
            "must have exactly one version marked as storage version",
        )
    default_names(obj)
    obj["status"] = {"conditions": None, "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": storage[:1]}


def _condition(status: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions") or () if isinstance(c, dict) and c.get("type") == kind), None)


def _is_true(status: dict[str, Any], kind: str) -> bool:
    found = _condition(status, kind)
    return found is not None and found.get("status") == "True"


def _set_condition(status: dict[str, Any], new: dict[str, Any]) -> None:
    """Set a condition: appended when new; its ``lastTransitionTime`` moves only when its status does."""
    conditions = [dict(c) for c in status.get("conditions") or ()]
    for i, old in enumerate(conditions):
        if old.get("type") == new["type"]:
            if old.get("status") == new["status"] and old.get("lastTransitionTime"):
                new = {**new, "lastTransitionTime": old["lastTransitionTime"]}
            conditions[i] = new
            break
    else:
        conditions.append(new)
    status["conditions"] = conditions


def _write_status(store: Store, rtype: ResourceType, obj: dict[str, Any], status: dict[str, Any]) -> None:
    meta = obj["metadata"]
    store.replace(
        rtype,
        meta["name"],
        None,
        {"metadata": {"name": meta["name"], "resourceVersion": meta["resourceVersion"]}, "status": status},
        subresource="status",
        manager=_CONTROLLER,
        admit=False,
    )


def _control(store: Store, rtype: ResourceType, obj: dict[str, Any]) -> None:
    """One step of the naming or the establishing controller, when the CRD needs one."""
    names = (obj.get("spec") or {}).get("names") or {}
    status = dict(obj.get("status") or {})
    now = _now()
    if status.get("acceptedNames") != names or not _is_true(status, "NamesAccepted"):
        # The naming controller: the names are accepted (the fake has no conflicts to find).
        status["acceptedNames"] = names
        _set_condition(
            status,
            {
                "type": "NamesAccepted",
                "status": "True",
                "lastTransitionTime": now,
                "reason": "NoConflicts",
                "message": "no conflicts found",
            },
        )
        if not _is_true(status, "Established"):
            _set_condition(
                status,
                {
                    "type": "Established",
                    "status": "False",
                    "lastTransitionTime": now,
                    "reason": "Installing",
                    "message": "the initial names have been accepted",
                },
            )
        _write_status(store, rtype, obj, status)
    elif not _is_true(status, "Established"):
        # The establishing controller: the names are accepted, the kind is served from now on.
        _set_condition(
            status,
            {
                "type": "Established",
                "status": "True",
                "lastTransitionTime": now,
                "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted",
            },
        )
        _write_status(store, rtype, obj, status)


def after_commit(
    store: Store, registry: ResourceRegistry, rtype: ResourceType, etype: str, obj: dict[str, Any]
) -> None:
    """A CRD changed (store lock held): run the controllers, then serve what an Established CRD
    declares (a deleted one's kinds and objects go)."""
    if etype != "DELETED" and not obj["metadata"].get("deletionTimestamp"):
        _control(store, rtype, obj)
        if not _is_true(obj.get("status") or {}, "Established"):
            return  # its kinds are served from the establishing write on
    _serve(store, registry, etype, obj)


def commit_listener(store: Store, registry: ResourceRegistry) -> Callable[[ResourceType, str, dict[str, Any]], None]:
    """The apiextensions controllers as a store commit listener: a CRD's change (store lock held)
    runs them and (un)registers its types."""

    def committed(rtype: ResourceType, etype: str, obj: dict[str, Any]) -> None:
        if is_crd(rtype):
            after_commit(store, registry, rtype, etype, obj)

    return committed


def _scale_paths(scale: Any) -> tuple[str, str, str]:
    scale = scale if isinstance(scale, dict) else {}
    return (
        str(scale.get("specReplicasPath") or ""),
        str(scale.get("statusReplicasPath") or ""),
        str(scale.get("labelSelectorPath") or ""),
    )


def _serve(store: Store, registry: ResourceRegistry, etype: str, obj: dict[str, Any]) -> None:
    spec = obj.get("spec") or {}
    group, names = spec.get("group", ""), spec.get("names") or {}
    plural = names.get("plural", "")
    served = {v.get("name") for v in spec.get("versions") or () if v.get("served", True)}
    if etype == "DELETED":
        served = set()
    for known in registry.all():
        if known.group == group and known.plural == plural and not known.builtin and known.version not in served:
            registry.remove(known.group, known.version, known.plural)
            if etype == "DELETED":
                store.drop_all_locked(known)
    for version in spec.get("versions") or ():
        if version.get("name") not in served:
            continue
        subs = version.get("subresources") or {}
        extra: tuple[tuple[str, str, str, str, tuple[str, ...]], ...] = ()
        if "scale" in subs:
            extra = (("scale", "autoscaling", "v1", "Scale", _SCALE_VERBS),)
        registry.add(
            ResourceType(
                group=group,
                version=version["name"],
                kind=names.get("kind", ""),
                plural=plural,
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                singular=names.get("singular", ""),
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                has_status="status" in subs,
                builtin=False,
                has_generation=True,
                subresources=extra,
                schema=(version.get("schema") or {}).get("openAPIV3Schema"),
                scale_paths=_scale_paths(subs["scale"]) if "scale" in subs else None,
            )
        )


def nested(obj: Any, path: str) -> tuple[Any, bool]:
    """The value at a ``.a.b`` JSON path of ``obj`` and whether it is there."""
    value = obj
    for key in path.lstrip(".").split("."):
        if not isinstance(value, dict) or key not in value:
            return None, False
        value = value[key]
    return value, True


def validate_scale(rtype: ResourceType, obj: dict[str, Any], errs: _rules.Errors) -> None:
    """A custom resource's replica counts at its scale paths must be non-negative int32s."""
    if rtype.scale_paths is None:
        return
    for path in rtype.scale_paths[:2]:
        value, found = nested(obj, path) if path else (None, False)
        if not found or isinstance(value, bool) or not isinstance(value, int):
            continue
        if value < 0:
            errs.invalid(path, value, "should be a non-negative integer")
        elif value > 2**31 - 1:
            errs.invalid(path, value, f"should be less than or equal to {2**31 - 1}")
