"""No import cycles inside the library: the module graph, read from the source (AST), has no loop.

Every import statement of a module counts: at module level, under ``if TYPE_CHECKING:`` and inside
functions. A lazy import does not remove a dependency, it only hides it from import time: two modules
that reach each other are still one unit that cannot be read, tested or moved alone, and a type-only
import is part of the contract the module depends on. The one lower layer that reaches up by name
(``importlib.import_module``) is ``models/_methods.py``; the second test keeps it the only one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import cloudcoil_cache

PACKAGE = Path(cloudcoil_cache.__file__).parent

#: Packages not checked (none: testing/ became cycle-free once laid out like an API server).
NOT_YET_CHECKED: tuple[str, ...] = ()

#: Cycles known and not yet broken (none: issue 21 broke the models and client cycles). A cycle found
#: must lie inside one of these; they may only shrink.
KNOWN_CYCLES: tuple[frozenset[str], ...] = ()

#: Modules that import library modules by a name computed at run time (not a literal), and the prefix
#: of the modules that name can be: each counts as an import of all of them.
LOOKED_UP = {"cloudcoil_cache.resources": "cloudcoil_cache.models.kubernetes."}


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ("cloudcoil_cache", *path.relative_to(PACKAGE).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return modules


MODULES = _modules()


def _module_of(dotted: str) -> str | None:
    """The module ``dotted`` names, or the module defining it (``pkg.mod.Name`` → ``pkg.mod``)."""
    parts = dotted.split(".")
    while parts:
        name = ".".join(parts)
        if name in MODULES:
            return name
        parts.pop()
    return None


def _imported(name: str, path: Path) -> set[str]:
    """The library modules that module ``name`` imports, wherever the import statement is."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            # ``from pkg import mod`` imports the module pkg.mod; ``from mod import Name`` the module mod
            targets = [f"{module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Call) and _called(node) in ("import_module", "__import__") and node.args:
            targets = _named(name, node.args[0])
        else:
            continue
        for target in targets:
            if target.startswith("cloudcoil_cache."):
                module_name = _module_of(target)
                if module_name is not None and module_name != name:
                    found.add(module_name)
    return found


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _named(importer: str, arg: ast.expr) -> list[str]:
    """The modules an ``import_module(arg)`` in ``importer`` can import."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value]
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        prefix = str(arg.values[0].value)
    else:
        prefix = LOOKED_UP.get(importer, "")
        assert prefix, f"{importer} imports a module by a name computed at run time: list it in LOOKED_UP"
    return [m for m in MODULES if m.startswith(prefix)] if prefix.startswith("cloudcoil_cache") else []


def _graph() -> dict[str, set[str]]:
    def checked(module: str) -> bool:
        return not any(module == p or module.startswith(p + ".") for p in NOT_YET_CHECKED)

    return {name: {m for m in _imported(name, path) if checked(m)} for name, path in MODULES.items() if checked(name)}


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_the_cycle_finder_finds_a_cycle_and_ignores_a_chain():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_import_reader_sees_lazy_and_type_only_imports():
    graph = _graph()
    assert "cloudcoil_cache.controller._metrics" in graph["cloudcoil_cache.controller._manager"]
    assert "cloudcoil_cache.models.kubernetes.core.v1" in graph["cloudcoil_cache.resources"]  # by name
    assert "cloudcoil_cache.models.kubernetes.core.v1" in graph["cloudcoil_cache.models.kubernetes.core"]  # f-string


def test_the_library_has_no_import_cycles():
    new = [sorted(c) for c in _cycles(_graph()) if not any(c <= known for known in KNOWN_CYCLES)]
    assert not new, "import cycles (break them: pass a callable down, or move the shared part lower):\n" + "\n".join(
        " <-> ".join(c) for c in new
    )


def test_only_the_documented_modules_import_by_a_name_computed_at_run_time():
    found = set()
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and _called(node) == "import_module" and node.args:
                if not isinstance(node.args[0], (ast.Constant, ast.JoinedStr)):
                    found.add(name)
    assert found == set(LOOKED_UP)
