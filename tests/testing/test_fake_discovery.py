"""Discovery and CRUD for every built-in kind of the 1.30 spec, access reviews and CRDs."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from cloudcoil_cache.testing import FakeAPIServer
from cloudcoil_cache.testing.apiserver.machinery.schema import resource_table


def get(server: FakeAPIServer, path: str) -> Any:
    resp = requests.get(server.url + path, timeout=5)
    assert resp.status_code == 200, resp.text
    return resp.json()


def entries(server: FakeAPIServer, group_version: str) -> dict[str, dict[str, Any]]:
    prefix = "/api/" if group_version == "v1" else "/apis/"
    return {r["name"]: r for r in get(server, prefix + group_version)["resources"]}


def test_every_resource_of_the_spec_is_discoverable(fake_api_server: FakeAPIServer) -> None:
    table = resource_table()
    assert len(table) >= 60
    for entry in table:
        gv = f"{entry['group']}/{entry['version']}" if entry["group"] else entry["version"]
        found = entries(fake_api_server, gv)
        assert entry["plural"] in found, gv
        assert found[entry["plural"]]["verbs"] == entry["verbs"]
        assert found[entry["plural"]]["namespaced"] == entry["namespaced"]


def test_discovery_has_short_names_categories_and_subresources(fake_api_server: FakeAPIServer) -> None:
    core = entries(fake_api_server, "v1")
    assert core["pods"]["shortNames"] == ["po"] and core["pods"]["categories"] == ["all"]
    assert {"pods/status", "pods/log", "pods/eviction", "pods/binding"} <= set(core)
    assert core["services"]["categories"] == ["all"] and "categories" not in core["configmaps"]
    apps = entries(fake_api_server, "apps/v1")
    assert apps["deployments/scale"] == {
        "name": "deployments/scale",
        "singularName": "",
        "namespaced": True,
        "group": "autoscaling",
        "version": "v1",
        "kind": "Scale",
        "verbs": ["get", "patch", "update"],
    }
    assert apps["deployments"]["shortNames"] == ["deploy"]
    review = entries(fake_api_server, "authorization.k8s.io/v1")["selfsubjectaccessreviews"]
    assert review["verbs"] == ["create"] and review["namespaced"] is False


@pytest.mark.parametrize(
    "collection, body",
    [
        ("/apis/scheduling.k8s.io/v1/priorityclasses", {"value": 1000}),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
            {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
        ),
        (
            "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
            {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 3}},
        ),
        ("/api/v1/namespaces/default/serviceaccounts", {}),
    ],
    ids=["cluster-scoped", "rbac", "autoscaling-v2", "serviceaccount"],
)
def test_any_built_in_kind_supports_crud(fake_api_server: FakeAPIServer, collection: str, body: dict[str, Any]) -> None:
    created = requests.post(fake_api_server.url + collection, timeout=5, json={"metadata": {"name": "x"}, **body})
    assert created.status_code == 201, created.text
    assert get(fake_api_server, collection)["items"][0]["metadata"]["name"] == "x"
    assert requests.delete(f"{fake_api_server.url}{collection}/x", timeout=5).status_code == 200


def test_a_verb_a_resource_does_not_serve_is_405(fake_api_server: FakeAPIServer) -> None:
    resp = requests.get(fake_api_server.url + "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", timeout=5)
    assert resp.status_code == 405 and resp.json()["reason"] == "MethodNotAllowed"


def test_a_self_subject_access_review_is_allowed(fake_api_server: FakeAPIServer) -> None:
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "delete", "resource": "pods", "namespace": "default"}},
    }
    resp = requests.post(
        fake_api_server.url + "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json=body, timeout=5
    )
    assert resp.status_code == 201
    assert resp.json()["status"] == {"allowed": True}
    assert resp.json()["spec"] == body["spec"]


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {
            "plural": "widgets",
            "singular": "widget",
            "kind": "Widget",
            "shortNames": ["wd"],
            "categories": ["all"],
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {
                    "status": {},
                    "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
                },
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["size"],
                                "properties": {"size": {"type": "integer"}},
                            },
                            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        },
                    }
                },
            }
        ],
    },
}


def test_creating_a_crd_serves_its_kind_and_deleting_it_stops(fake_api_server: FakeAPIServer) -> None:
    url = fake_api_server.url
    crds = url + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    created = requests.post(crds, json=CRD, timeout=5).json()
    # As from kube-apiserver, the POST answers the CRD before its controllers accept its names and
    # establish it (later writes: see tests/testing/test_fake_cloudcoil_needs.py).
    assert created["status"]["conditions"] is None
    established = requests.get(f"{crds}/widgets.example.com", timeout=5).json()
    conditions = {c["type"]: c["status"] for c in established["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    found = entries(fake_api_server, "example.com/v1")
    assert found["widgets"]["shortNames"] == ["wd"] and found["widgets"]["categories"] == ["all"]
    assert {"widgets/status", "widgets/scale"} <= set(found)
    path = "/apis/example.com/v1/namespaces/default/widgets"
    bad = requests.post(url + path, json={"metadata": {"name": "w"}, "spec": {}}, timeout=5)
    assert bad.json()["message"] == 'Widget.example.com "w" is invalid: spec.size: Required value'
    good = requests.post(url + path, json={"metadata": {"name": "w"}, "spec": {"size": 1}}, timeout=5)
    assert good.status_code == 201
    requests.delete(url + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com", timeout=5)
    assert requests.get(url + "/apis/example.com/v1", timeout=5).status_code == 404
    assert requests.get(url + path, timeout=5).status_code == 404


def test_a_crd_whose_name_does_not_match_is_invalid(fake_api_server: FakeAPIServer) -> None:
    bad = {**CRD, "metadata": {"name": "gadgets.example.com"}}
    resp = requests.post(
        fake_api_server.url + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=bad, timeout=5
    )
    assert resp.status_code == 422
    assert 'must be spec.names.plural+"."+spec.group' in resp.json()["message"]
