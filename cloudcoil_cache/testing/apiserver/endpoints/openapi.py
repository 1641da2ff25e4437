"""``/openapi/v2`` and ``/openapi/v3`` from the shipped 1.30 spec, plus the registered CRDs' schemas.

v2 is the swagger document itself (custom resources added to its ``definitions`` and ``paths``);
v3 is built per group-version from it: ``$ref``s point into ``components/schemas``, body
parameters become ``requestBody`` and responses get ``content``. kubectl reads v3 for ``explain``,
for client-side ``apply`` patches and to learn that the server validates fields
(``fieldValidation``); v2 is its fallback.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from typing import Any, Iterable

from ..machinery.resources import ResourceRegistry, ResourceType
from ..machinery.schema import load_spec_bytes

__all__ = ["OpenAPI"]

_V2_REF = "#/definitions/"
_V3_REF = "#/components/schemas/"
_ACTION_METHODS = {
    "get": "get",
    "list": "get",
    "watch": "get",
    "post": "post",
    "put": "put",
    "patch": "patch",
    "delete": "delete",
    "deletecollection": "delete",
}


def _gv_prefix(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _reversed_group(group: str) -> str:
    return ".".join(reversed(group.split(".")))


def _cr_definition_name(rtype: ResourceType) -> str:
    return f"{_reversed_group(rtype.group)}.{rtype.version}.{rtype.kind}"


class OpenAPI:
    """Builds (and caches, per set of custom resources) the OpenAPI documents the server serves."""

    def __init__(self, registry: ResourceRegistry) -> None:
        self.registry = registry
        self._lock = threading.Lock()
        self._key: tuple[Any, ...] | None = None
        self._v2: bytes | None = None
        self._v3: dict[str, bytes] = {}
        self._parsed: dict[str, Any] | None = None

    # -- cache ---------------------------------------------------------------------------------

    def _custom(self) -> list[ResourceType]:
        return sorted((t for t in self.registry.all() if not t.builtin), key=lambda t: (t.group, t.version, t.plural))

    def _fresh(self) -> list[ResourceType]:
        custom = self._custom()
        key = tuple((t, json.dumps(t.schema, sort_keys=True), t.namespaced) for t in custom)
        if key != self._key:
            self._key, self._v2, self._v3 = key, None, {}
        return custom

    # -- v2 ------------------------------------------------------------------------------------

    def v2(self) -> bytes:
        with self._lock:
            custom = self._fresh()
            if self._v2 is None:
                if not custom:
                    self._v2 = load_spec_bytes()
                else:
                    spec = json.loads(load_spec_bytes())
                    for rtype in custom:
                        spec["definitions"][_cr_definition_name(rtype)] = _cr_schema(rtype)
                        spec["paths"].update(_cr_paths(rtype, _V2_REF))
                    self._v2 = json.dumps(spec, separators=(",", ":")).encode()
            return self._v2

    # -- v3 ------------------------------------------------------------------------------------

    def v3_root(self) -> dict[str, Any]:
        paths: dict[str, Any] = {}
        with self._lock:
            self._fresh()
            generation = repr(self._key)
        for prefix in self._group_versions():
            digest = hashlib.sha512(f"{generation}/{prefix}".encode()).hexdigest()[:64].upper()
            paths[prefix] = {"serverRelativeURL": f"/openapi/v3/{prefix}?hash={digest}"}
        return {"paths": paths}

    def _group_versions(self) -> list[str]:
        prefixes = {_gv_prefix(t.group, t.version) for t in self.registry.all()}
        return sorted(prefixes)

    def v3(self, prefix: str) -> bytes | None:
        """The OpenAPI 3 document of one group-version (``api/v1``, ``apis/apps/v1``)."""
        prefix = prefix.strip("/")
        if prefix not in self._group_versions():
            return None
        with self._lock:
            custom = self._fresh()
            cached = self._v3.get(prefix)
            if cached is None:
                cached = self._v3[prefix] = json.dumps(self._build_v3(prefix, custom), separators=(",", ":")).encode()
            return cached

    def _spec(self) -> dict[str, Any]:
        if self._parsed is None:
            self._parsed = json.loads(load_spec_bytes())
        return self._parsed

    def _build_v3(self, prefix: str, custom: list[ResourceType]) -> dict[str, Any]:
        spec = self._spec()  # shared: read, never modified
        definitions: dict[str, Any] = dict(spec["definitions"])
        parameters: dict[str, Any] = spec["parameters"]
        start = f"/{prefix}/"
        paths: dict[str, Any] = {}
        for path, item in spec["paths"].items():
            if path.startswith(start):
                paths[path] = _v3_path_item(item, parameters)
        for rtype in custom:
            if _gv_prefix(rtype.group, rtype.version) == prefix:
                definitions[_cr_definition_name(rtype)] = _cr_schema(rtype)
                for path, item in _cr_paths(rtype, _V2_REF).items():
                    paths[path] = _v3_path_item(item, parameters)
        paths = _rewrite_refs(paths)
        schemas = {name: _rewrite_refs(definitions[name]) for name in _closure(paths, definitions)}
        return {
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": spec["info"]["version"]},
            "paths": paths,
            "components": {
                "schemas": schemas,
                "securitySchemes": {
                    "BearerToken": {
                        "type": "apiKey",
                        "description": "Bearer Token authentication",
                        "name": "authorization",
                        "in": "header",
                    }
                },
            },
        }


def _closure(value: Any, definitions: dict[str, Any]) -> list[str]:
    """Every definition referenced from ``value`` (v3 refs), transitively."""
    seen: set[str] = set()
    pending = list(_refs(value))
    while pending:
        name = pending.pop()
        if name in seen or name not in definitions:
            continue
        seen.add(name)
        pending.extend(_refs(definitions[name], _V2_REF))
    return sorted(seen)


def _refs(value: Any, prefix: str = _V3_REF) -> Iterable[str]:
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str) and ref.startswith(prefix):
            yield ref[len(prefix) :]
        for sub in value.values():
            yield from _refs(sub, prefix)
    elif isinstance(value, list):
        for sub in value:
            yield from _refs(sub, prefix)


def _rewrite_refs(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: _rewrite_refs(v) for k, v in value.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith(_V2_REF):
            out["$ref"] = _V3_REF + ref[len(_V2_REF) :]
        return out
    if isinstance(value, list):
        return [_rewrite_refs(v) for v in value]
    return value


def _v3_parameter(param: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
    ref = param.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/parameters/"):
        param = parameters[ref[len("#/parameters/") :]]
    out = {k: v for k, v in param.items() if k in ("name", "in", "required", "description")}
    schema = {k: v for k, v in param.items() if k in ("type", "format", "items", "enum")}
    if "schema" in param:
        schema = param["schema"]
    out["schema"] = schema
    if param.get("uniqueItems"):
        out["schema"] = {**schema, "uniqueItems": True}
    return out


def _v3_path_item(item: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, op in item.items():
        if key == "parameters":
            out["parameters"] = [_v3_parameter(p, parameters) for p in op]
            continue
        if not isinstance(op, dict):
            continue
        new = {k: v for k, v in op.items() if k not in ("parameters", "responses", "consumes", "produces", "schemes")}
        params = [_v3_parameter(p, parameters) for p in op.get("parameters") or ()]
        body = next((p for p in params if p.get("in") == "body"), None)
        params = [p for p in params if p.get("in") != "body"]
        if params:
            new["parameters"] = params
        if body is not None:
            new["requestBody"] = {
                "content": {ctype: {"schema": body["schema"]} for ctype in op.get("consumes") or ["*/*"]},
                "required": True,
            }
        responses: dict[str, Any] = {}
        for code, response in (op.get("responses") or {}).items():
            entry: dict[str, Any] = {
                "description": {"200": "OK", "201": "Created", "202": "Accepted", "401": "Unauthorized"}.get(code, code)
            }
            if isinstance(response, dict) and "schema" in response:
                entry["content"] = {
                    ctype: {"schema": response["schema"]} for ctype in op.get("produces") or ["application/json"]
                }
            responses[code] = entry
        new["responses"] = responses
        out[key] = new
    return out


def _cr_schema(rtype: ResourceType) -> dict[str, Any]:
    schema: dict[str, Any] = (
        copy.deepcopy(rtype.schema)
        if isinstance(rtype.schema, dict)
        else {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    )
    props = schema.setdefault("properties", {})
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    props["metadata"] = {"$ref": _V2_REF + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    schema["type"] = "object"
    schema["x-kubernetes-group-version-kind"] = [{"group": rtype.group, "version": rtype.version, "kind": rtype.kind}]
    return schema


def _cr_paths(rtype: ResourceType, ref_prefix: str) -> dict[str, Any]:
    """Swagger path items for a custom resource (what kubectl looks for: actions, GVK, params)."""
    gvk = {"group": rtype.group, "version": rtype.version, "kind": rtype.kind}
    ref = {"$ref": ref_prefix + _cr_definition_name(rtype)}
    base = f"/apis/{rtype.group}/{rtype.version}/"
    base += f"namespaces/{{namespace}}/{rtype.plural}" if rtype.namespaced else rtype.plural
    write_params = [
        {"in": "query", "name": n, "type": "string", "uniqueItems": True}
        for n in ("dryRun", "fieldManager", "fieldValidation")
    ]

    def op(action: str, *, body: bool = False, extra: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        params = list(extra or [])
        if body:
            params.insert(0, {"in": "body", "name": "body", "required": True, "schema": ref})
        return {
            "operationId": f"{action}{rtype.kind}",
            "parameters": params,
            "consumes": [
                "application/json",
                "application/merge-patch+json",
                "application/json-patch+json",
                "application/apply-patch+yaml",
            ]
            if action == "patch"
            else ["application/json"],
            "produces": ["application/json"],
            "responses": {"200": {"schema": ref}},
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
        }

    return {
        base: {"get": op("list"), "post": op("post", body=True, extra=write_params), "delete": op("deletecollection")},
        base + "/{name}": {
            "get": op("get"),
            "put": op("put", body=True, extra=write_params),
            "patch": op(
                "patch",
                body=True,
                extra=[*write_params, {"in": "query", "name": "force", "type": "boolean", "uniqueItems": True}],
            ),
            "delete": op("delete"),
        },
    }
