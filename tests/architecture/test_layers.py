"""The layering rule, checked mechanically: a module imports only from its own layer or below."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import cloudcoil_cache

PACKAGE = Path(cloudcoil_cache.__file__).parent

# layer of each top-level module/package of cloudcoil_cache (higher may import lower)
LAYERS = {
    "errors": 0,
    "_json": 0,
    "_yaml": 0,
    "_gc": 0,
    "_clock": 0,
    "_fork": 0,
    "_threads": 0,
    "_runnable": 0,
    "_deadline": 0,
    "models": 0,  # the models are data: classes, their converter, API metadata (no client)
    "apimachinery": 0,
    "_http": 1,
    "_listwatch": 2,
    "caching": 3,
    "client": 4,
    "aio": 5,
    "_resource": 5,  # the Resource base: the models' data with cloudcoil's verbs over client.Api
    "_unstructured": 5,
    "models.kubernetes": 5,  # the generated kinds: their base is _resource.Resource
    "resources": 5,  # cloudcoil's resources names; parse/get_model know every kind
    "admission": 6,  # webhooks: handlers read the cache through the client
    "controller": 7,
    "application": 8,  # controllers packaged: run, manifests (RBAC), install, a command line
    "testing": 8,  # a leaf: only the command line may import it
    "__main__": 9,
    "cli": 9,  # the command line: may import every layer
}
# testing/ is a separate leaf: it may import only errors (it must stay an independent oracle).
TESTING_ALLOWED = {"errors", "testing"}


#: Subpackages whose layer is not their top-level package's.
SUBLAYERS = ("models.kubernetes",)


def _layer_name(dotted: str) -> str:
    """The LAYERS name of module ``dotted`` (inside cloudcoil_cache, without the prefix)."""
    for sub in SUBLAYERS:
        if dotted == sub or dotted.startswith(sub + "."):
            return sub
    return dotted.split(".")[0]


def _imports(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(), str(path))
    rel = path.relative_to(PACKAGE).with_suffix("")
    package_parts = ["cloudcoil_cache", *rel.parts[:-1]]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("cloudcoil_cache."):
                    found.append((_layer_name(alias.name.split(".", 1)[1]), node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "cloudcoil_cache":
                found.extend((alias.name, node.lineno) for alias in node.names)
            elif target == "cloudcoil_cache.models":
                found.extend((_layer_name(f"models.{alias.name}"), node.lineno) for alias in node.names)
            elif target.startswith("cloudcoil_cache."):
                found.append((_layer_name(target.split(".", 1)[1]), node.lineno))
    return found


MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_imports_only_from_its_layer_or_below(path):
    top = _layer_name(".".join(path.relative_to(PACKAGE).with_suffix("").parts))
    if top == "__init__":
        return
    for name, line in _imports(path):
        if name in ("__version__", "__init__"):
            continue
        if top == "testing":
            assert name in TESTING_ALLOWED, f"{path}:{line} testing/ imports cloudcoil_cache.{name}"
            continue
        assert name in LAYERS, f"{path}:{line}: unknown module cloudcoil_cache.{name}: give it a layer"
        assert LAYERS[name] <= LAYERS[top], (
            f"{path}:{line}: {top} (layer {LAYERS[top]}) imports {name} (layer {LAYERS[name]})"
        )


@pytest.mark.parametrize(
    "module",
    [
        "cloudcoil_cache.errors",
        "cloudcoil_cache.caching",
        "cloudcoil_cache.client",
        "cloudcoil_cache.aio",
        "cloudcoil_cache.controller",
        "cloudcoil_cache.testing",
        "cloudcoil_cache.models",
        "cloudcoil_cache.apimachinery",
        "cloudcoil_cache.resources",
    ],
)
def test_public_modules_export_exactly_their_public_names(module):
    mod = importlib.import_module(module)
    exported = set(mod.__all__)
    missing = [name for name in exported if not hasattr(mod, name)]
    assert not missing, f"{module}.__all__ names missing attributes: {missing}"
    assert all(not name.startswith("_") for name in exported)


def test_every_module_has_a_one_line_docstring():
    lacking = [
        str(p.relative_to(PACKAGE))
        for p in MODULES
        if p.stat().st_size and not ast.get_docstring(ast.parse(p.read_text()))
    ]
    assert not lacking, f"modules without a docstring: {lacking}"
