"""Graceful deletion, finalizers and namespace termination in the fake server."""

from __future__ import annotations

from typing import Any

import requests
from fake_server_helpers import names, read_events, watch

from cloudcoil_cache.testing import FakeAPIServer

PODS = "/api/v1/namespaces/default/pods"
CMS = "/api/v1/namespaces/default/configmaps"


def pod(name: str, node: str | None = "node-1", **meta: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "web", "image": "nginx:1"}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, **meta}, "spec": spec}


def delete(server: FakeAPIServer, path: str, **options: Any) -> requests.Response:
    return requests.delete(server.url + path, json=options or None, timeout=5)


def test_an_unscheduled_pod_is_deleted_at_once(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("pods", pod("p", node=None))
    rv = fake_api_server.revision
    assert delete(fake_api_server, f"{PODS}/p").status_code == 200
    with watch(fake_api_server.url, PODS, resourceVersion=rv, timeoutSeconds=1) as resp:
        assert names(read_events(resp)) == [("DELETED", "p")]


def test_a_pod_on_a_node_terminates_gracefully_then_the_kubelet_removes_it(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("pods", pod("p"))
    rv = fake_api_server.revision
    body = delete(fake_api_server, f"{PODS}/p").json()
    assert body["metadata"]["deletionGracePeriodSeconds"] == 30
    assert body["metadata"]["deletionTimestamp"]
    with watch(fake_api_server.url, PODS, resourceVersion=rv, timeoutSeconds=1) as resp:
        events = read_events(resp)
    assert names(events) == [("MODIFIED", "p"), ("DELETED", "p")]
    assert events[0]["object"]["metadata"]["deletionGracePeriodSeconds"] == 30


def test_without_a_kubelet_a_terminating_pod_stays_until_forced(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.kubelet = False
    fake_api_server.create("pods", pod("p"))
    first = delete(fake_api_server, f"{PODS}/p", gracePeriodSeconds=10).json()
    assert first["metadata"]["deletionGracePeriodSeconds"] == 10
    kept = fake_api_server.get("pods", "p")
    assert kept["metadata"]["deletionTimestamp"] == first["metadata"]["deletionTimestamp"]
    again = delete(fake_api_server, f"{PODS}/p").json()  # no sooner: unchanged
    assert again["metadata"]["resourceVersion"] == kept["metadata"]["resourceVersion"]
    delete(fake_api_server, f"{PODS}/p", gracePeriodSeconds=0)
    assert fake_api_server.list("pods") == []


def test_finalizers_keep_an_object_until_the_last_one_is_removed(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("configmaps", {"metadata": {"name": "c", "finalizers": ["x/a"]}})
    rv = fake_api_server.revision
    body = delete(fake_api_server, f"{CMS}/c").json()
    assert body["metadata"]["deletionTimestamp"] and body["metadata"]["deletionGracePeriodSeconds"] == 0
    assert fake_api_server.get("configmaps", "c")["metadata"]["finalizers"] == ["x/a"]
    refused = requests.patch(
        f"{fake_api_server.url}{CMS}/c",
        timeout=5,
        json={"metadata": {"finalizers": ["x/a", "x/b"]}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert refused.status_code == 422
    assert refused.json()["message"] == (
        'ConfigMap "c" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added '
        'if the object is being deleted, found new finalizers []string{"x/b"}'
    )
    fake_api_server.patch("configmaps", "c", {"metadata": {"finalizers": None}})
    with watch(fake_api_server.url, CMS, resourceVersion=rv, timeoutSeconds=1) as resp:
        assert names(read_events(resp)) == [("MODIFIED", "c"), ("DELETED", "c")]
    assert fake_api_server.list("configmaps") == []


def test_a_deleted_namespace_terminates_removes_its_content_then_goes() -> None:
    with FakeAPIServer(namespace_lifecycle=True) as server:
        server.create("namespaces", {"metadata": {"name": "team"}})
        server.create("configmaps", {"metadata": {"name": "plain"}}, "team")
        server.create("configmaps", {"metadata": {"name": "held", "finalizers": ["x/y"]}}, "team")
        terminating = server.delete("namespaces", "team")
        assert terminating["status"]["phase"] == "Terminating"
        assert [c["metadata"]["name"] for c in server.list("configmaps", "team")] == ["held"]
        refused = requests.post(
            f"{server.url}/api/v1/namespaces/team/configmaps", timeout=5, json={"metadata": {"name": "new"}}
        )
        assert refused.status_code == 403
        assert refused.json()["message"] == (
            'configmaps "new" is forbidden: unable to create new content in namespace team '
            "because it is being terminated"
        )
        server.patch("configmaps", "held", {"metadata": {"finalizers": None}}, "team")
        assert "team" not in {ns["metadata"]["name"] for ns in server.list("namespaces")}
