"""The fake server's patch engines (RFC 7386 / RFC 6902) and its realistic object builders."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cloudcoil_cache.testing import (
    FakeAPIServer,
    make_configmap,
    make_deployment,
    make_pod,
    seed_pods,
)
from cloudcoil_cache.testing.apiserver.machinery.patch import PatchError, json_patch, merge_patch


@pytest.mark.parametrize(
    ("target", "patch", "expected"),
    [
        ({"a": 1}, {"a": 2}, {"a": 2}),
        ({"a": 1, "b": 2}, {"a": None}, {"b": 2}),
        ({"a": {"b": 1, "c": 2}}, {"a": {"b": None, "d": 3}}, {"a": {"c": 2, "d": 3}}),
        ({"a": [1, 2]}, {"a": [3]}, {"a": [3]}),
        ({"a": 1}, {"b": {"c": None}}, {"a": 1, "b": {}}),
        ({"a": "x"}, {"a": {"b": 1}}, {"a": {"b": 1}}),
    ],
    ids=[
        "replace",
        "remove",
        "nested",
        "lists-replace-whole",
        "null-inside-new-object",
        "scalar-to-object",
    ],
)
def test_merge_patch_follows_rfc_7386(target: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]) -> None:
    before = json.dumps(target)
    assert merge_patch(target, patch) == expected
    assert json.dumps(target) == before


@pytest.mark.parametrize(
    ("ops", "expected"),
    [
        ([{"op": "add", "path": "/b", "value": 2}], {"a": [1, 2], "b": 2}),
        ([{"op": "add", "path": "/a/1", "value": 9}], {"a": [1, 9, 2]}),
        ([{"op": "add", "path": "/a/-", "value": 3}], {"a": [1, 2, 3]}),
        ([{"op": "remove", "path": "/a/0"}], {"a": [2]}),
        ([{"op": "replace", "path": "/a", "value": "x"}], {"a": "x"}),
        ([{"op": "move", "from": "/a", "path": "/m"}], {"m": [1, 2]}),
        ([{"op": "copy", "from": "/a/0", "path": "/c"}], {"a": [1, 2], "c": 1}),
        ([{"op": "test", "path": "/a", "value": [1, 2]}], {"a": [1, 2]}),
        (
            [{"op": "add", "path": "/x~1y", "value": 1}, {"op": "add", "path": "/t~0", "value": 2}],
            {"a": [1, 2], "x/y": 1, "t~": 2},
        ),
    ],
    ids=[
        "add-key",
        "insert-into-list",
        "append",
        "remove",
        "replace",
        "move",
        "copy",
        "test-passes",
        "escaped-pointers",
    ],
)
def test_json_patch_operations_follow_rfc_6902(ops: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    target = {"a": [1, 2]}
    assert json_patch(target, ops) == expected
    assert target == {"a": [1, 2]}


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ([{"op": "test", "path": "/a", "value": 1}], "test failed"),
        ([{"op": "remove", "path": "/nope"}], "nonexistent"),
        ([{"op": "replace", "path": "/nope/x", "value": 1}], "does not exist"),
        ([{"op": "add", "path": "/a/7", "value": 1}], "out of range"),
        ([{"op": "jump", "path": "/a"}], "unknown patch operation"),
        ([{"op": "add", "path": "a", "value": 1}], "must start with '/'"),
        ([{"op": "move", "from": "/a", "path": "/a/0"}], "own child"),
        ({"op": "add"}, "must be a list"),
    ],
    ids=[
        "test-fails",
        "remove-missing",
        "missing-parent",
        "index-out-of-range",
        "unknown-op",
        "bad-pointer",
        "move-into-child",
        "not-a-list",
    ],
)
def test_bad_json_patches_raise_a_clear_patch_error(ops: Any, message: str) -> None:
    with pytest.raises(PatchError, match=message):
        json_patch({"a": [1, 2]}, ops)


def test_make_pod_is_realistic_and_about_six_and_a_half_kilobytes() -> None:
    pod = make_pod("web-1", "team-a", labels={"extra": "yes"}, node_name="n7", phase="Pending", index=3)
    size = len(json.dumps(pod, separators=(",", ":")))
    assert 6000 <= size <= 7200
    assert pod["metadata"]["labels"]["extra"] == "yes"
    assert pod["spec"]["nodeName"] == "n7" and pod["status"]["phase"] == "Pending"
    assert len(pod["spec"]["containers"]) == 2 and pod["metadata"]["managedFields"]
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
    assert "resourceVersion" not in pod["metadata"]


def test_make_pod_is_deterministic() -> None:
    assert make_pod("a", index=5) == make_pod("a", index=5)
    assert make_pod("a", index=5) != make_pod("a", index=6)


def test_seed_pods_spreads_pods_over_namespaces(fake_api_server: FakeAPIServer) -> None:
    keys = seed_pods(fake_api_server, 9, namespaces=("x", "y", "z"))
    assert len(keys) == 9 == len(fake_api_server.list("pods"))
    assert {len(fake_api_server.list("pods", namespace=ns)) for ns in ("x", "y", "z")} == {3}
    phases = {p["status"]["phase"] for p in fake_api_server.list("pods")}
    assert "Running" in phases and len(phases) > 1


def test_the_other_builders_create_cleanly(fake_api_server: FakeAPIServer) -> None:
    cm = fake_api_server.create("configmaps", make_configmap("c", data={"k": "v"}))
    deploy = fake_api_server.create("deployments.apps", make_deployment("d", replicas=2))
    assert cm["data"] == {"k": "v"}
    assert deploy["spec"]["replicas"] == 2 and deploy["metadata"]["generation"] == 1
