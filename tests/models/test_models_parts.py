"""The parts the higher model modules install in the lower ones (no import cycle): all there on import."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from cloudcoil_cache.models import _base, _builders

# what each lower module calls, and who installs it (see cloudcoil_cache/models/__init__.py)
PARTS = [_base.codec, _base.parts, _builders.parts]


@pytest.mark.parametrize("parts", PARTS, ids=lambda p: f"{type(p).__module__}.{type(p).__name__}")
def test_every_part_is_installed_once_the_package_is_imported(parts: object):
    declared = list(type(parts).__annotations__)
    assert declared
    missing = [name for name in declared if not hasattr(parts, name)]
    assert not missing, f"{type(parts).__name__}: nothing installed for {missing}"


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
