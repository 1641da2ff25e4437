"""The model modules import only lower ones (no slot is filled from above), and classes are told by marker."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

from cloudcoil_cache.models import _fields
from cloudcoil_cache.models._base import Resource
from cloudcoil_cache.models.apimachinery import ObjectMeta
from cloudcoil_cache.models.kubernetes.core.v1 import Pod


def test_a_class_is_a_model_or_a_resource_by_its_marker():
    sealed = Pod.__sealed_class__
    assert [_fields.is_model_class(t) for t in (Pod, sealed, ObjectMeta, dict, "Pod", list[int])] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]
    assert [_fields.is_resource_class(t) for t in (Pod, sealed, Resource, ObjectMeta, Pod())] == [
        True,
        True,
        True,
        False,
        False,
    ]


def test_a_kind_module_imported_first_builds_dumps_and_reads_files(tmp_path):
    pod_file, widget_file = tmp_path / "pod.yaml", tmp_path / "widget.yaml"
    pod_file.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n")
    widget_file.write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
    code = textwrap.dedent(f"""
        from cloudcoil_cache.models.kubernetes.core.v1 import Pod
        pod = Pod.builder().metadata(dict(name="b")).build()
        assert pod.model_dump(exclude_none=True) == {{"api_version": "v1", "kind": "Pod", "metadata": {{"name": "b"}}}}
        assert Pod.from_file({str(pod_file)!r}).name == "a"
        from cloudcoil_cache.resources import Resource, parse_file
        widget = parse_file({str(widget_file)!r})
        assert (type(widget).__name__, widget.name) == ("Unstructured", "w")
        assert Resource(api_version="v1", kind="Pod", metadata=dict(name="c")).metadata.name == "c"
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]


#: The models core from the bottom up: each module imports (anywhere in it) only modules before it.
CORE = [
    "_frozen",
    "_time",
    "_quantity",
    "_fields",
    "_codegen",
    "_convert",
    "_dump",
    "_builders",
    "_model",
    "apimachinery",
    "_base",
]


def _models_imported(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "cloudcoil_cache.models":
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("cloudcoil_cache.models."):
            found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[2] for a in node.names if a.name.startswith("cloudcoil_cache.models."))
    return found


def test_each_module_of_the_models_core_imports_only_the_ones_below_it():
    package = Path(_fields.__file__).parent
    above = {}
    for position, name in enumerate(CORE):
        core_imports = _models_imported(package / f"{name}.py") & set(CORE)
        above[name] = sorted(core_imports - set(CORE[:position]))
    assert above == {name: [] for name in CORE}
    # the models core never reaches the generated kinds (they sit above the client)
    assert not any("kubernetes" in _models_imported(package / f"{name}.py") for name in CORE)
