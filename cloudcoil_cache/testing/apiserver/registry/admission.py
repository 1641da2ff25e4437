"""Admission for the fake server: namespace lifecycle, defaulting, schema and rule validation.

Every create and update (HTTP or the direct object API) passes here before it is stored:

1. NamespaceLifecycle: a namespaced object needs an existing, not terminating namespace.
2. Decoding: JSON types are checked against the 1.30 schema (built-ins: 400 like Go's decoder)
   and unknown fields are dropped with a ``Warning`` header (``fieldValidation=Strict``: 400).
3. Defaulting by the per-type table in ``validation`` plus a few create-time fills (a pod's
   ``status.phase``, a service's cluster IP, a namespace's finalizer).
4. Validation: names, labels, the schema's ``required`` fields, per-type rules and, on update,
   immutable fields. Errors are one 422 ``Invalid`` Status with a cause per field.

Custom resources are checked against their CRD's ``openAPIV3Schema`` (types, required, enums) and
pruned of undeclared fields unless ``x-kubernetes-preserve-unknown-fields`` is set.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import threading
from typing import TYPE_CHECKING, Any, Iterator

from ..machinery import status as _status
from ..machinery.resources import ResourceRegistry, ResourceType
from ..machinery.schema import resolve
from . import crds as _crds
from . import validation as _rules

if TYPE_CHECKING:
    from ..storage.store import Store

__all__ = ["Admission", "request_context"]

_local = threading.local()
_TOP_LEVEL = frozenset({"apiVersion", "kind", "metadata"})
# Required fields that are Go value structs: validated as empty when missing, not "Required".
_VALUE_STRUCTS = frozenset({"io.k8s.api.core.v1.PodTemplateSpec", "io.k8s.api.core.v1.PodSpec"})
_JSON_TYPES = {str: "string", bool: "bool", int: "number", float: "number", dict: "object", list: "array"}
# A built-in's null field is decoded as Go's zero value and left out when served; these are served as null.
_SERVED_NULLS = frozenset({"creationTimestamp"})
_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
]


@contextlib.contextmanager
def request_context(field_validation: str = "") -> Iterator[list[str]]:
    """Per-request options for admission in this thread; yields the list warnings go to."""
    warnings: list[str] = []
    previous = getattr(_local, "ctx", None)
    _local.ctx = (field_validation, warnings)
    try:
        yield warnings
    finally:
        _local.ctx = previous


def _context() -> tuple[str, list[str]]:
    ctx = getattr(_local, "ctx", None)
    return ctx if ctx is not None else ("", [])


def _ref_name(node: Any) -> str | None:
    if not isinstance(node, dict):
        return None
    ref = node.get("$ref")
    if ref is None and "allOf" in node and len(node["allOf"]) == 1:
        ref = node["allOf"][0].get("$ref")
    return ref[14:] if isinstance(ref, str) else None  # after "#/definitions/"


def _type_ok(value: Any, wanted: str) -> bool:
    if wanted == "string":
        return isinstance(value, str)
    if wanted == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if wanted == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if wanted == "boolean":
        return isinstance(value, bool)
    if wanted == "object":
        return isinstance(value, dict)
    if wanted == "array":
        return isinstance(value, list)
    return True


def _missing(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


class _Walk:
    """One pass over an object with its schema: defaults, then types, unknown fields, required."""

    def __init__(self, rtype: ResourceType, errs: _rules.Errors, *, defaults: bool) -> None:
        self.rtype = rtype
        self.errs = errs
        self.defaults = defaults
        self.strict = _context()[0] == "Strict"
        self.warnings = _context()[1]

    def run(self, obj: dict[str, Any], node: Any, *, status_required: bool) -> None:
        self.status_required = status_required
        self._value(obj, node, "", top=True)

    def _decode_error(self, path: str, value: Any, wanted: str, defname: str | None) -> None:
        rtype = self.rtype
        holder = (defname or rtype.kind).rsplit(".", 1)[-1]
        raise _status.bad_request(
            f'{rtype.kind} in version "{rtype.version}" cannot be handled as a {rtype.kind}: '
            f"json: cannot unmarshal {_JSON_TYPES.get(type(value), 'value')} into Go struct "
            f"field {holder}.{path} of type {wanted}"
        )

    def _unknown(self, path: str) -> None:
        if self.strict:
            raise _status.bad_request(f'strict decoding error: unknown field "{path}"')
        self.warnings.append(f'unknown field "{path}"')

    def _value(self, value: Any, node: Any, path: str, *, top: bool = False, parent_def: str | None = None) -> None:
        defname = _ref_name(node)
        schema = resolve(node)
        if schema is None or value is None or schema.get("x-fake-atomic"):
            return
        if schema.get("x-kubernetes-int-or-string"):
            if not isinstance(value, (int, str)) or isinstance(value, bool):
                self._type_error(path, value, "integer or string", parent_def)
            return
        wanted = schema.get("type") or ("object" if "properties" in schema else None)
        if wanted and not _type_ok(value, wanted):
            self._type_error(path, value, wanted, parent_def, schema.get("format"))
            return
        enum = schema.get("enum")
        if enum and not self.rtype.builtin and value not in enum:
            self.errs.unsupported(path, value, [str(e) for e in enum])
        if isinstance(value, dict):
            self._object(value, schema, path, top=top, defname=defname)
        elif isinstance(value, list):
            items = schema.get("items")
            for i, entry in enumerate(value):
                self._value(entry, items, f"{path}[{i}]", parent_def=parent_def)

    def _object(
        self, value: dict[str, Any], schema: dict[str, Any], path: str, *, top: bool, defname: str | None
    ) -> None:
        """An object's defaults, members, required fields and its kind's rules."""
        if self.defaults and defname in _rules.DEFAULTS:
            _rules.DEFAULTS[defname](value)
        self._members(value, schema, path, top=top, defname=defname)
        self._required(value, schema, path, top=top, defname=defname)
        if self.rtype.builtin and defname in _rules.TYPE_RULES:
            _rules.TYPE_RULES[defname](value, path, self.errs)

    def _members(
        self, value: dict[str, Any], schema: dict[str, Any], path: str, *, top: bool, defname: str | None
    ) -> None:
        """Each member against its property's schema; an unknown one is warned of and dropped."""
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        preserve = schema.get("x-kubernetes-preserve-unknown-fields")
        for key in list(value):
            sub_path = f"{path}.{key}" if path else key
            if props is not None and key in props:
                if value[key] is None and self.rtype.builtin and key not in _SERVED_NULLS:
                    del value[key]  # decoded as Go's zero value, left out when encoded (a default fills it)
                    continue
                self._value(value[key], props[key], sub_path, parent_def=defname)
            elif isinstance(extra, dict):
                self._value(value[key], extra, sub_path, parent_def=defname)
            elif top and key in _TOP_LEVEL:
                continue
            elif props is not None and not preserve and extra is not True:
                self._unknown(sub_path)
                del value[key]

    def _required(
        self, value: dict[str, Any], schema: dict[str, Any], path: str, *, top: bool, defname: str | None
    ) -> None:
        """The schema's required members (not under ``status`` unless the write is to status)."""
        props = schema.get("properties")
        skip_required = not self.status_required and (path == "status" or path.startswith("status."))
        for key in () if skip_required else schema.get("required") or ():
            if _missing(value.get(key)) and not (top and key in _TOP_LEVEL):
                prop = (props or {}).get(key)
                if value.get(key) is None and _ref_name(prop) in _VALUE_STRUCTS:
                    # a Go struct, not a pointer: its own fields are what is missing
                    self._value({}, prop, f"{path}.{key}" if path else key, parent_def=defname)
                else:
                    self.errs.required(f"{path}.{key}" if path else key)

    def _type_error(self, path: str, value: Any, wanted: str, parent_def: str | None, fmt: str | None = None) -> None:
        if self.rtype.builtin:
            go_type = {
                "integer": fmt if fmt in ("int32", "int64") else "int64",
                "number": "float64",
                "boolean": "bool",
                "object": "map",
                "array": "slice",
            }.get(wanted, wanted)
            self._decode_error(path, value, go_type, parent_def)
        got = {str: "string", bool: "boolean", int: "integer", float: "number", dict: "object", list: "array"}.get(
            type(value), "null"
        )
        self.errs.invalid(path, got, f"{path} in body must be of type {wanted}: {_rules.render(got)}")


class Admission:
    """What the real admission chain and registry strategies do to a write; ``admit`` is handed to the store."""

    def __init__(self, store: Store, registry: ResourceRegistry, *, namespace_lifecycle: bool = True) -> None:
        self.store = store
        self.registry = registry
        self.namespace_lifecycle = namespace_lifecycle
        self._next_ip = 10
        self._next_node_port = 30000

    # -- entry point ---------------------------------------------------------------------------

    def admit(
        self,
        rtype: ResourceType,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        *,
        namespace: str | None,
        subresource: str | None,
    ) -> None:
        """Default and validate ``obj`` in place (``old``: the stored object on update)."""
        meta = obj["metadata"]
        if old is None and rtype.namespaced and self.namespace_lifecycle and namespace:
            self._check_namespace(rtype, meta.get("name", ""), namespace)
        if rtype.group == "" and rtype.kind == "Secret":
            self._secret_data(obj)
        errs = _rules.Errors()
        node = rtype.schema_node()
        if node is not None:
            _empty_spec(rtype, node, obj, subresource)
            _Walk(rtype, errs, defaults=subresource is None).run(obj, node, status_required=subresource == "status")
        if old is None:
            self._on_create(rtype, obj)
            _rules.check_name(rtype.group, rtype.kind, str(meta.get("name", "")), errs)
            if _crds.is_crd(rtype):
                _crds.prepare_create(obj, errs)
        elif _crds.is_crd(rtype) and subresource is None:
            _crds.default_names(obj)
        if not rtype.builtin:
            _crds.validate_scale(rtype, obj, errs)
        _rules.label_errors(meta, "metadata", errs)
        rule = _rules.OBJECT_RULES.get((rtype.group, rtype.kind))
        if rule is not None:
            rule(obj, errs)
        if old is not None:
            _update_rules(rtype, obj, old, subresource, errs)
        if errs:
            raise _invalid(rtype, str(meta.get("name", "")), errs)

    # -- namespace lifecycle -------------------------------------------------------------------

    def _check_namespace(self, rtype: ResourceType, name: str, namespace: str) -> None:
        ns_type = self.registry.get("", "v1", "namespaces")
        assert ns_type is not None
        try:
            ns = self.store.get(ns_type, namespace, None).obj
        except _status.StatusError:
            raise _status.not_found(ns_type, namespace) from None
        if ns["metadata"].get("deletionTimestamp") or (ns.get("status") or {}).get("phase") == "Terminating":
            message = f"unable to create new content in namespace {namespace} because it is being terminated"
            details: dict[str, Any] = {"name": name}
            if rtype.group:
                details["group"] = rtype.group
            details["kind"] = rtype.plural
            details["causes"] = [
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {namespace} is being terminated",
                    "field": "metadata.namespace",
                }
            ]
            raise _status.StatusError(
                403,
                _status.status_body(403, "Forbidden", f'{rtype.qualified} "{name}" is forbidden: {message}', details),
            )

    # -- create-time fills (strategies' PrepareForCreate and admission plugins) -----------------

    def _on_create(self, rtype: ResourceType, obj: dict[str, Any]) -> None:
        if rtype.group != "":
            return
        kind = rtype.kind
        if kind == "Pod":
            spec = _fill(obj, "spec", {})
            if isinstance(spec, dict):
                _fill(spec, "enableServiceLinks", True)
                _fill(spec, "priority", 0)
                _fill(spec, "preemptionPolicy", "PreemptLowerPriority")
                if not spec.get("serviceAccountName"):
                    spec["serviceAccountName"] = spec.get("serviceAccount") or "default"
                _fill(spec, "serviceAccount", spec["serviceAccountName"])
                tolerations = _fill(spec, "tolerations", [])
                keys = {t.get("key") for t in tolerations if isinstance(t, dict)}
                tolerations.extend(dict(t) for t in _TOLERATIONS if t["key"] not in keys)
            given: dict[str, Any] = obj["status"] if isinstance(obj.get("status"), dict) else {}
            status = {**given}
            _fill(status, "phase", "Pending")
            _fill(status, "qosClass", _qos_class(spec if isinstance(spec, dict) else {}))
            obj["status"] = status
        elif kind == "Namespace":
            spec = _fill(obj, "spec", {})
            if isinstance(spec, dict):
                _fill(spec, "finalizers", ["kubernetes"])
            obj["status"] = {"phase": "Active"}
            labels = _fill(obj["metadata"], "labels", {})
            if isinstance(labels, dict):
                labels["kubernetes.io/metadata.name"] = obj["metadata"].get("name", "")
        elif kind == "Secret":
            _fill(obj, "type", "Opaque")
        elif kind == "Service":
            self._allocate(obj)

    def _allocate(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        if not obj.get("status"):
            obj["status"] = {"loadBalancer": {}}
        if spec.get("type") == "ExternalName":
            return
        if not spec.get("clusterIP"):
            n = self._next_ip
            self._next_ip += 1
            spec["clusterIP"] = f"10.96.{n // 256 % 256}.{n % 256}"
        _fill(spec, "clusterIPs", [spec["clusterIP"]])
        _fill(spec, "ipFamilies", ["IPv4"])
        _fill(spec, "ipFamilyPolicy", "SingleStack")
        if spec.get("type") in ("NodePort", "LoadBalancer"):
            _fill(spec, "externalTrafficPolicy", "Cluster")
            for port in spec.get("ports") or ():
                if isinstance(port, dict) and not port.get("nodePort"):
                    port["nodePort"] = self._next_node_port
                    self._next_node_port += 1
            if spec.get("type") == "LoadBalancer":
                _fill(spec, "allocateLoadBalancerNodePorts", True)

    @staticmethod
    def _secret_data(obj: dict[str, Any]) -> None:
        string_data = obj.pop("stringData", None)
        if isinstance(string_data, dict) and string_data:
            data = dict(obj.get("data") or {})
            for key, value in string_data.items():
                data[key] = base64.b64encode(str(value).encode()).decode()
            obj["data"] = data
        for key, value in (obj.get("data") or {}).items():
            try:
                base64.b64decode(str(value), validate=True)
            except (binascii.Error, ValueError):
                raise _status.bad_request(
                    'Secret in version "v1" cannot be handled as a Secret: illegal base64 data '
                    f"at input byte 0 (data[{key}])"
                ) from None


def _empty_spec(rtype: ResourceType, node: Any, obj: dict[str, Any], subresource: str | None) -> None:
    """A built-in kind's missing ``spec`` that is a struct, not a pointer: validated (and served) empty."""
    if rtype.builtin and subresource is None and obj.get("spec") is None:
        props = (resolve(node) or {}).get("properties") or {}
        if "spec" in props and "$ref" in props["spec"]:
            obj["spec"] = {}


def _update_rules(
    rtype: ResourceType, obj: dict[str, Any], old: dict[str, Any], subresource: str | None, errs: _rules.Errors
) -> None:
    """What an update may not change: no new finalizers while deleting, the kind's immutable fields."""
    if old["metadata"].get("deletionTimestamp"):
        added = [
            f for f in obj["metadata"].get("finalizers") or () if f not in (old["metadata"].get("finalizers") or ())
        ]
        if added:
            listed = ", ".join(_rules.render(f) for f in added)
            errs.forbidden(
                "metadata.finalizers",
                "no new finalizers can be added if the "
                f"object is being deleted, found new finalizers []string{{{listed}}}",
            )
    if subresource is None:
        immutable = _rules.IMMUTABLE.get((rtype.group, rtype.kind))
        if immutable is not None:
            immutable(old, obj, errs)


def _fill(obj: dict[str, Any], key: str, value: Any) -> Any:
    """``obj[key]``, set to ``value`` first when missing or null (``setdefault`` would keep an explicit null)."""
    if obj.get(key) is None:
        obj[key] = value
    return obj[key]


def _qos_class(spec: dict[str, Any]) -> str:
    requests_seen = limits_seen = False
    guaranteed = True
    for c in spec.get("containers") or ():
        resources = (c.get("resources") if isinstance(c, dict) else None) or {}
        requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
        requests_seen |= bool(requests)
        limits_seen |= bool(limits)
        for res in ("cpu", "memory"):
            if res not in limits or requests.get(res, limits.get(res)) != limits.get(res):
                guaranteed = False
    if not requests_seen and not limits_seen:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _invalid(rtype: ResourceType, name: str, errs: _rules.Errors) -> _status.StatusError:
    texts = [f"{field}: {text}" for field, _, text in errs.items]
    summary = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    kind = f"{rtype.kind}.{rtype.group}" if rtype.group else rtype.kind
    details: dict[str, Any] = {"name": name}
    if rtype.group:
        details["group"] = rtype.group
    details["kind"] = rtype.kind
    details["causes"] = [{"reason": reason, "message": text, "field": field} for field, reason, text in errs.items]
    return _status.StatusError(
        422, _status.status_body(422, "Invalid", f'{kind} "{name}" is invalid: {summary}', details)
    )
