"""Discovery and CRUD on the fake API server answer like kube-apiserver, Status bodies included."""

from __future__ import annotations

import email.utils
import json
import time
from typing import Any

import pytest
import requests

from cloudcoil_cache.errors import ResourceConflict, ResourceNotFound
from cloudcoil_cache.testing import FakeAPIServer, make_configmap, make_deployment, make_pod

PODS = "/api/v1/namespaces/default/pods"


def post(server: FakeAPIServer, path: str, obj: dict[str, Any]) -> requests.Response:
    return requests.post(server.url + path, json=obj, timeout=5)


def patch(server: FakeAPIServer, path: str, body: Any, ctype: str) -> requests.Response:
    return requests.patch(server.url + path, data=json.dumps(body), headers={"Content-Type": ctype}, timeout=5)


# -- discovery ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/api", "APIVersions"),
        ("/api/v1", "APIResourceList"),
        ("/apis", "APIGroupList"),
        ("/apis/apps", "APIGroup"),
        ("/apis/apps/v1", "APIResourceList"),
        ("/apis/coordination.k8s.io/v1", "APIResourceList"),
    ],
    ids=["api", "core-v1", "apis", "apps-group", "apps-v1", "coordination-v1"],
)
def test_discovery_documents_have_their_real_kinds(fake_api_server: FakeAPIServer, path: str, kind: str) -> None:
    assert requests.get(fake_api_server.url + path, timeout=5).json()["kind"] == kind


def test_the_core_resource_list_describes_pods_like_the_real_server(
    fake_api_server: FakeAPIServer,
) -> None:
    doc = requests.get(fake_api_server.url + "/api/v1", timeout=5).json()
    pods = next(r for r in doc["resources"] if r["name"] == "pods")
    assert doc["groupVersion"] == "v1"
    assert pods["singularName"] == "pod" and pods["namespaced"] is True and pods["kind"] == "Pod"
    assert {"get", "list", "watch", "create", "update", "patch", "delete"} <= set(pods["verbs"])
    nodes = next(r for r in doc["resources"] if r["name"] == "nodes")
    assert nodes["namespaced"] is False
    assert any(r["name"] == "pods/status" for r in doc["resources"])


def test_the_group_list_names_every_built_in_group(fake_api_server: FakeAPIServer) -> None:
    doc = requests.get(fake_api_server.url + "/apis", timeout=5).json()
    assert {g["name"] for g in doc["groups"]} == {
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "apiregistration.k8s.io",
        "apps",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "autoscaling",
        "batch",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
    }
    apps = next(g for g in doc["groups"] if g["name"] == "apps")
    assert apps["preferredVersion"] == {"groupVersion": "apps/v1", "version": "v1"}
    autoscaling = next(g for g in doc["groups"] if g["name"] == "autoscaling")
    assert [v["version"] for v in autoscaling["versions"]] == ["v2", "v1"]
    assert autoscaling["preferredVersion"]["version"] == "v2"


def test_a_registered_custom_resource_appears_in_discovery_and_is_served(
    fake_api_server: FakeAPIServer,
) -> None:
    fake_api_server.register_resource("example.com", "v1", "Widget", "widgets")
    doc = requests.get(fake_api_server.url + "/apis/example.com/v1", timeout=5).json()
    assert doc["resources"][0]["kind"] == "Widget"
    created = post(
        fake_api_server,
        "/apis/example.com/v1/namespaces/ns1/widgets",
        {"metadata": {"name": "w"}, "spec": {"size": 3}},
    )
    assert created.status_code == 201
    assert created.json()["apiVersion"] == "example.com/v1"
    assert created.json()["metadata"]["generation"] == 1


@pytest.mark.parametrize(
    "path",
    ["/api/v1/widgets", "/apis/nope/v1/things", "/nothing", "/api/v1/namespaces/default/nodes/x"],
    ids=[
        "unknown-core-resource",
        "unknown-group",
        "unknown-path",
        "cluster-scoped-under-a-namespace",
    ],
)
def test_unknown_paths_get_404_with_a_not_found_status(fake_api_server: FakeAPIServer, path: str) -> None:
    resp = requests.get(fake_api_server.url + path, timeout=5)
    assert resp.status_code == 404
    assert resp.json()["kind"] == "Status" and resp.json()["reason"] == "NotFound"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/v1/pods"),
        ("POST", "/api/v1/namespaces/default/pods/a"),
        ("DELETE", "/api/v1/namespaces/default/pods/a/status"),
    ],
    ids=["create-without-namespace", "create-on-an-object", "delete-a-subresource"],
)
def test_methods_a_path_does_not_serve_get_405(fake_api_server: FakeAPIServer, method: str, path: str) -> None:
    fake_api_server.create("pods", make_pod("a"))
    resp = requests.request(method, fake_api_server.url + path, json=make_pod("b"), timeout=5)
    assert (resp.status_code, resp.json()["reason"]) == (405, "MethodNotAllowed")


def test_a_protobuf_only_accept_header_gets_406(fake_api_server: FakeAPIServer) -> None:
    resp = requests.get(
        fake_api_server.url + "/api/v1/pods",
        headers={"Accept": "application/vnd.kubernetes.protobuf"},
        timeout=5,
    )
    assert (resp.status_code, resp.json()["reason"]) == (406, "NotAcceptable")


# -- create / get --------------------------------------------------------------------------------


def test_create_answers_201_and_sets_uid_timestamp_and_resource_version(
    fake_api_server: FakeAPIServer,
) -> None:
    before = fake_api_server.revision
    resp = post(fake_api_server, PODS, make_pod("a"))
    meta = resp.json()["metadata"]
    assert resp.status_code == 201
    assert meta["resourceVersion"] == str(before + 1) == str(fake_api_server.revision)
    assert len(meta["uid"]) == 36 and meta["creationTimestamp"].endswith("Z")
    got = requests.get(fake_api_server.url + PODS + "/a", timeout=5).json()
    assert got["metadata"]["uid"] == meta["uid"]
    assert (got["kind"], got["apiVersion"]) == ("Pod", "v1")


def test_a_chunked_request_body_is_read(fake_api_server: FakeAPIServer) -> None:
    body = json.dumps(make_configmap("chunky")).encode()
    resp = requests.post(
        fake_api_server.url + "/api/v1/namespaces/default/configmaps",
        data=iter([body[:10], body[10:]]),
        headers={"Content-Type": "application/json"},
        timeout=5,
    )
    assert resp.status_code == 201 and resp.json()["metadata"]["name"] == "chunky"


def test_create_with_generate_name_picks_a_unique_name(fake_api_server: FakeAPIServer) -> None:
    body = {"metadata": {"generateName": "web-"}, "data": {}}
    first = post(fake_api_server, "/api/v1/namespaces/default/configmaps", body).json()
    second = post(fake_api_server, "/api/v1/namespaces/default/configmaps", body).json()
    assert first["metadata"]["name"].startswith("web-") and len(first["metadata"]["name"]) == 9
    assert first["metadata"]["name"] != second["metadata"]["name"]


def test_create_without_a_name_is_invalid(fake_api_server: FakeAPIServer) -> None:
    resp = post(fake_api_server, PODS, {"metadata": {}})
    assert (resp.status_code, resp.json()["reason"]) == (422, "Invalid")
    assert "name or generateName is required" in resp.json()["message"]


def test_creating_an_existing_object_is_409_already_exists(fake_api_server: FakeAPIServer) -> None:
    post(fake_api_server, PODS, make_pod("a"))
    resp = post(fake_api_server, PODS, make_pod("a"))
    body = resp.json()
    assert (resp.status_code, body["reason"], body["message"]) == (
        409,
        "AlreadyExists",
        'pods "a" already exists',
    )
    assert body["details"] == {"name": "a", "kind": "pods"}


def test_a_body_namespace_other_than_the_urls_is_a_bad_request(
    fake_api_server: FakeAPIServer,
) -> None:
    resp = post(fake_api_server, PODS, make_pod("a", namespace="other"))
    assert (resp.status_code, resp.json()["reason"]) == (400, "BadRequest")
    assert "does not match the namespace" in resp.json()["message"]


def test_getting_a_missing_object_is_404_with_the_real_message(
    fake_api_server: FakeAPIServer,
) -> None:
    resp = requests.get(fake_api_server.url + "/apis/apps/v1/namespaces/default/deployments/x", timeout=5)
    body = resp.json()
    assert (resp.status_code, body["reason"], body["message"]) == (
        404,
        "NotFound",
        'deployments.apps "x" not found',
    )
    assert body["details"] == {"name": "x", "group": "apps", "kind": "deployments"}


def test_cluster_scoped_objects_live_outside_namespaces(fake_api_server: FakeAPIServer) -> None:
    resp = post(fake_api_server, "/api/v1/nodes", {"metadata": {"name": "n1"}, "spec": {}})
    assert resp.status_code == 201 and "namespace" not in resp.json()["metadata"]
    ns = post(fake_api_server, "/api/v1/namespaces", {"metadata": {"name": "team-a"}})
    assert ns.status_code == 201
    assert requests.get(fake_api_server.url + "/api/v1/namespaces/team-a", timeout=5).status_code == 200


# -- update ------------------------------------------------------------------------------------


def test_put_with_a_stale_resource_version_is_a_409_conflict(
    fake_api_server: FakeAPIServer,
) -> None:
    created = post(fake_api_server, "/api/v1/namespaces/default/configmaps", make_configmap("c")).json()
    fake_api_server.update("configmaps", {**created, "data": {"k": "v2"}})
    resp = requests.put(
        fake_api_server.url + "/api/v1/namespaces/default/configmaps/c",
        json={**created, "data": {"k": "v3"}},
        timeout=5,
    )
    body = resp.json()
    assert (resp.status_code, body["reason"]) == (409, "Conflict")
    assert body["message"] == (
        'Operation cannot be fulfilled on configmaps "c": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )


def test_put_without_a_resource_version_is_unconditional(fake_api_server: FakeAPIServer) -> None:
    created = post(fake_api_server, "/api/v1/namespaces/default/configmaps", make_configmap("c")).json()
    fake_api_server.update("configmaps", {**created, "data": {"k": "v2"}})
    body = {**created, "metadata": {"name": "c"}, "data": {"k": "v3"}}
    resp = requests.put(fake_api_server.url + "/api/v1/namespaces/default/configmaps/c", json=body, timeout=5)
    assert resp.status_code == 200 and resp.json()["data"] == {"k": "v3"}
    assert resp.json()["metadata"]["uid"] == created["metadata"]["uid"]


def test_put_of_a_missing_object_is_404(fake_api_server: FakeAPIServer) -> None:
    resp = requests.put(
        fake_api_server.url + "/api/v1/namespaces/default/configmaps/c",
        json=make_configmap("c"),
        timeout=5,
    )
    assert resp.status_code == 404


def test_main_resource_put_ignores_status_and_status_put_ignores_spec(
    fake_api_server: FakeAPIServer,
) -> None:
    path = "/apis/apps/v1/namespaces/default/deployments/d"
    created = post(fake_api_server, "/apis/apps/v1/namespaces/default/deployments", make_deployment("d")).json()
    assert "status" not in created or created["status"] == {}  # a create's status is dropped
    created = fake_api_server.patch("deployments", "d", {"status": {"replicas": 3}}, "default", subresource="status")
    main = {**created, "spec": {**created["spec"], "replicas": 5}, "status": {"replicas": 99}}
    updated = requests.put(fake_api_server.url + path, json=main, timeout=5).json()
    assert updated["spec"]["replicas"] == 5 and updated["status"]["replicas"] == 3
    assert updated["metadata"]["generation"] == 2
    status = {**updated, "spec": {**updated["spec"], "replicas": 1}, "status": {"replicas": 5}}
    after = requests.put(fake_api_server.url + path + "/status", json=status, timeout=5).json()
    assert after["spec"]["replicas"] == 5 and after["status"] == {"replicas": 5}
    assert after["metadata"]["generation"] == 2


# -- patch -------------------------------------------------------------------------------------


def test_merge_patch_changes_and_removes_fields(fake_api_server: FakeAPIServer) -> None:
    post(fake_api_server, PODS, make_pod("a", labels={"x": "1"}))
    resp = patch(
        fake_api_server,
        PODS + "/a",
        {"metadata": {"labels": {"x": None, "y": "2"}}},
        "application/merge-patch+json",
    )
    labels = resp.json()["metadata"]["labels"]
    assert resp.status_code == 200 and "x" not in labels and labels["y"] == "2"


def test_json_patch_applies_every_operation_in_order(fake_api_server: FakeAPIServer) -> None:
    post(
        fake_api_server,
        "/api/v1/namespaces/default/configmaps",
        make_configmap("c", data={"a": "1"}),
    )
    ops = [
        {"op": "test", "path": "/data/a", "value": "1"},
        {"op": "add", "path": "/data/b", "value": "2"},
        {"op": "copy", "from": "/data/b", "path": "/data/c"},
        {"op": "move", "from": "/data/a", "path": "/data/d"},
        {"op": "replace", "path": "/data/b", "value": "3"},
        {"op": "remove", "path": "/data/c"},
    ]
    resp = patch(
        fake_api_server,
        "/api/v1/namespaces/default/configmaps/c",
        ops,
        "application/json-patch+json",
    )
    assert resp.json()["data"] == {"b": "3", "d": "1"}


def test_a_failing_json_patch_test_is_invalid_and_changes_nothing(
    fake_api_server: FakeAPIServer,
) -> None:
    post(
        fake_api_server,
        "/api/v1/namespaces/default/configmaps",
        make_configmap("c", data={"a": "1"}),
    )
    rv = fake_api_server.revision
    resp = patch(
        fake_api_server,
        "/api/v1/namespaces/default/configmaps/c",
        [{"op": "test", "path": "/data/a", "value": "2"}],
        "application/json-patch+json",
    )
    assert (resp.status_code, resp.json()["reason"]) == (422, "Invalid")
    assert fake_api_server.revision == rv


def test_a_patch_carrying_a_stale_resource_version_conflicts(
    fake_api_server: FakeAPIServer,
) -> None:
    created = post(fake_api_server, PODS, make_pod("a")).json()
    fake_api_server.patch("pods", "a", {"metadata": {"labels": {"z": "1"}}})
    resp = patch(
        fake_api_server,
        PODS + "/a",
        {
            "metadata": {
                "resourceVersion": created["metadata"]["resourceVersion"],
                "labels": {"z": "2"},
            }
        },
        "application/merge-patch+json",
    )
    assert (resp.status_code, resp.json()["reason"]) == (409, "Conflict")


def test_patching_status_goes_through_the_status_subresource_only(
    fake_api_server: FakeAPIServer,
) -> None:
    post(fake_api_server, PODS, make_pod("a", phase="Pending"))
    main = patch(
        fake_api_server,
        PODS + "/a",
        {"status": {"phase": "Failed"}},
        "application/merge-patch+json",
    )
    assert main.json()["status"]["phase"] == "Pending"
    sub = patch(
        fake_api_server,
        PODS + "/a/status",
        {"status": {"phase": "Failed"}},
        "application/merge-patch+json",
    )
    assert sub.json()["status"]["phase"] == "Failed"
    assert requests.get(fake_api_server.url + PODS + "/a/status", timeout=5).json()["status"]["phase"] == "Failed"


def test_an_unknown_patch_content_type_is_415(fake_api_server: FakeAPIServer) -> None:
    post(fake_api_server, PODS, make_pod("a"))
    resp = patch(fake_api_server, PODS + "/a", {}, "application/x-unknown-patch+json")
    assert (resp.status_code, resp.json()["reason"]) == (415, "UnsupportedMediaType")


# -- delete ------------------------------------------------------------------------------------


def test_delete_returns_the_object_at_the_deletions_revision(
    fake_api_server: FakeAPIServer,
) -> None:
    post(fake_api_server, PODS, make_pod("a"))
    resp = requests.delete(fake_api_server.url + PODS + "/a", timeout=5)
    assert resp.status_code == 200
    assert resp.json()["metadata"]["name"] == "a"
    assert resp.json()["metadata"]["resourceVersion"] == str(fake_api_server.revision)
    again = requests.delete(fake_api_server.url + PODS + "/a", timeout=5)
    assert (again.status_code, again.json()["message"]) == (404, 'pods "a" not found')


def test_delete_collection_removes_the_selected_objects(fake_api_server: FakeAPIServer) -> None:
    for name, tier in (("a", "x"), ("b", "x"), ("c", "y")):
        fake_api_server.create("configmaps", make_configmap(name, labels={"tier": tier}))
    resp = requests.delete(
        fake_api_server.url + "/api/v1/namespaces/default/configmaps",
        params={"labelSelector": "tier=x"},
        timeout=5,
    )
    assert resp.status_code == 200
    assert [c["metadata"]["name"] for c in fake_api_server.list("configmaps")] == ["c"]


def test_delete_collection_answers_the_list_of_what_it_deleted(fake_api_server: FakeAPIServer) -> None:
    # kube-apiserver's answer: the <Kind>List as listed before deleting, dry run or not, empty when none matched
    created = [fake_api_server.create("configmaps", make_configmap(name, labels={"tier": "x"})) for name in "ba"]
    url = fake_api_server.url + "/api/v1/namespaces/default/configmaps"
    dry = requests.delete(url, params={"labelSelector": "tier=x", "dryRun": "All"}, timeout=5).json()
    assert len(fake_api_server.list("configmaps")) == 2
    answer = requests.delete(url, params={"labelSelector": "tier=x"}, timeout=5).json()
    assert answer == dry
    assert (answer["kind"], answer["apiVersion"]) == ("ConfigMapList", "v1")
    assert int(answer["metadata"]["resourceVersion"]) >= int(created[-1]["metadata"]["resourceVersion"])
    assert [(i["metadata"]["name"], i["metadata"]["resourceVersion"]) for i in answer["items"]] == [
        (c["metadata"]["name"], c["metadata"]["resourceVersion"]) for c in reversed(created)
    ]
    assert "kind" not in answer["items"][0]  # built-in list items, as a LIST serves them
    assert fake_api_server.list("configmaps") == []
    again = requests.delete(url, params={"labelSelector": "tier=x"}, timeout=5).json()
    assert (again["kind"], again["items"]) == ("ConfigMapList", [])


# -- direct object API ---------------------------------------------------------------------------


def test_the_direct_api_bumps_the_revision_like_http_writes(fake_api_server: FakeAPIServer) -> None:
    start = fake_api_server.revision
    pod = fake_api_server.create("pods", make_pod("a", namespace="team-a"), namespace="team-a")
    pod["metadata"]["labels"]["new"] = "1"
    updated = fake_api_server.update("pods", pod)
    patched = fake_api_server.patch(
        "pods",
        "a",
        [{"op": "add", "path": "/metadata/labels/p", "value": "1"}],
        namespace="team-a",
        patch_type="json",
    )
    deleted = fake_api_server.delete("pods", "a", namespace="team-a")
    rvs = [int(o["metadata"]["resourceVersion"]) for o in (pod, updated, patched, deleted)]
    assert rvs == [start + 1, start + 2, start + 3, start + 4]
    assert updated["metadata"]["labels"]["new"] == "1" and patched["metadata"]["labels"]["p"] == "1"


def test_the_direct_api_raises_the_library_error_classes(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("deployments.apps", make_deployment("d"))
    with pytest.raises(ResourceConflict, match="already exists"):
        fake_api_server.create("Deployment", make_deployment("d"))
    with pytest.raises(ResourceNotFound, match='pods "nope" not found'):
        fake_api_server.get("pods", "nope")
    with pytest.raises(ValueError, match="unknown resource 'gizmos'"):
        fake_api_server.list("gizmos")


def test_the_direct_api_returns_copies_that_do_not_change_the_server(
    fake_api_server: FakeAPIServer,
) -> None:
    fake_api_server.create("configmaps", make_configmap("c", data={"a": "1"}))
    fake_api_server.get("configmaps", "c")["data"]["a"] = "mutated"
    fake_api_server.list("configmaps")[0]["data"]["a"] = "mutated"
    assert fake_api_server.get("configmaps", "c")["data"] == {"a": "1"}


_LABELS = {"app": "x"}
_TEMPLATE = {"metadata": {"labels": _LABELS}, "spec": {"containers": [{"name": "c", "image": "busybox:1"}]}}
# The least each kind needs to pass validation.
MINIMAL: dict[str, dict[str, Any]] = {
    "Pod": {"spec": _TEMPLATE["spec"]},
    "Service": {"spec": {"ports": [{"port": 80}]}},
    "Event": {"involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}},
    "Deployment": {"spec": {"selector": {"matchLabels": _LABELS}, "template": _TEMPLATE}},
    "ReplicaSet": {"spec": {"selector": {"matchLabels": _LABELS}, "template": _TEMPLATE}},
    "StatefulSet": {"spec": {"selector": {"matchLabels": _LABELS}, "template": _TEMPLATE, "serviceName": "x"}},
    "DaemonSet": {"spec": {"selector": {"matchLabels": _LABELS}, "template": _TEMPLATE}},
    "Job": {"spec": {"template": {"spec": {**_TEMPLATE["spec"], "restartPolicy": "Never"}}}},
}


@pytest.mark.parametrize(
    ("collection", "kind"),
    [
        ("/api/v1/namespaces/default/pods", "Pod"),
        ("/api/v1/namespaces/default/configmaps", "ConfigMap"),
        ("/api/v1/namespaces/default/secrets", "Secret"),
        ("/api/v1/namespaces/default/services", "Service"),
        ("/api/v1/namespaces/default/events", "Event"),
        ("/api/v1/namespaces", "Namespace"),
        ("/api/v1/nodes", "Node"),
        ("/apis/apps/v1/namespaces/default/deployments", "Deployment"),
        ("/apis/apps/v1/namespaces/default/replicasets", "ReplicaSet"),
        ("/apis/apps/v1/namespaces/default/statefulsets", "StatefulSet"),
        ("/apis/apps/v1/namespaces/default/daemonsets", "DaemonSet"),
        ("/apis/batch/v1/namespaces/default/jobs", "Job"),
        ("/apis/coordination.k8s.io/v1/namespaces/default/leases", "Lease"),
    ],
    ids=lambda v: v if not v.startswith("/") else None,
)
def test_every_built_in_kind_is_served(fake_api_server: FakeAPIServer, collection: str, kind: str) -> None:
    created = post(fake_api_server, collection, {"metadata": {"name": "x"}, **MINIMAL.get(kind, {})})
    assert created.status_code == 201 and created.json()["kind"] == kind, created.json()
    listed = requests.get(fake_api_server.url + collection, timeout=5).json()
    # default/kubernetes is there from the start, as on every cluster
    there = {"Service": ["kubernetes"]}.get(kind, [])
    assert listed["kind"] == f"{kind}List"
    assert sorted(i["metadata"]["name"] for i in listed["items"]) == sorted([*there, "x"])
    got = requests.get(f"{fake_api_server.url}{collection}/x", timeout=5).json()
    assert got["metadata"]["uid"] == created.json()["metadata"]["uid"]


def test_the_date_header_follows_the_configured_clock_skew(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.clock_skew = 3 * 3600
    date = requests.get(fake_api_server.url + "/api", timeout=5).headers["Date"]
    skew = email.utils.parsedate_to_datetime(date).timestamp() - time.time()
    assert 3 * 3600 - 5 < skew < 3 * 3600 + 5
