#!/usr/bin/env python3
"""Summarise a cc_compat run: per-file counts and every failure's first error line, grouped by cause.

Usage: summarize.py last-<mode>.xml [last-<mode>-leaks.txt]   (markdown on stdout)

Causes: internals (the test reads cloudcoil's private internals: out of scope), missing name (an import
fails), missing method/attribute, harness problem, wrong behaviour (everything else).
"""

from __future__ import annotations

import ast
import re
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: Tests that read cloudcoil's private internals, by file and test-function name, with the reason.
INTERNALS: dict[tuple[str, str], str] = {
    ("test_config.py", "test_kubeconfig_initialization"): "reads httpx transport internals (client._transport._pool)",
    ("test_config.py", "test_incluster_initialization"): "patch targets inside cloudcoil.client._config",
    ("test_config.py", "test_exec_auth"): "patch target cloudcoil.client._config.subprocess.run, client._transport",
    ("test_config.py", "test_exec_auth_environment_inheritance"): "patch target cloudcoil.client._config.subprocess",
    ("test_config.py", "test_exec_auth_environment_override"): "patch target cloudcoil.client._config.subprocess",
    ("test_config.py", "test_exec_auth_token_in_headers"): "patch target inside cloudcoil.client._config, "
    "client.auth._token_expiry",
    ("test_resources.py", "test_scheme"): "cloudcoil.resources._Scheme",
    ("test_resources.py", "test_scheme_registration"): "cloudcoil.resources._Scheme",
    ("test_resources.py", "test_resource_list"): "pydantic's ValidationError (stand-in: ValueError)",
    ("test_resources.py", "test_resource_edge_cases"): "pydantic's ValidationError (stand-in: ValueError)",
    ("test_resources.py", "test_resource_validation"): "pydantic's ValidationError (stand-in: ValueError)",
    ("test_fluent.py", "test_builder_immutability"): "reads the builder's private _attrs",
    ("test_informers_edge_cases.py", "test_async_informer_resource_version_handling"): "informer._watch "
    "(skips itself without it)",
}

FILES = [
    "test_sync_e2e.py",
    "test_async_e2e.py",
    "test_resources.py",
    "test_fluent.py",
    "test_config.py",
    "test_informers.py",
    "test_informers_edge_cases.py",
]


def declared_tests(path: Path) -> int:
    """Tests a file declares (parametrize lists of literal length counted), for files that fail to import."""
    tree = ast.parse(path.read_text())
    total = 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            n = 1
            for deco in node.decorator_list:
                if (
                    isinstance(deco, ast.Call)
                    and isinstance(deco.func, ast.Attribute)
                    and deco.func.attr == "parametrize"
                    and len(deco.args) >= 2
                    and isinstance(deco.args[1], (ast.List, ast.Tuple))
                ):
                    n *= len(deco.args[1].elts)
            total += n
    return total


def first_error_line(text: str, message: str) -> str:
    """The exception line: the first ``E   `` line of the traceback, else the message's first line."""
    for line in text.splitlines():
        if line.startswith("E   "):
            return line[4:].strip()
    return (message or text or "?").strip().splitlines()[0] if (message or text).strip() else "?"


def cause(line: str) -> str:
    if "cc_compat harness" in line:
        return "harness problem"
    if re.search(r"No module named 'cloudcoil'", line):
        return "internals"
    if re.match(r"(ImportError|ModuleNotFoundError)", line):
        return "missing name"
    if re.match(r"AttributeError", line) or "unexpected keyword argument" in line:
        return "missing method/attribute"
    return "wrong behaviour"


def _outcome(case: ET.Element) -> tuple[str, str]:
    """A test case's outcome and its first error line (empty for a pass)."""
    for tag in ("failure", "error", "skipped"):
        el = case.find(tag)
        if el is not None:
            outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
            return outcome, first_error_line(el.text or "", el.get("message", ""))
    return "passed", ""


def tally(root: ET.Element) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, list[str]]], list[str]]:
    """Per-file counts, failures grouped by cause and first line, and the internals that did not pass."""
    counts: dict[str, dict[str, int]] = {f: defaultdict(int) for f in FILES}
    groups: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    internals_seen: list[str] = []
    for case in root.iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        file = next((f for f in FILES if classname.endswith(f[:-3]) or name.endswith(f[:-3])), None)
        collection = not classname and file is not None
        if file is None:
            file = classname or name
            counts.setdefault(file, defaultdict(int))
        func = name.split("[")[0]
        outcome, line = _outcome(case)
        if collection:
            n = declared_tests(HERE / "tests" / file)
            counts[file]["not collected"] += n
            groups[cause(line)][f"{file}: collection error ({n} tests not run): {line}"].append("*")
            continue
        counts[file][outcome] += 1
        internal = INTERNALS.get((file, func))
        if internal and outcome != "passed":
            internals_seen.append(f"{file}::{name} [{outcome}] ({internal}): {line}")
            counts[file]["of which internals"] += 1
            continue
        if outcome in ("failed", "error"):
            groups[cause(line)][line].append(
                f"{file}::{name}" + (" (teardown/setup error)" if outcome == "error" else "")
            )
        elif outcome == "skipped":
            groups["skipped"][line].append(f"{file}::{name}")
    return counts, groups, internals_seen


def print_counts(counts: dict[str, dict[str, int]]) -> None:
    cols = ["passed", "failed", "error", "skipped", "not collected", "of which internals"]
    print("| file | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    totals: dict[str, int] = defaultdict(int)
    for file, c in counts.items():
        print(f"| {file} | " + " | ".join(str(c.get(k, 0)) for k in cols) + " |")
        for k in cols:
            totals[k] += c.get(k, 0)
    print("| **total** | " + " | ".join(str(totals[k]) for k in cols) + " |")


def print_groups(groups: dict[str, dict[str, list[str]]]) -> None:
    for group in (
        "missing name",
        "missing method/attribute",
        "wrong behaviour",
        "harness problem",
        "internals",
        "skipped",
    ):
        if group not in groups:
            continue
        print(f"\n### {group}\n")
        for line, tests in sorted(groups[group].items(), key=lambda kv: -len(kv[1])):
            who = "" if tests == ["*"] else f" — {len(tests)}: " + ", ".join(tests)
            print(f"- `{line[:300]}`{who}")


def main() -> int:
    xml = Path(sys.argv[1])
    leaks = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    counts, groups, internals_seen = tally(ET.parse(xml).getroot())
    print_counts(counts)
    print_groups(groups)
    if internals_seen:
        print("\n### internals (out of scope; not passing)\n")
        for entry in internals_seen:
            print(f"- {entry[:400]}")
    if leaks and leaks.exists() and leaks.read_text().strip():
        print("\n### threads left running (after a 5 s join grace)\n")
        for entry in leaks.read_text().splitlines():
            print(f"- {entry[:400]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
