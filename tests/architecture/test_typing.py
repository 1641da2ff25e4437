"""``mypy --strict`` on the package (configuration in pyproject.toml: strict, generated models included), and
the types a user's checker sees of cloudcoil's verbs (``typing_probe.py``)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Checked on their own first, so a regression there is named even when the whole-package test fails.
CLEAN = ("cloudcoil_cache/cli/", "cloudcoil_cache/__main__.py")
PROBE = "tests/architecture/typing_probe.py"
POD = "cloudcoil_cache.models.kubernetes.core.v1.Pod"
RESOURCE = "cloudcoil_cache._resource.Resource"
#: what ``reveal_type`` says on each line of the probe marked ``# <name>``
REVEALED = {
    "get": POD,
    "list": f"cloudcoil_cache.models._list.ResourceList[{POD}]",
    "list_by_index": f"cloudcoil_cache.models._list.ResourceList[{POD}]",
    "save": POD,
    "create": POD,
    "metadata": "cloudcoil_cache.models.apimachinery.ObjectMeta | None",
    "parse": RESOURCE,
    "parse_list": f"list[{RESOURCE}]",
    "get_model": f"type[{RESOURCE}]",
    "client_for": f"cloudcoil_cache.client._resource_client.Api[{POD}]",
    "client_for_async": f"cloudcoil_cache.client._async_client.AsyncApi[{POD}]",
    "api_get": POD,
    "from_file": POD,
    "async_get": POD,
    "async_list": f"cloudcoil_cache.models._list.ResourceList[{POD}]",
    "async_list_by_index": f"cloudcoil_cache.models._list.ResourceList[{POD}]",
    "async_save": POD,
    "async_client_for": POD,
    "delete": f"{POD} | cloudcoil_cache.models.apimachinery.Status",
    "remove": f"{POD} | cloudcoil_cache.models.apimachinery.Status",
    "scale": POD,
    "wait_for": POD,
    "wait_for_named": "str",
    "delete_all": f"cloudcoil_cache.models._list.ResourceList[{POD}]",
    "watch_event": f"tuple[str, {POD}]",
    "construct": POD,
    "dynamic_get": "cloudcoil_cache._unstructured.Unstructured",
    "async_delete": f"{POD} | cloudcoil_cache.models.apimachinery.Status",
    "async_watch_event": f"tuple[str, {POD}]",
}


@pytest.fixture(scope="module")
def mypy_output() -> list[str]:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (it comes with the test extra)")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "cloudcoil_cache", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    lines = done.stdout.splitlines()
    errors = [line for line in lines if re.match(r"^\S+\.py:\d+: error:", line)]
    assert errors or done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]  # mypy itself failed
    return lines


@pytest.fixture(scope="module")
def mypy_errors(mypy_output: list[str]) -> list[str]:
    return [line for line in mypy_output if re.match(r"^\S+\.py:\d+: error:", line)]


def test_the_command_line_is_strictly_typed(mypy_errors: list[str]):
    mine = [line for line in mypy_errors if line.startswith(CLEAN)]
    assert not mine, "\n".join(mine)


def test_mypy_strict_passes_on_the_whole_package(mypy_errors: list[str]):
    assert not mypy_errors, f"{len(mypy_errors)} mypy errors:\n" + "\n".join(mypy_errors[:50])


def test_every_cloudcoil_verb_is_typed_for_the_user(mypy_output: list[str]):
    probe = (ROOT / PROBE).read_text().splitlines()
    seen = {}
    for line in mypy_output:
        found = re.match(rf"^{re.escape(PROBE)}:(\d+): note: Revealed type is \"(.*)\"$", line)
        if found:
            name = probe[int(found.group(1)) - 1].rsplit("# ", 1)[1].strip()
            seen[name] = found.group(2)
    assert seen == REVEALED
