"""The model modules import only lower ones; the one slot left (``_parse.kinds``) is filled on import."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from cloudcoil_cache.models import _fields, _parse
from cloudcoil_cache.models._base import Resource
from cloudcoil_cache.models.apimachinery import ObjectMeta
from cloudcoil_cache.models.kubernetes.core.v1 import Pod


def test_every_part_of_the_parse_slot_is_installed_once_the_package_is_imported():
    declared = list(type(_parse.kinds).__annotations__)
    assert declared
    missing = [name for name in declared if not hasattr(_parse.kinds, name)]
    assert not missing, f"nothing installed for {missing}"


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


def test_the_model_base_imports_no_module_above_it():
    # _model is below apimachinery and _base: importing it alone (in a fresh process) must not
    # import them; the converter, code generation and builders below it not even _model
    code = textwrap.dedent("""
        import sys
        import cloudcoil_cache.models._model
        below = {"cloudcoil_cache.models._fields", "cloudcoil_cache.models._codegen",
                 "cloudcoil_cache.models._convert", "cloudcoil_cache.models._dump", "cloudcoil_cache.models._builders"}
        assert below <= set(sys.modules), below - set(sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
