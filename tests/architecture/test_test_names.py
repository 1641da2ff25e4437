"""Test modules have unique basenames: pytest imports them by basename (rootdir-relative, no packages),
so two ``test_install.py`` in different folders stop the whole suite at collection."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent


def test_test_module_basenames_are_unique():
    seen: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("*.py"):
        if path.name == "conftest.py" or "__pycache__" in path.parts or "artifacts" in path.parts:
            continue
        seen[path.name].append(str(path.relative_to(TESTS)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}
