"""Generator of cloudcoil_cache's model modules from the Kubernetes OpenAPI (swagger 2.0) spec.

Run from the repository root::

    python tools/generate_models.py --spec ../shared/data/k8s-swagger-v1.30.2.json

It rewrites ``cloudcoil_cache/models/apimachinery.py`` and ``cloudcoil_cache/models/kubernetes/``.
The output is deterministic (sorted), so a test regenerates it and compares.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import sys
from pathlib import Path
from typing import Any

import attrs

__all__ = ["generate", "main", "render", "to_snake"]

_PKG = "cloudcoil_cache.models"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_DEFAULT_SPEC = Path("../shared/data/k8s-swagger-v1.30.2.json")
_DEFAULT_OUT = Path(__file__).resolve().parent.parent / "cloudcoil_cache" / "models"

# Definitions that are not classes: their Python type (and what it needs from _time).
_ALIASES = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "str",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "int | str",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "MicroTime",
}
_MODEL_MEMBERS = {"copy", "evolve", "to_dict", "from_dict", "from_dict_sealed"}
_RESOURCE_MEMBERS = _MODEL_MEMBERS | {
    "name",
    "namespace",
    "resource_version",
    "uid",
    "plural",
    "namespaced",
    "group",
    "version",
    "api_version",
    "kind",
}
_WORD = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]+[0-9]*(?![a-z])|[A-Z]?[a-z0-9]+|[A-Z]")
_DOC_WIDTH = 88
_LINE = 100


def _q(value: Any) -> str:
    """A Python literal with double quotes (JSON text is valid Python for str/bool/None/lists)."""
    if value is None or isinstance(value, bool):
        return repr(value)
    return json.dumps(value)


def to_snake(wire: str) -> str:
    """Attribute name of a wire name: ``podCIDRs`` → ``pod_cidrs``, ``$ref`` → ``ref``."""
    parts = []
    for chunk in re.split(r"[^A-Za-z0-9]+", wire):
        parts += [w.lower() for w in _WORD.findall(chunk)]
    return "_".join(parts)


def _camel(snake: str) -> str:
    head, *rest = snake.rstrip("_").split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _module_of(name: str) -> str | None:
    """Dotted module (relative to models) that holds definition ``name``, or None for aliases."""
    if name in _ALIASES:
        return None
    if name.startswith(_META) or name == "io.k8s.apimachinery.pkg.version.Info":
        return "apimachinery"
    parts = name.split(".")
    if name.startswith("io.k8s.api."):
        return f"kubernetes.{parts[3]}.{parts[4]}"
    if name.startswith(("io.k8s.apiextensions-apiserver.", "io.k8s.kube-aggregator.")):
        return f"kubernetes.{parts[-3]}.{parts[-2]}"
    return None


def _is_free_form(d: dict[str, Any]) -> bool:
    return "properties" not in d


def _free_form_type(d: dict[str, Any]) -> str:
    return "dict[str, Any]" if d.get("type") == "object" else "Any"


def _doc(text: str | None, fallback: str) -> str:
    text = " ".join((text or fallback).split())
    match = re.search(r"(?<=[a-z0-9)\]`'\"])\.(\s|$)", text)
    if match:
        text = text[: match.start() + 1]
    if len(text) > _DOC_WIDTH:
        text = text[: _DOC_WIDTH - 3].rstrip() + "..."
    text = text.replace("\\", "\\\\").replace('"""', "'''")
    if text.endswith('"'):
        text += " "
    return text


@attrs.define
class _Field:
    attr: str
    wire: str
    type: str
    required: bool


@attrs.define
class _Class:
    name: str
    module: str
    doc: str
    fields: list[_Field]
    gvk: dict[str, str] | None = None
    plural: str | None = None
    namespaced: bool = False


class _Spec:
    """The parsed spec: classes per module, resource metadata from ``paths``."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.defs: dict[str, Any] = spec["definitions"]
        self.version = spec.get("info", {}).get("version", "")
        self.scopes = self._scopes(spec.get("paths", {}))
        self.imports: dict[str, set[tuple[str, str]]] = {}
        self.typing: dict[str, set[str]] = {}

    @staticmethod
    def _scopes(paths: dict[str, Any]) -> dict[tuple[str, str, str], tuple[str | None, bool]]:
        """(group, version, kind) → (plural, namespaced): GET item paths, else POST collections."""
        found: dict[tuple[str, str, str], tuple[int, str | None, bool]] = {}
        for path in sorted(paths):
            for _method, op in sorted(paths[path].items()):
                if not isinstance(op, dict) or "x-kubernetes-group-version-kind" not in op:
                    continue
                gvk = op["x-kubernetes-group-version-kind"]
                key = (gvk["group"], gvk["version"], gvk["kind"])
                action = op.get("x-kubernetes-action")
                namespaced = "/namespaces/{namespace}/" in path
                segments = path.split("/")
                if action == "get" and segments[-1] == "{name}":
                    rank, plural = (0 if namespaced else 1), segments[-2]
                elif action == "post" and "{name}" not in path:
                    rank, plural = (2 if namespaced else 3), segments[-1]
                else:
                    continue
                if key not in found or rank < found[key][0]:
                    found[key] = (rank, plural, namespaced)
        return {k: (v[1], v[2]) for k, v in found.items()}

    def type_of(self, prop: dict[str, Any], module: str) -> str:
        if "$ref" in prop:
            return self.ref_type(prop["$ref"].rsplit("/", 1)[-1], module)
        kind, fmt = prop.get("type"), prop.get("format")
        if kind == "string":
            if fmt == "date-time":
                self.typing.setdefault(module, set()).add("Time")
                return "Time"
            return "str"
        if kind == "integer":
            return "int"
        if kind == "number":
            return "float"
        if kind == "boolean":
            return "bool"
        if kind == "array":
            return f"list[{self.type_of(prop.get('items', {}), module)}]"
        extra = prop.get("additionalProperties")
        if kind == "object" and isinstance(extra, dict):
            return f"dict[str, {self.type_of(extra, module)}]"
        self.typing.setdefault(module, set()).add("Any")
        return "dict[str, Any]" if kind == "object" else "Any"

    def ref_type(self, name: str, module: str) -> str:
        if name in _ALIASES:
            alias = _ALIASES[name]
            if alias in ("Time", "MicroTime"):
                self.typing.setdefault(module, set()).add(alias)
            return alias
        target = _module_of(name)
        definition = self.defs[name]
        if target is None or _is_free_form(definition):
            result = _free_form_type(definition)
            self.typing.setdefault(module, set()).add("Any")
            return result
        cls = name.rsplit(".", 1)[-1]
        if target != module:
            self.imports.setdefault(module, set()).add((target, cls))
        return cls

    def classes(self) -> dict[str, list[_Class]]:
        out: dict[str, list[_Class]] = {}
        for name in sorted(self.defs):
            module = _module_of(name)
            d = self.defs[name]
            if module is None or _is_free_form(d):
                continue
            out.setdefault(module, []).append(self._class(name, module, d))
        for classes in out.values():
            classes.sort(key=lambda c: c.name)
        return out

    def _class(self, name: str, module: str, d: dict[str, Any]) -> _Class:
        short = name.rsplit(".", 1)[-1]
        props = d["properties"]
        gvk = self._resource_gvk(name, d)
        reserved = _RESOURCE_MEMBERS if gvk else _MODEL_MEMBERS
        fields: list[_Field] = []
        seen: dict[str, str] = {}
        for wire in props:
            if gvk and wire in ("apiVersion", "kind"):
                continue
            attr = to_snake(wire)
            if keyword.iskeyword(attr) or attr in reserved:
                attr += "_"
            if attr in seen:
                raise ValueError(f"{name}: {wire!r} and {seen[attr]!r} both map to {attr!r}")
            seen[attr] = wire
            fields.append(_Field(attr, wire, self.type_of(props[wire], module), wire in d.get("required", ())))
        fields.sort(key=lambda f: f.attr)
        cls = _Class(short, module, _doc(d.get("description"), short), fields, gvk)
        if gvk:
            cls.plural, cls.namespaced = self.scopes.get((gvk["group"], gvk["version"], gvk["kind"]), (None, False))
        return cls

    @staticmethod
    def _resource_gvk(name: str, d: dict[str, Any]) -> dict[str, str] | None:
        """A top-level kind has one GVK and ObjectMeta metadata (lists, Status are plain models)."""
        gvks = d.get("x-kubernetes-group-version-kind") or []
        meta = d.get("properties", {}).get("metadata", {})
        if len(gvks) != 1 or meta.get("$ref", "").rsplit("/", 1)[-1] != _META + "ObjectMeta":
            return None
        return dict(gvks[0])


def _render_class(c: _Class) -> list[str]:
    base = "Resource" if c.gvk else "Model"
    lines = ["", "", "@model", f"class {c.name}({base}):", f'    """{c.doc}"""', ""]
    if c.gvk:
        group, version = c.gvk["group"], c.gvk["version"]
        api_version = f"{group}/{version}" if group else version
        lines += [
            f"    api_version: ClassVar[str] = {_q(api_version)}",
            f"    kind: ClassVar[str] = {_q(c.gvk['kind'])}",
            f"    plural: ClassVar[str | None] = {_q(c.plural)}",
            f"    namespaced: ClassVar[bool] = {_q(c.namespaced)}",
            f"    group: ClassVar[str] = {_q(group)}",
            f"    version: ClassVar[str] = {_q(version)}",
        ]
    wire = {f.attr: f.wire for f in c.fields if _camel(f.attr) != f.wire}
    if wire:
        items = ", ".join(f"{_q(k)}: {_q(v)}" for k, v in sorted(wire.items()))
        line = f"    _wire: ClassVar[dict[str, str]] = {{{items}}}"
        if len(line) <= _LINE:
            lines.append(line)
        else:
            lines.append("    _wire: ClassVar[dict[str, str]] = {")
            lines += [f"        {_q(k)}: {_q(v)}," for k, v in sorted(wire.items())]
            lines.append("    }")
    if c.gvk or wire:
        lines.append("")
    for f in c.fields:
        note = "  # required" if f.required else ""
        lines.append(f"    {f.attr}: {f.type} | None = None{note}")
    if not c.fields:
        lines.append("    pass")
    while lines[-1] == "":
        lines.pop()
    return lines


def render(spec: dict[str, Any]) -> dict[str, str]:
    """Every generated file: relative path → source text."""
    s = _Spec(spec)
    modules = s.classes()
    files: dict[str, str] = {}
    index: dict[tuple[str, str], str] = {}
    groups: dict[str, set[str]] = {}
    for module, classes in sorted(modules.items()):
        files[module.replace(".", "/") + ".py"] = _render_module(s, module, classes)
        for c in classes:
            if c.gvk:
                group, version = c.gvk["group"], c.gvk["version"]
                index[(f"{group}/{version}" if group else version, c.gvk["kind"])] = f"{_PKG}.{module}"
        if module.startswith("kubernetes."):
            _, group, version = module.split(".")
            groups.setdefault(group, set()).add(version)
    files["kubernetes/__init__.py"] = _render_lazy_package(
        "Generated Kubernetes models, one subpackage per API group (imported lazily).",
        f"{_PKG}.kubernetes",
        sorted(groups),
    )
    for group, versions in sorted(groups.items()):
        files[f"kubernetes/{group}/__init__.py"] = _render_lazy_package(
            f"Generated models of the {group} API group (versions imported lazily).",
            f"{_PKG}.kubernetes.{group}",
            sorted(versions),
        )
    files["kubernetes/_index.py"] = _render_index(s.version, index)
    return files


def _render_module(s: _Spec, module: str, classes: list[_Class]) -> str:
    local = {c.name for c in classes}
    imports = s.imports.get(module, set())
    clash = [name for _, name in imports if name in local]
    if clash:
        raise ValueError(f"{module}: imported names clash with local classes: {sorted(clash)}")
    where = module.replace("kubernetes.", "").replace(".", "/")
    lines = [
        f'"""Generated models of {where} (Kubernetes {s.version} OpenAPI spec); do not edit."""',
        "",
        "# ruff: noqa: E501",
        "from __future__ import annotations",
        "",
    ]
    typing_names = (
        ["ClassVar"]
        if any(c.gvk for c in classes) or any(_camel(f.attr) != f.wire for c in classes for f in c.fields)
        else []
    )
    if "Any" in s.typing.get(module, set()):
        typing_names.append("Any")
    if typing_names:
        lines += [f"from typing import {', '.join(sorted(typing_names))}", ""]
    base_names = ["model"]
    if any(not c.gvk for c in classes):
        base_names.append("Model")
    # a module of kinds: their base with the API verbs, above the client; the model bases from _base. One
    # of models only (apimachinery, which _base imports for Resource.metadata): from the Model base below it
    if any(c.gvk for c in classes):
        lines.append("from cloudcoil_cache._resource import Resource")
    base_module = "_base" if any(c.gvk for c in classes) else "_model"
    lines.append(f"from {_PKG}.{base_module} import {', '.join(sorted(base_names))}")
    time_names = sorted(s.typing.get(module, set()) & {"Time", "MicroTime"})
    if time_names:
        lines.append(f"from {_PKG}._time import {', '.join(time_names)}")
    by_module: dict[str, list[str]] = {}
    for target, name in imports:
        by_module.setdefault(target, []).append(name)
    for target in sorted(by_module):
        names = sorted(by_module[target])
        lines.append(f"from {_PKG}.{target} import (")
        lines += [f"    {n}," for n in names]
        lines.append(")")
    lines += ["", "__all__ = ["]
    lines += [f"    {_q(c.name)}," for c in classes]
    lines.append("]")
    for c in classes:
        lines += _render_class(c)
    return "\n".join(lines) + "\n"


def _render_lazy_package(doc: str, package: str, children: list[str]) -> str:
    return "\n".join(
        [
            f'"""{doc}"""',
            "",
            "# ruff: noqa: E501",
            "from __future__ import annotations",
            "",
            "import importlib",
            "from typing import Any",
            "",
            "__all__ = [",
            *[f"    {_q(child)}," for child in children],
            "]",
            "",
            "",
            "def __getattr__(name: str) -> Any:",
            "    if name in __all__:",
            f'        return importlib.import_module(f"{package}.{{name}}")',
            '    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")',
            "",
            "",
            "def __dir__() -> list[str]:",
            "    return sorted(__all__)",
            "",
        ]
    )


def _render_index(version: str, index: dict[tuple[str, str], str]) -> str:
    lines = [
        f'"""Generated map of (apiVersion, kind) to the module of its class (Kubernetes {version})."""',  # noqa: E501
        "",
        "# ruff: noqa: E501",
        "from __future__ import annotations",
        "",
        '__all__ = ["MODULES"]',
        "",
        "MODULES: dict[tuple[str, str], str] = {",
    ]
    for (api_version, kind), module in sorted(index.items()):
        lines.append(f"    ({_q(api_version)}, {_q(kind)}): {_q(module)},")
    lines.append("}")
    return "\n".join(lines) + "\n"


def generate(spec_path: Path, out_dir: Path) -> list[Path]:
    """Write every generated file under ``out_dir`` (the ``models`` package directory)."""
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    written = []
    for rel, text in sorted(render(spec).items()):
        path = Path(out_dir) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=_DEFAULT_SPEC, help="swagger.json to read")
    parser.add_argument("--out", type=Path, default=_DEFAULT_OUT, help="models package directory")
    args = parser.parse_args(argv)
    written = generate(args.spec, args.out)
    print(f"wrote {len(written)} files under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
