"""What cloudcoil's own e2e suites need of a cluster: CRDs established by later writes, a custom
resource's ``/scale`` at its CRD's paths, and the ``default/kubernetes`` Service."""

from __future__ import annotations

import json
from typing import Any

import requests

from cloudcoil_cache.testing import FakeAPIServer

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WEBSERVICES = "/apis/cloudcoil.io/v1alpha1/namespaces/default/webservices"
MERGE = {"Content-Type": "application/merge-patch+json"}


def webservice_crd(
    subresources: dict[str, Any] | None = None, plural: str = "webservices", kind: str = "WebService"
) -> dict[str, Any]:
    """A CRD shaped like the one cloudcoil's ``test_crd_scale_operations`` registers."""
    if subresources is None:
        subresources = {
            "status": {},
            "scale": {
                "specReplicasPath": ".spec.size",
                "statusReplicasPath": ".status.currentSize",
                "labelSelectorPath": ".status.selector",
            },
        }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.cloudcoil.io"},
        "spec": {
            "group": "cloudcoil.io",
            "scope": "Namespaced",
            "names": {"plural": plural, "kind": kind},
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": True,
                    "subresources": subresources,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {"image": {"type": "string"}, "size": {"type": "integer"}},
                                },
                                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                            },
                        }
                    },
                }
            ],
        },
    }


def call(
    server: FakeAPIServer, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    resp = requests.request(method, server.url + path, json=body, headers=headers, timeout=5)
    return resp.status_code, resp.json()


def watch_events(server: FakeAPIServer, path: str, count: int) -> list[dict[str, Any]]:
    """The first ``count`` events of a watch (it ends after 5 s at most)."""
    events: list[dict[str, Any]] = []
    sep = "&" if "?" in path else "?"
    with requests.get(f"{server.url}{path}{sep}watch=true&timeoutSeconds=5", stream=True, timeout=10) as resp:
        assert resp.status_code == 200
        for line in resp.iter_lines():
            events.append(json.loads(line))
            if len(events) == count:
                break
    return events


def conditions(obj: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in obj["status"].get("conditions") or ()}


def create_established(server: FakeAPIServer, crd: dict[str, Any]) -> None:
    status, created = call(server, "POST", CRDS, crd)
    assert status == 201, created
    rv = created["metadata"]["resourceVersion"]
    events = watch_events(server, f"{CRDS}?resourceVersion={rv}", 2)
    assert conditions(events[-1]["object"])["Established"][0] == "True"


# -- a CRD becomes Established through MODIFIED events ---------------------------------------------


def test_a_created_crd_is_answered_before_its_names_are_accepted(fake_api_server: FakeAPIServer) -> None:
    status, created = call(fake_api_server, "POST", CRDS, webservice_crd())
    assert status == 201
    assert created["status"] == {
        "conditions": None,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": ["v1alpha1"],
    }
    assert created["spec"]["names"] == {
        "plural": "webservices",
        "kind": "WebService",
        "singular": "webservice",
        "listKind": "WebServiceList",
    }


def test_a_watch_from_the_created_version_sees_names_accepted_then_established(fake_api_server: FakeAPIServer) -> None:
    _, created = call(fake_api_server, "POST", CRDS, webservice_crd())
    rv = int(created["metadata"]["resourceVersion"])
    events = watch_events(fake_api_server, f"{CRDS}?resourceVersion={rv}", 2)
    assert [e["type"] for e in events] == ["MODIFIED", "MODIFIED"]
    assert [int(e["object"]["metadata"]["resourceVersion"]) for e in events] == [rv + 1, rv + 2]
    accepted, established = (e["object"] for e in events)
    assert conditions(accepted) == {
        "NamesAccepted": ("True", "NoConflicts", "no conflicts found"),
        "Established": ("False", "Installing", "the initial names have been accepted"),
    }
    assert conditions(established) == {
        "NamesAccepted": ("True", "NoConflicts", "no conflicts found"),
        "Established": ("True", "InitialNamesAccepted", "the initial names have been accepted"),
    }
    assert [c["type"] for c in established["status"]["conditions"]] == ["NamesAccepted", "Established"]
    assert all(c["lastTransitionTime"] for c in established["status"]["conditions"])
    assert established["status"]["acceptedNames"] == created["spec"]["names"]
    assert established["status"]["storedVersions"] == ["v1alpha1"]
    assert established["metadata"]["generation"] == 1  # status writes leave the generation
    managers = {(m["manager"], m.get("subresource")) for m in established["metadata"]["managedFields"]}
    assert ("kube-apiserver", "status") in managers


def test_a_watch_of_all_crds_sees_added_then_modified_and_the_kind_is_served_when_established(
    fake_api_server: FakeAPIServer,
) -> None:
    start = fake_api_server.revision
    call(fake_api_server, "POST", CRDS, webservice_crd())
    events = watch_events(fake_api_server, f"{CRDS}?resourceVersion={start}", 3)
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "MODIFIED"]
    status, resources = call(fake_api_server, "GET", "/apis/cloudcoil.io/v1alpha1")
    assert status == 200
    assert {"webservices", "webservices/status", "webservices/scale"} <= {r["name"] for r in resources["resources"]}
    assert call(fake_api_server, "GET", WEBSERVICES)[0] == 200


def test_a_crd_created_with_the_direct_object_api_is_established_the_same_way(fake_api_server: FakeAPIServer) -> None:
    created = fake_api_server.create("customresourcedefinitions", webservice_crd())
    assert created["status"]["conditions"] is None
    stored = fake_api_server.get("customresourcedefinitions", "webservices.cloudcoil.io")
    assert conditions(stored)["Established"][0] == "True"
    assert int(stored["metadata"]["resourceVersion"]) == int(created["metadata"]["resourceVersion"]) + 2
    assert fake_api_server.create("webservices.cloudcoil.io", {"metadata": {"name": "w"}, "spec": {"size": 1}})[
        "spec"
    ] == {"size": 1}


def test_a_dry_run_crd_create_writes_nothing_and_serves_nothing(fake_api_server: FakeAPIServer) -> None:
    before = fake_api_server.revision
    status, _ = call(fake_api_server, "POST", CRDS + "?dryRun=All", webservice_crd())
    assert status == 201 and fake_api_server.revision == before
    assert call(fake_api_server, "GET", WEBSERVICES)[0] == 404


def test_an_update_of_the_crd_names_is_accepted_by_another_status_write(fake_api_server: FakeAPIServer) -> None:
    create_established(fake_api_server, webservice_crd())
    path = f"{CRDS}/webservices.cloudcoil.io"
    status, patched = call(fake_api_server, "PATCH", path, {"spec": {"names": {"shortNames": ["ws"]}}}, MERGE)
    assert status == 200 and "shortNames" not in patched["status"]["acceptedNames"]
    rv = patched["metadata"]["resourceVersion"]
    [event] = watch_events(fake_api_server, f"{path.rsplit('/', 1)[0]}?resourceVersion={rv}", 1)
    assert event["object"]["status"]["acceptedNames"]["shortNames"] == ["ws"]
    assert conditions(event["object"])["Established"][0] == "True"


# -- /scale and /status of a custom resource ------------------------------------------------------


def test_the_cloudcoil_scale_story(fake_api_server: FakeAPIServer) -> None:
    """cloudcoil's test_crd_scale_operations over HTTP: create, update status, scale to 5, GET."""
    create_established(fake_api_server, webservice_crd())
    status, created = call(
        fake_api_server,
        "POST",
        WEBSERVICES,
        {
            "apiVersion": "cloudcoil.io/v1alpha1",
            "kind": "WebService",
            "metadata": {"name": "test-scale"},
            "spec": {"image": "nginx:latest", "size": 3},
            "status": {"phase": "Pending"},
        },
    )
    assert status == 201 and created["spec"]["size"] == 3 and "status" not in created
    created["status"] = {"currentSize": 3, "availableReplicas": 2, "selector": "app=web"}
    status, updated = call(fake_api_server, "PUT", f"{WEBSERVICES}/test-scale/status", created)
    assert status == 200
    assert updated["status"]["availableReplicas"] == 2 and updated["status"]["currentSize"] == 3
    status, scale = call(fake_api_server, "GET", f"{WEBSERVICES}/test-scale/scale")
    assert status == 200
    assert (scale["kind"], scale["apiVersion"]) == ("Scale", "autoscaling/v1")
    assert scale["spec"] == {"replicas": 3}
    assert scale["status"] == {"replicas": 3, "selector": "app=web"}
    assert scale["metadata"]["resourceVersion"] == updated["metadata"]["resourceVersion"]
    status, scaled = call(fake_api_server, "PATCH", f"{WEBSERVICES}/test-scale/scale", {"spec": {"replicas": 5}}, MERGE)
    assert status == 200 and scaled["spec"] == {"replicas": 5}
    _, current = call(fake_api_server, "GET", f"{WEBSERVICES}/test-scale")
    assert current["spec"] == {"image": "nginx:latest", "size": 5}
    assert current["status"]["currentSize"] == 3  # a scale write leaves the status
    assert current["metadata"]["generation"] == 2


def test_a_scale_put_writes_the_spec_replicas_path_and_refuses_a_negative_count(fake_api_server: FakeAPIServer) -> None:
    create_established(fake_api_server, webservice_crd())
    call(fake_api_server, "POST", WEBSERVICES, {"metadata": {"name": "w"}, "spec": {"size": 1}})
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "w"}}
    status, body = call(fake_api_server, "PUT", f"{WEBSERVICES}/w/scale", {**scale, "spec": {"replicas": 4}})
    assert status == 200 and body["spec"] == {"replicas": 4}
    assert call(fake_api_server, "GET", f"{WEBSERVICES}/w")[1]["spec"]["size"] == 4
    status, body = call(fake_api_server, "PUT", f"{WEBSERVICES}/w/scale", {**scale, "spec": {"replicas": -1}})
    assert status == 422 and body["reason"] == "Invalid"
    assert body["message"] == (
        'WebService.cloudcoil.io "w" is invalid: .spec.size: Invalid value: -1: should be a non-negative integer'
    )
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "field": ".spec.size",
            "message": "Invalid value: -1: should be a non-negative integer",
        }
    ]
    status, body = call(fake_api_server, "PUT", f"{WEBSERVICES}/w/scale", {**scale, "spec": {}})
    assert status == 200 and body["spec"] == {}  # replicas 0 is omitted, as autoscaling/v1 does
    assert call(fake_api_server, "GET", f"{WEBSERVICES}/w")[1]["spec"]["size"] == 0
    stale = {**scale, "metadata": {"name": "w", "resourceVersion": "1"}, "spec": {"replicas": 2}}
    assert call(fake_api_server, "PUT", f"{WEBSERVICES}/w/scale", stale)[0] == 409


def test_a_custom_resource_without_a_value_at_the_replicas_path(fake_api_server: FakeAPIServer) -> None:
    create_established(fake_api_server, webservice_crd())
    call(fake_api_server, "POST", WEBSERVICES, {"metadata": {"name": "n"}, "spec": {}})
    status, body = call(fake_api_server, "GET", f"{WEBSERVICES}/n/scale")
    assert status == 500 and body["message"] == (
        'Internal error occurred: the spec replicas field ".spec.size" does not exist'
    )
    status, body = call(fake_api_server, "PATCH", f"{WEBSERVICES}/n/scale", {"metadata": {"labels": {"a": "b"}}}, MERGE)
    assert status == 400 and body["message"] == 'the spec replicas field ".spec.size" cannot be empty'
    status, body = call(fake_api_server, "PATCH", f"{WEBSERVICES}/n/scale", {"spec": {"replicas": 2}}, MERGE)
    assert status == 200 and body["spec"] == {"replicas": 2}


def test_a_negative_count_at_a_scale_path_is_refused_on_create(fake_api_server: FakeAPIServer) -> None:
    create_established(fake_api_server, webservice_crd())
    status, body = call(fake_api_server, "POST", WEBSERVICES, {"metadata": {"name": "neg"}, "spec": {"size": -2}})
    assert status == 422
    assert body["message"] == (
        'WebService.cloudcoil.io "neg" is invalid: .spec.size: Invalid value: -2: should be a non-negative integer'
    )


def test_subresources_a_crd_does_not_declare_are_not_found(fake_api_server: FakeAPIServer) -> None:
    create_established(fake_api_server, webservice_crd({}, plural="gadgets", kind="Gadget"))
    gadgets = "/apis/cloudcoil.io/v1alpha1/namespaces/default/gadgets"
    assert call(fake_api_server, "POST", gadgets, {"metadata": {"name": "g"}, "spec": {"size": 1}})[0] == 201
    status, resources = call(fake_api_server, "GET", "/apis/cloudcoil.io/v1alpha1")
    assert [r["name"] for r in resources["resources"]] == ["gadgets"]
    for method, sub in (("GET", "scale"), ("PUT", "status"), ("GET", "bogus")):
        status, body = call(
            fake_api_server, method, f"{gadgets}/g/{sub}", {"metadata": {"name": "g"}} if method == "PUT" else None
        )
        assert status == 404, (method, sub)
        assert body["message"] == 'gadgets.cloudcoil.io "g" not found'
        assert body["details"] == {"name": "g", "group": "cloudcoil.io", "kind": "gadgets"}


# -- default/kubernetes ---------------------------------------------------------------------------


def test_the_kubernetes_service_exists_from_the_start(fake_api_server: FakeAPIServer) -> None:
    status, svc = call(fake_api_server, "GET", "/api/v1/namespaces/default/services/kubernetes")
    assert status == 200
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert svc["spec"]["type"] == "ClusterIP" and svc["spec"]["clusterIP"] == "10.96.0.1"
    assert svc["spec"]["ports"] == [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": 6443}]
    assert svc["metadata"]["managedFields"][0]["manager"] == "kube-apiserver"
    assert int(svc["metadata"]["resourceVersion"]) <= fake_api_server.revision
    listed = call(fake_api_server, "GET", "/api/v1/services")[1]
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in listed["items"]] == [("default", "kubernetes")]
    # it was there before any history: a watch from the start has no event for it
    created = call(
        fake_api_server,
        "POST",
        "/api/v1/namespaces/default/services",
        {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}},
    )[1]
    assert created["spec"]["clusterIP"] != "10.96.0.1"
    [event] = watch_events(fake_api_server, "/api/v1/services?resourceVersion=1", 1)
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "web")


def test_the_kubernetes_service_is_there_with_namespace_lifecycle_too() -> None:
    with FakeAPIServer(namespace_lifecycle=True) as server:
        assert server.get("services", "kubernetes", "default")["spec"]["clusterIP"] == "10.96.0.1"
        assert {n["metadata"]["name"] for n in server.list("namespaces")} == {
            "default",
            "kube-node-lease",
            "kube-public",
            "kube-system",
        }
