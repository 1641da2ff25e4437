"""Generator of the fake API server's protobuf field table from Kubernetes' ``generated.proto`` files.

Run from the repository root (the files come with the Go module cache of tools/real-apiserver)::

    python tools/generate_fake_protobuf.py --modules ~/go/pkg/mod/k8s.io

It rewrites ``cloudcoil_cache/testing/_data/protobuf.json.gz``: for every message of the built-in
API (``k8s.io/api``, apimachinery's meta/runtime/intstr/resource, apiextensions, apiregistration),
``{"<package>.<Message>": {"<field number>": [json name, type, label]}}`` where type is a scalar
(``string``, ``int64``, ...), a fully qualified message name, or ``map<K,V>``, and label is
``optional`` or ``repeated``. The fake server decodes protobuf request bodies with it (kubectl sends
them for ``create deployment``, ``auth can-i``, ...). Output is deterministic; a test regenerates it
when the proto files are present.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any

__all__ = ["build_table", "generate", "main", "proto_files"]

_DEFAULT_MODULES = Path.home() / "go" / "pkg" / "mod" / "k8s.io"
_DEFAULT_OUT = Path(__file__).resolve().parent.parent / "cloudcoil_cache" / "testing" / "_data" / "protobuf.json.gz"
_VERSION = "v0.33.13"
_SCALARS = {
    "string",
    "bytes",
    "bool",
    "int32",
    "int64",
    "uint32",
    "uint64",
    "sint32",
    "sint64",
    "fixed32",
    "fixed64",
    "sfixed32",
    "sfixed64",
    "double",
    "float",
}
_FIELD = re.compile(
    r"^\s*(optional|repeated|required)?\s*(map\s*<\s*[\w.]+\s*,\s*[\w.]+\s*>|[\w.]+)\s+(\w+)\s*=\s*(\d+)"
)


def proto_files(modules: Path) -> list[Path]:
    """The ``generated.proto`` files of the built-in API under a ``k8s.io`` module folder."""
    roots = [
        modules / f"api@{_VERSION}",
        modules / f"apimachinery@{_VERSION}" / "pkg" / "apis" / "meta" / "v1",
        modules / f"apimachinery@{_VERSION}" / "pkg" / "runtime",
        modules / f"apimachinery@{_VERSION}" / "pkg" / "util" / "intstr",
        modules / f"apimachinery@{_VERSION}" / "pkg" / "api" / "resource",
        modules / f"apiextensions-apiserver@{_VERSION}" / "pkg" / "apis" / "apiextensions" / "v1",
        modules / f"kube-aggregator@{_VERSION}" / "pkg" / "apis" / "apiregistration" / "v1",
    ]
    files: list[Path] = []
    for root in roots:
        if root.name == "runtime":
            files.extend(p for p in [root / "generated.proto"] if p.exists())
        else:
            files.extend(sorted(root.rglob("generated.proto")))
    return files


def _parse(text: str) -> tuple[str, dict[str, dict[str, list[str]]]]:
    package = ""
    messages: dict[str, dict[str, list[str]]] = {}
    current: str | None = None
    depth = 0
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if line.startswith("package "):
            package = line[len("package ") :].rstrip(";").strip()
            continue
        if line.startswith("message ") and depth == 0:
            current = line.split()[1]
            messages[current] = {}
            depth = line.count("{") - line.count("}")
            continue
        if current is None:
            continue
        depth += line.count("{") - line.count("}")
        if depth <= 0:
            current = None
            continue
        match = _FIELD.match(line)
        if match is None or depth != 1:
            continue
        label, kind, name, number = match.groups()
        messages[current][number] = [name, re.sub(r"\s+", "", kind), label or "optional"]
    return package, messages


def build_table(files: list[Path]) -> dict[str, dict[str, list[str]]]:
    table: dict[str, dict[str, list[str]]] = {}
    parsed = [_parse(path.read_text(encoding="utf-8")) for path in files]
    for package, messages in parsed:
        for message, fields in messages.items():
            resolved: dict[str, list[str]] = {}
            for number, (name, kind, label) in fields.items():
                resolved[number] = [name, _qualify(kind, package), label]
            table[f"{package}.{message}"] = resolved
    return dict(sorted(table.items()))


def _qualify(kind: str, package: str) -> str:
    if kind.startswith("map<"):
        key, value = kind[4:-1].split(",")
        return f"map<{_qualify(key, package)},{_qualify(value, package)}>"
    if kind in _SCALARS:
        return kind
    if kind.startswith("."):
        return kind[1:]
    return f"{package}.{kind}"


def render(table: dict[str, Any]) -> bytes:
    data = json.dumps(table, separators=(",", ":"), sort_keys=True).encode()
    return gzip.compress(data, compresslevel=9, mtime=0)


def generate(modules: Path, out: Path = _DEFAULT_OUT) -> Path:
    files = proto_files(modules)
    if not files:
        raise FileNotFoundError(f"no generated.proto files under {modules}")
    out.write_bytes(render(build_table(files)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=Path, default=_DEFAULT_MODULES)
    parser.add_argument("--out", type=Path, default=_DEFAULT_OUT)
    args = parser.parse_args(argv)
    try:
        print(generate(args.modules, args.out))
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
