#!/usr/bin/env python3
"""Regenerate tests/ here from the verbatim cloudcoil copies in upstream/tests/ (tools/cloudcoil-compat).

Only import lines are rewritten (cloudcoil -> cloudcoil_cache), plus the few documented lines listed
in CHANGES.md (third-party imports the project does not install, the model-distribution version
constant). Every rewrite is printed as ``file:line: old -> new``; the run fails if an import of
``cloudcoil`` is left, or if a documented rewrite no longer matches (the upstream copy changed).

Usage: python3 rename.py [--edge-aliases]   (idempotent; wipes and rewrites tests/)

--edge-aliases (OFF by default; run.sh sets it when CC_EDGE_ALIASES=1): the only stored version of
test_informers_edge_cases.py (28441c4) calls Cache.async_wait_for_sync()/wait_for_cache_sync(), names of an
older cloudcoil Cache; the stored test_informers.py (55e822e) uses async_wait()/wait(). With the flag those two
calls are rewritten to the newer names so that the file's tests reach their actual checks (CHANGES.md).
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "upstream" / "tests"
DST = HERE / "tests"

#: The files of cloudcoil's suite that run here, plus test_utils.py (a helper test_informers imports).
#: upstream/tests/conftest.py is NOT copied: tools/cloudcoil-compat/conftest.py provides its fixture.
FILES = [
    "test_sync_e2e.py",
    "test_async_e2e.py",
    "test_resources.py",
    "test_fluent.py",
    "test_config.py",
    "test_informers.py",
    "test_informers_edge_cases.py",
    "test_utils.py",
]

#: The Kubernetes version the project's models and real tier are pinned to (testing/_real.py).
K8S_VERSION = "1.33.13"

# The generic rename: an import statement's module path starting with the package `cloudcoil`.
_IMPORT = re.compile(r"^(\s*)(from|import)(\s+)cloudcoil(?=[.\s])")

#: Exact-line rewrites beyond the generic rename (each listed in CHANGES.md), per file.
#: (old line, new line); old must occur exactly once in the file.
SPECIAL: dict[str, list[tuple[str, str]]] = {
    "*": [
        (
            'k8s_version = ".".join(version("cloudcoil.models.kubernetes").split(".")[:3])',
            f'k8s_version = ".".join("{K8S_VERSION}".split(".")[:3])'
            '  # cc_compat: was version("cloudcoil.models.kubernetes")',
        ),
    ],
    "test_resources.py": [
        (
            "from cloudcoil.resources import GVK, Resource, ResourceList, _Scheme, get_model, parse, parse_file",
            "from cloudcoil_cache.resources import GVK, Resource, ResourceList, get_model, parse, parse_file"
            "  # cc_compat: _Scheme moved to the next line\n"
            "from cc_compat_shims import _Scheme  # cc_compat: cloudcoil's private scheme registry",
        ),
        (
            "from pydantic import ValidationError",
            "from cc_compat_shims import ValidationError  # cc_compat: was from pydantic import ValidationError",
        ),
    ],
    "test_config.py": [
        (
            "from httpx import Response",
            "from cc_compat_shims import Response  # cc_compat: was from httpx import Response",
        ),
    ],
    "test_utils.py": [
        (
            "from cloudcoil.caching._informer import AsyncInformer, SyncInformer",
            "from cc_compat_shims import AsyncInformer, SyncInformer"
            "  # cc_compat: was from cloudcoil.caching._informer import AsyncInformer, SyncInformer",
        ),
    ],
}


EDGE_ALIASES = [("cache.async_wait_for_sync(", "cache.async_wait("), ("cache.wait_for_cache_sync(", "cache.wait(")]


def convert(name: str, text: str, edge_aliases: bool = False) -> tuple[str, list[str]]:
    log: list[str] = []
    lines = text.split("\n")
    _replace_specials(name, lines, log)
    _rename_imports(name, lines, log)
    if edge_aliases and name == "test_informers_edge_cases.py":
        _alias_edges(name, lines, log)
    out = "\n".join(lines)
    for i, line in enumerate(lines):
        if re.match(r"^\s*(from|import)\s+cloudcoil(?=[.\s])", line):
            raise SystemExit(f"{name}:{i + 1}: an import of cloudcoil is left: {line!r}")
    return out, log


def _replace_specials(name: str, lines: list[str], log: list[str]) -> None:
    """The whole-line replacements of ``SPECIAL`` (``*``: every file); a file's own must match once."""
    specials = SPECIAL.get("*", []) + SPECIAL.get(name, [])
    for old, new in specials:
        hits = [i for i, line in enumerate(lines) if line == old]
        if name in SPECIAL and (old, new) in SPECIAL[name] and len(hits) != 1:
            raise SystemExit(f"{name}: expected exactly one line {old!r}, found {len(hits)}: upstream changed?")
        for i in hits:
            lines[i] = new
            log.append(f"{name}:{i + 1}: {old}  ->  {new}")


def _rename_imports(name: str, lines: list[str], log: list[str]) -> None:
    """``cloudcoil`` imports renamed to ``cloudcoil_cache`` (not on the lines marked ``cc_compat:``)."""
    for i, line in enumerate(lines):
        if "cc_compat:" in line:
            continue
        new = _IMPORT.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}cloudcoil_cache", line)
        if new != line:
            lines[i] = new
            log.append(f"{name}:{i + 1}: {line.strip()}  ->  {new.strip()}")


def _alias_edges(name: str, lines: list[str], log: list[str]) -> None:
    """``--edge-aliases``: the renamed wait methods of ``EDGE_ALIASES``."""
    for i, line in enumerate(lines):
        for old, new in EDGE_ALIASES:
            if old in line:
                lines[i] = line = line.replace(old, new) + "  # cc_compat --edge-aliases: was " + old.rstrip("(")
                log.append(f"{name}:{i + 1}: {old} -> {new}")


def main() -> int:
    edge_aliases = "--edge-aliases" in sys.argv[1:]
    if DST.exists():
        shutil.rmtree(DST)
    DST.mkdir()
    (DST / "__init__.py").write_text('"""cloudcoil\'s test files, imports renamed by rename.py (generated)."""\n')
    shutil.copytree(SRC / "data", DST / "data")
    for name in FILES:
        text, log = convert(name, (SRC / name).read_text(), edge_aliases)
        (DST / name).write_text(text)
        for entry in log:
            print(entry)
    print(f"wrote {len(FILES)} files and data/ to {DST}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
