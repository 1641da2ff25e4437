"""Server-side apply and field ownership in the fake server (managedFields like the real server's)."""

from __future__ import annotations

from typing import Any

import pytest
import requests
import yaml

from cloudcoil_cache.testing import FakeAPIServer

APPLY = {"Content-Type": "application/apply-patch+yaml"}
CM = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"


def apply(
    server: FakeAPIServer, path: str, obj: dict[str, Any], manager: str, force: bool = False
) -> requests.Response:
    params = {"fieldManager": manager}
    if force:
        params["force"] = "true"
    return requests.patch(server.url + path, data=yaml.safe_dump(obj), params=params, headers=APPLY, timeout=5)


def cm(data: dict[str, str], **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", **meta}, "data": data}


def managers(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(m["manager"], m["operation"]): m["fieldsV1"] for m in obj["metadata"]["managedFields"]}


def test_a_create_records_an_update_entry_for_the_field_manager_or_the_user_agent(
    fake_api_server: FakeAPIServer,
) -> None:
    url = fake_api_server.url + CM
    named = requests.post(url, json=cm({"a": "1"}), params={"fieldManager": "mine"}, timeout=5).json()
    assert managers(named) == {("mine", "Update"): {"f:data": {".": {}, "f:a": {}}}}
    entry = named["metadata"]["managedFields"][0]
    assert entry["apiVersion"] == "v1" and entry["fieldsType"] == "FieldsV1" and entry["time"]
    by_agent = requests.post(
        url, json=cm({"b": "2"}, name="d"), timeout=5, headers={"User-Agent": "my-controller/v1.2 (linux)"}
    ).json()
    assert [m["manager"] for m in by_agent["metadata"]["managedFields"]] == ["my-controller"]


def test_an_update_takes_ownership_of_what_it_changes(fake_api_server: FakeAPIServer) -> None:
    url = fake_api_server.url + CM
    created = requests.post(url, json=cm({"a": "1", "b": "2"}), params={"fieldManager": "one"}, timeout=5).json()
    created["data"]["b"] = "3"
    updated = requests.put(f"{url}/c", json=created, params={"fieldManager": "two"}, timeout=5).json()
    assert managers(updated) == {
        ("one", "Update"): {"f:data": {".": {}, "f:a": {}}},
        ("two", "Update"): {"f:data": {"f:b": {}}},
    }


def test_apply_conflicts_with_another_manager_like_the_real_server(fake_api_server: FakeAPIServer) -> None:
    assert apply(fake_api_server, f"{CM}/c", cm({"a": "1"}), "alice").status_code == 201
    resp = apply(fake_api_server, f"{CM}/c", cm({"a": "2"}), "bob")
    assert resp.status_code == 409
    body = resp.json()
    assert body["reason"] == "Conflict"
    assert body["message"] == 'Apply failed with 1 conflict: conflict with "alice": .data.a'
    assert body["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "alice"', "field": ".data.a"}
    ]
    assert fake_api_server.get("configmaps", "c", "default")["data"] == {"a": "1"}


def test_several_conflicts_are_listed_per_manager(fake_api_server: FakeAPIServer) -> None:
    apply(fake_api_server, f"{CM}/c", cm({"a": "1", "b": "1"}), "alice")
    resp = apply(fake_api_server, f"{CM}/c", cm({"a": "2", "b": "2"}), "bob")
    assert resp.json()["message"] == ('Apply failed with 2 conflicts: conflicts with "alice":\n- .data.a\n- .data.b')


def test_a_conflict_with_an_update_manager_names_its_api_version_and_time(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("configmaps", cm({"a": "1"}), field_manager="kubectl-edit")
    resp = apply(fake_api_server, f"{CM}/c", cm({"a": "2"}), "bob")
    message = resp.json()["message"]
    assert message.startswith('Apply failed with 1 conflict: conflict with "kubectl-edit" using v1 at ')
    assert message.endswith("Z: .data.a")


def test_force_takes_ownership_from_the_other_manager(fake_api_server: FakeAPIServer) -> None:
    apply(fake_api_server, f"{CM}/c", cm({"a": "1", "b": "1"}), "alice")
    resp = apply(fake_api_server, f"{CM}/c", cm({"a": "2"}), "bob", force=True)
    assert resp.status_code == 200
    obj = resp.json()
    assert obj["data"] == {"a": "2", "b": "1"}
    assert managers(obj) == {("alice", "Apply"): {"f:data": {"f:b": {}}}, ("bob", "Apply"): {"f:data": {"f:a": {}}}}


def test_the_same_value_is_shared_without_a_conflict(fake_api_server: FakeAPIServer) -> None:
    apply(fake_api_server, f"{CM}/c", cm({"a": "1"}), "alice")
    resp = apply(fake_api_server, f"{CM}/c", cm({"a": "1", "b": "2"}), "bob")
    assert resp.status_code == 200
    assert managers(resp.json()) == {
        ("alice", "Apply"): {"f:data": {"f:a": {}}},
        ("bob", "Apply"): {"f:data": {"f:a": {}, "f:b": {}}},
    }


def test_fields_a_manager_stops_applying_are_removed_unless_someone_else_owns_them(
    fake_api_server: FakeAPIServer,
) -> None:
    apply(fake_api_server, f"{CM}/c", cm({"a": "1", "b": "1", "c": "1"}, labels={"x": "1"}), "alice")
    apply(fake_api_server, f"{CM}/c", cm({"c": "1"}), "bob")
    obj = apply(fake_api_server, f"{CM}/c", cm({"a": "1"}), "alice").json()
    assert obj["data"] == {"a": "1", "c": "1"}
    assert "labels" not in obj["metadata"]


def test_a_no_op_apply_writes_nothing(fake_api_server: FakeAPIServer) -> None:
    first = apply(fake_api_server, f"{CM}/c", cm({"a": "1"}), "alice").json()
    again = apply(fake_api_server, f"{CM}/c", cm({"a": "1"}), "alice").json()
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


def deployment(*containers: dict[str, Any]) -> dict[str, Any]:
    labels = {"app": "d"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": list(containers)}},
        },
    }


def test_keyed_lists_are_owned_per_item_and_merged_by_their_keys(fake_api_server: FakeAPIServer) -> None:
    path = "/apis/apps/v1/namespaces/default/deployments/d"
    web = {"name": "web", "image": "nginx:1", "ports": [{"containerPort": 80}]}
    obj = apply(fake_api_server, path, deployment(web), "alice").json()
    fields = managers(obj)[("alice", "Apply")]
    assert fields["f:spec"]["f:template"]["f:spec"]["f:containers"] == {
        'k:{"name":"web"}': {
            ".": {},
            "f:image": {},
            "f:name": {},
            "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}},
        }
    }
    merged = apply(fake_api_server, path, deployment({"name": "sidecar", "image": "envoy"}), "bob").json()
    assert [c["name"] for c in merged["spec"]["template"]["spec"]["containers"]] == ["web", "sidecar"]
    conflict = apply(fake_api_server, path, deployment({"name": "web", "image": "nginx:2"}), "bob")
    assert conflict.status_code == 409, conflict.json()
    assert conflict.json()["message"] == (
        'Apply failed with 1 conflict: conflict with "alice": .spec.template.spec.containers[name="web"].image'
    )
    # bob's sidecar is gone with its last applier; the refused apply changed nothing.
    dropped = apply(fake_api_server, path, deployment({"name": "web", "image": "nginx:1"}), "bob").json()
    assert [c["name"] for c in dropped["spec"]["template"]["spec"]["containers"]] == ["web"]


def test_force_is_refused_on_other_patch_types(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("configmaps", cm({"a": "1"}))
    resp = requests.patch(
        f"{fake_api_server.url}{CM}/c",
        json={"data": {"a": "2"}},
        params={"force": "true"},
        timeout=5,
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert resp.status_code == 422
    assert "force" in resp.json()["message"]


@pytest.mark.parametrize("verb", ["put", "patch"])
def test_status_writes_are_owned_with_the_status_subresource(fake_api_server: FakeAPIServer, verb: str) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "web", "image": "nginx"}]},
    }
    created = fake_api_server.create("pods", pod)
    url = f"{fake_api_server.url}{PODS}/p/status"
    if verb == "put":
        created["status"] = {"phase": "Running"}
        resp = requests.put(url, json=created, params={"fieldManager": "kubelet"}, timeout=5)
    else:
        resp = requests.patch(
            url,
            json={"status": {"phase": "Running"}},
            timeout=5,
            params={"fieldManager": "kubelet"},
            headers={"Content-Type": "application/merge-patch+json"},
        )
    entries = {m["manager"]: m for m in resp.json()["metadata"]["managedFields"]}
    assert entries["kubelet"]["subresource"] == "status"
    assert entries["kubelet"]["fieldsV1"] == {"f:status": {"f:phase": {}}}
    assert "f:status" not in entries["fake-api-server"]["fieldsV1"]
