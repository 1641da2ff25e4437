"""Generator of the fake API server's shipped OpenAPI data from the Kubernetes OpenAPI spec.

Run from the repository root::

    python tools/generate_fake_schema.py --spec ../shared/data/k8s-swagger-v1.30.2.json

It rewrites two gzip'd JSON files under ``cloudcoil_cache/testing/_data/``:

- ``openapi-v2.json.gz``: the spec itself (compact; the operations' descriptions dropped), served at
  ``/openapi/v2`` and converted per group-version for ``/openapi/v3``;
- ``schema.json.gz``: ``{"definitions": ..., "resources": [...]}`` — every definition without its
  descriptions (for validation, defaulting keys and field ownership) and every served resource
  (group, version, plural, kind, scope, verbs, subresources) read from the spec's paths.

``cloudcoil_cache.testing`` must not import the models and the spec is not shipped with them, hence
these files. The output is deterministic (sorted keys, gzip mtime 0), so a test regenerates and
compares.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["build_resources", "build_schema", "compact_spec", "generate", "main"]

_DEFAULT_SPEC = Path("../shared/data/k8s-swagger-v1.30.2.json")
_DEFAULT_OUT = Path(__file__).resolve().parent.parent / "cloudcoil_cache" / "testing" / "_data"

_ACTIONS = {
    "get": "get",
    "list": "list",
    "post": "create",
    "put": "update",
    "patch": "patch",
    "delete": "delete",
    "deletecollection": "deletecollection",
    "watch": "watch",
    "watchlist": "watch",
}
_VERB_ORDER = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def _strip_descriptions(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [_strip_descriptions(v) for v in value]
    return value


def _split_path(path: str) -> tuple[str, str, list[str]] | None:
    parts = path.strip("/").split("/")
    if parts[0] == "api" and len(parts) >= 3:
        return "", parts[1], parts[2:]
    if parts[0] == "apis" and len(parts) >= 4:
        return parts[1], parts[2], parts[3:]
    return None


def _resource_path(path: str) -> tuple[str, str, str, str | None, bool] | None:
    """A spec path's (group, version, plural, subresource, namespaced); None when it is no
    resource's (discovery, a proxy path, a path with extra segments)."""
    split = _split_path(path)
    if split is None:
        return None
    group, version, rest = split
    if rest[0] == "watch":
        rest = rest[1:]
    namespaced = False
    if len(rest) >= 3 and rest[0] == "namespaces" and rest[1] == "{namespace}":
        namespaced, rest = True, rest[2:]
    if not rest or rest[0].startswith("{") or len(rest) > 3:
        return None
    if len(rest) >= 2 and rest[1] != "{name}":
        return None
    return group, version, rest[0], rest[2] if len(rest) == 3 else None, namespaced


def build_resources(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Every resource the spec's paths serve, with its verbs and subresources, sorted."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for path, item in spec["paths"].items():
        resource = _resource_path(path)
        if resource is None:
            continue
        group, version, plural, sub, namespaced = resource
        for method, op in item.items():
            if not isinstance(op, dict) or "x-kubernetes-action" not in op:
                continue
            verb = _ACTIONS.get(op["x-kubernetes-action"])
            gvk = op.get("x-kubernetes-group-version-kind") or {}
            if verb is None or not gvk:
                continue
            entry = found.setdefault(
                (group, version, plural),
                {
                    "group": group,
                    "version": version,
                    "plural": plural,
                    "kind": "",
                    "namespaced": False,
                    "verbs": set(),
                    "subresources": {},
                },
            )
            if sub is None:
                entry["kind"] = gvk["kind"]
                entry["verbs"].add(verb)
                # "/api/v1/pods" (all namespaces) must not make pods cluster-scoped.
                entry["namespaced"] = entry["namespaced"] or namespaced
            else:
                subentry = entry["subresources"].setdefault(
                    sub, {"group": gvk["group"], "version": gvk["version"], "kind": gvk["kind"], "verbs": set()}
                )
                subentry["verbs"].add(verb)
    out = []
    for key in sorted(found):
        entry = found[key]
        if not entry["kind"]:  # only subresources were listed (cannot happen in 1.30)
            continue
        entry["verbs"] = [v for v in _VERB_ORDER if v in entry["verbs"]]
        entry["subresources"] = {
            name: {**sub, "verbs": [v for v in _VERB_ORDER if v in sub["verbs"]]}
            for name, sub in sorted(entry["subresources"].items())
        }
        out.append(entry)
    # Scope: a resource is namespaced when any of its paths is under /namespaces/{namespace}/
    # except the Namespace resource itself.
    return out


def build_schema(spec: dict[str, Any]) -> dict[str, Any]:
    """``{"definitions": ..., "resources": ...}`` (see the module docstring)."""
    return {
        "definitions": _strip_descriptions(spec["definitions"]),
        "resources": build_resources(spec),
    }


def compact_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with the operations' (not the definitions') descriptions dropped."""
    return {**spec, "paths": _strip_descriptions(spec["paths"])}


def _gzip_json(value: Any) -> bytes:
    data = json.dumps(value, separators=(",", ":"), sort_keys=True).encode()
    return gzip.compress(data, compresslevel=9, mtime=0)


def render(spec: dict[str, Any]) -> dict[str, bytes]:
    """File name → gzip'd content."""
    return {
        "openapi-v2.json.gz": _gzip_json(compact_spec(spec)),
        "schema.json.gz": _gzip_json(build_schema(spec)),
    }


def generate(spec_path: Path, out: Path = _DEFAULT_OUT) -> list[Path]:
    """Write the data files into ``out`` and return their paths."""
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in render(spec).items():
        (out / name).write_bytes(data)
        written.append(out / name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=_DEFAULT_SPEC)
    parser.add_argument("--out", type=Path, default=_DEFAULT_OUT)
    args = parser.parse_args(argv)
    if not args.spec.exists():
        print(f"the OpenAPI spec is not at {args.spec}", file=sys.stderr)
        return 2
    for path in generate(args.spec, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
