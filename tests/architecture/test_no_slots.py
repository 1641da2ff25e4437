"""No install-at-import slots: no module assigns, at import, into the globals of another library module.

A lower module that leaves a holder for a higher one to fill (``lower.slot.fn = fn`` at the end of
the higher module) calls upward at run time while the import graph says it does not: the loop is
still there, only hidden from the cycle test, and what the slot holds is typed ``Any`` or
``Callable[..., Any]``. Read from the source (AST): a module-level assignment whose target is an
attribute of a library module (or of a name imported from one).
"""

from __future__ import annotations

import ast
from pathlib import Path

import cloudcoil_cache

PACKAGE = Path(cloudcoil_cache.__file__).parent

#: Slots known and not yet removed: (assigning module, the slot it assigns into). Empty: it stays so.
KNOWN_SLOTS: set[tuple[str, str]] = set()


def _module_name(path: Path) -> str:
    parts = ("cloudcoil_cache", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _library_names(tree: ast.Module) -> set[str]:
    """The names a module binds by importing from the library (modules and the names in them)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name.startswith("cloudcoil_cache"))
        elif isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("cloudcoil_cache")):
            names.update(a.asname or a.name for a in node.names)
    return names


def slots_assigned(source: str) -> set[str]:
    """The attributes of imported library names that ``source`` assigns at module level (``_base.parts``)."""
    tree = ast.parse(source)
    imported = _library_names(tree)
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        else:
            continue
        for target in targets:
            if not isinstance(target, ast.Attribute):
                continue
            root = target.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in imported:
                found.add(ast.unparse(target.value))
    return found


def test_the_reader_finds_an_assignment_into_another_modules_globals():
    source = "from cloudcoil_cache.models import _base\nfrom x import y\n_base.parts.dump = 1\ny.z = 2\nlocal = 3\n"
    assert slots_assigned(source) == {"_base.parts"}


def test_no_module_assigns_into_another_modules_globals_at_import():
    found = {
        (_module_name(path), slot)
        for path in sorted(PACKAGE.rglob("*.py"))
        for slot in slots_assigned(path.read_text())
    }
    assert found <= KNOWN_SLOTS, f"install-at-import slots (import the callee, or pass it down): {found - KNOWN_SLOTS}"
