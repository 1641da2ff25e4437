"""examples/operator.py --manifests: the Role it prints is exactly what the operator runtime sends
(the real tier runs the operator under it and removes each verb in turn)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from cloudcoil_cache.application._rbac import verbs_granted

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "operator.py"


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_operator_rbac", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_prints_exactly_the_verbs_the_runtime_uses(capsys):
    docs = _example().main(["--manifests", "--namespace", "ops"])["manifests"]
    assert [d["kind"] for d in docs] == ["ServiceAccount", "Role", "RoleBinding"]
    assert verbs_granted(docs[1]["rules"]) == {
        ("example.com", "widgets", "list"),
        ("example.com", "widgets", "watch"),
        ("example.com", "widgets", "patch"),  # the finalizer, added and removed
        ("example.com", "widgets/status", "patch"),
        ("", "configmaps", "list"),
        ("", "configmaps", "watch"),
        ("", "configmaps", "create"),  # server-side apply of a new child
        ("", "configmaps", "patch"),
        ("events.k8s.io", "events", "create"),
        ("events.k8s.io", "events", "patch"),  # a repeated event: its series
        ("coordination.k8s.io", "leases", "get"),
        ("coordination.k8s.io", "leases", "create"),
        ("coordination.k8s.io", "leases", "update"),
    }
    assert "kind: Role" in capsys.readouterr().out
