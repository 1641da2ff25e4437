"""The fake server's validation, defaults, field ownership, deletion, reviews and tables held to a real
kube-apiserver: the same requests to both, the answers compared (skipped without the binaries)."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

from cloudcoil_cache.testing import FakeAPIServer

pytestmark = pytest.mark.real
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
MERGE = "application/merge-patch+json"
APPLY = "application/apply-patch+yaml"


class Pair:
    """One namespace on a real and on a fake server; ``call`` sends a request to both."""

    def __init__(self, real: Any, fake: FakeAPIServer, folder: Path) -> None:
        self.ns = f"t-{uuid.uuid4().hex[:8]}"
        self.fake = fake
        ca = folder / "real-ca.crt"
        ca.write_bytes(real.ca_cert)
        self.targets = [(real.url, {"Authorization": f"Bearer {real.tokens['admin']}"}, str(ca)), (fake.url, {}, True)]
        for response in self.call("POST", "/api/v1/namespaces", {"metadata": {"name": self.ns}}):
            assert response.status_code == 201, response.text

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        ctype: str = "application/json",
        accept: str = "application/json",
        **params: str,
    ) -> list[requests.Response]:
        path = path.replace("NS", self.ns)
        out = []
        for url, headers, verify in self.targets:
            data = body if isinstance(body, str) else None
            out.append(
                requests.request(
                    method,
                    url + path,
                    json=None if data is not None else body,
                    data=data,
                    params=params,
                    timeout=30,
                    verify=verify,
                    headers={**headers, "Content-Type": ctype, "Accept": accept, "User-Agent": "pair-test/1.0"},
                )
            )
        return out

    def same(self, method: str, path: str, body: Any = None, **kw: Any) -> list[Any]:
        """Send to both; assert the same status code; return both JSON bodies."""
        real, fake = self.call(method, path, body, **kw)
        assert real.status_code == fake.status_code, (real.text, fake.text)
        return [real.json(), fake.json()]


@pytest.fixture
def pair(real_api_server: Any, tmp_path: Path) -> Iterator[Pair]:
    with FakeAPIServer(namespace_lifecycle=True) as fake:
        yield Pair(real_api_server, fake, tmp_path)


def status(body: dict[str, Any]) -> tuple[Any, ...]:
    details = {k: v for k, v in (body.get("details") or {}).items() if k != "uid"}
    return body.get("code"), body.get("reason"), body.get("message"), details


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {
        "containers": [
            {
                "name": "web",
                "image": "nginx",
                "ports": [{"containerPort": 80}],
                "readinessProbe": {"httpGet": {"path": "/", "port": 80}},
            }
        ]
    },
}
DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "d"},
    "spec": {
        "selector": {"matchLabels": {"a": "b"}},
        "template": {
            "metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1", "ports": [{"containerPort": 80}]}]},
        },
    },
}


@pytest.mark.parametrize(
    "path, body",
    [
        ("/api/v1/namespaces/NS/pods", {**POD, "metadata": {"name": "Bad_Name"}}),
        ("/api/v1/namespaces/NS/pods", {**POD, "spec": {"containers": []}}),
        (
            "/api/v1/namespaces/NS/pods",
            {**POD, "spec": {"containers": [{"name": "web"}], "restartPolicy": "Sometimes"}},
        ),
        ("/apis/apps/v1/namespaces/NS/deployments", {"metadata": {"name": "d"}}),
        ("/apis/apps/v1/namespaces/NS/deployments", {**DEPLOYMENT, "spec": {**DEPLOYMENT["spec"], "replicas": "3"}}),
        ("/api/v1/namespaces", {"metadata": {"name": "a.b"}}),
        (
            "/api/v1/namespaces/NS/configmaps",
            {"metadata": {"name": "c", "labels": {"ok": "not ok!"}}, "data": {"bad key": "v"}},
        ),
        (
            "/apis/coordination.k8s.io/v1/namespaces/NS/leases",
            {"metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": 0}},
        ),
        ("/api/v1/namespaces/NS/configmaps", {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}),
        ("/api/v1/namespaces/nope-x/configmaps", {"metadata": {"name": "c"}}),
    ],
    ids=[
        "bad-name",
        "no-containers",
        "two-errors",
        "empty-deployment",
        "wrong-type",
        "namespace-dots",
        "labels-and-keys",
        "lease",
        "wrong-kind",
        "missing-namespace",
    ],
)
def test_a_refused_write_is_refused_alike(pair: Pair, path: str, body: dict[str, Any]) -> None:
    real, fake = pair.same("POST", path, body)
    assert status(real) == status(fake)


def test_defaults_and_managed_fields_of_a_create_are_alike(pair: Pair) -> None:
    real, fake = pair.same("POST", "/api/v1/namespaces/NS/pods", POD, fieldManager="kc")
    for field in (
        "restartPolicy",
        "dnsPolicy",
        "terminationGracePeriodSeconds",
        "schedulerName",
        "securityContext",
        "containers",
        "enableServiceLinks",
        "priority",
        "preemptionPolicy",
        "tolerations",
    ):
        assert real["spec"].get(field) == fake["spec"].get(field), field
    assert real["status"] == fake["status"]
    real, fake = pair.same("POST", "/apis/apps/v1/namespaces/NS/deployments", DEPLOYMENT, fieldManager="kc")
    assert real["spec"] == fake["spec"] and real["status"] == fake["status"]
    assert [m["fieldsV1"] for m in real["metadata"]["managedFields"]] == [
        m["fieldsV1"] for m in fake["metadata"]["managedFields"]
    ]


def test_a_pod_spec_change_is_forbidden_alike(pair: Pair) -> None:
    pair.same("POST", "/api/v1/namespaces/NS/pods", POD)
    real, fake = pair.same("PATCH", "/api/v1/namespaces/NS/pods/p", {"spec": {"restartPolicy": "Never"}}, ctype=MERGE)
    assert real["message"].split("\n")[0] == fake["message"]  # the real one adds a Go diff
    real, fake = pair.same(
        "PATCH",
        "/api/v1/namespaces/NS/pods/p",
        {"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}},
        ctype="application/strategic-merge-patch+json",
    )
    assert real["spec"]["containers"][0]["image"] == fake["spec"]["containers"][0]["image"]


def test_an_immutable_selector_is_refused_alike(pair: Pair) -> None:
    pair.same("POST", "/apis/apps/v1/namespaces/NS/deployments", DEPLOYMENT)
    real, fake = pair.same(
        "PATCH",
        "/apis/apps/v1/namespaces/NS/deployments/d",
        {"spec": {"selector": {"matchLabels": {"a": "c"}}, "template": {"metadata": {"labels": {"a": "c"}}}}},
        ctype=MERGE,
    )
    assert status(real) == status(fake)


def test_apply_conflicts_and_force_are_alike(pair: Pair) -> None:
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '{}'\n  b: '{}'\n"
    pair.same("PATCH", "/api/v1/namespaces/NS/configmaps/c", manifest.format(1, 1), ctype=APPLY, fieldManager="alice")
    real, fake = pair.same(
        "PATCH", "/api/v1/namespaces/NS/configmaps/c", manifest.format(2, 2), ctype=APPLY, fieldManager="bob"
    )
    assert status(real) == status(fake)
    real, fake = pair.same(
        "PATCH",
        "/api/v1/namespaces/NS/configmaps/c",
        manifest.format(2, 1),
        ctype=APPLY,
        fieldManager="bob",
        force="true",
    )
    assert real["data"] == fake["data"]
    assert sorted((m["manager"], str(m["fieldsV1"])) for m in real["metadata"]["managedFields"]) == sorted(
        (m["manager"], str(m["fieldsV1"])) for m in fake["metadata"]["managedFields"]
    )


def test_deletion_with_finalizers_and_at_once_is_alike(pair: Pair) -> None:
    pair.same("POST", "/api/v1/namespaces/NS/configmaps", {"metadata": {"name": "held", "finalizers": ["x/y"]}})
    real, fake = pair.same("DELETE", "/api/v1/namespaces/NS/configmaps/held")
    for body in (real, fake):
        assert body["metadata"]["deletionTimestamp"]
        assert body["metadata"]["deletionGracePeriodSeconds"] == 0
    real, fake = pair.same(
        "PATCH", "/api/v1/namespaces/NS/configmaps/held", {"metadata": {"finalizers": ["x/y", "x/z"]}}, ctype=MERGE
    )
    assert real["message"] == fake["message"]
    pair.same("PATCH", "/api/v1/namespaces/NS/configmaps/held", {"metadata": {"finalizers": None}}, ctype=MERGE)
    real_get, fake_get = pair.call("GET", "/api/v1/namespaces/NS/configmaps/held")
    assert real_get.status_code == fake_get.status_code == 404
    pair.same("POST", "/api/v1/namespaces/NS/configmaps", {"metadata": {"name": "plain"}})
    real, fake = pair.same("DELETE", "/api/v1/namespaces/NS/configmaps/plain")
    assert status(real) == status(fake) and real["status"] == fake["status"] == "Success"


def test_unknown_fields_warn_alike(pair: Pair) -> None:
    body = {"metadata": {"name": "c", "bogus": 1}, "data": {"a": "1"}, "extra": True}
    real, fake = pair.call("POST", "/api/v1/namespaces/NS/configmaps", body)
    assert real.status_code == fake.status_code == 201
    warnings = [sorted(re.findall(r'unknown field \\"([^\\]+)\\"', r.headers.get("Warning", ""))) for r in (real, fake)]
    assert warnings[0] == warnings[1] == ["extra", "metadata.bogus"]


def test_an_access_review_and_table_columns_are_alike(pair: Pair) -> None:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "list", "resource": "pods"}},
    }
    real, fake = pair.same("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review)
    assert real["status"]["allowed"] is fake["status"]["allowed"] is True
    pair.same("POST", "/api/v1/namespaces/NS/pods", POD)
    for path in (
        "/api/v1/namespaces/NS/pods",
        "/api/v1/namespaces/NS/configmaps",
        "/apis/coordination.k8s.io/v1/namespaces/NS/leases",
        "/api/v1/namespaces/NS/limitranges",
    ):
        real, fake = pair.same("GET", path, accept=TABLE)
        assert [(c["name"], c["type"], c["priority"]) for c in real["columnDefinitions"]] == [
            (c["name"], c["type"], c["priority"]) for c in fake["columnDefinitions"]
        ], path


def test_a_pod_on_a_node_terminates_gracefully_alike_without_a_kubelet(pair: Pair) -> None:
    pair.fake.kubelet = False  # the real server here has no kubelets either
    pod = {**POD, "spec": {**POD["spec"], "nodeName": "node-x"}}
    pair.same("POST", "/api/v1/namespaces/NS/pods", pod)
    real, fake = pair.same("DELETE", "/api/v1/namespaces/NS/pods/p")
    for body in (real, fake):
        assert body["metadata"]["deletionGracePeriodSeconds"] == 30
    real, fake = pair.same("GET", "/api/v1/namespaces/NS/pods/p")
    assert real["metadata"]["deletionGracePeriodSeconds"] == fake["metadata"]["deletionGracePeriodSeconds"] == 30
    real, fake = pair.same("DELETE", "/api/v1/namespaces/NS/pods/p", {"gracePeriodSeconds": 0})
    real_get, fake_get = pair.call("GET", "/api/v1/namespaces/NS/pods/p")
    assert real_get.status_code == fake_get.status_code == 404


def test_explicit_nulls_are_dropped_and_defaulted_alike(pair: Pair) -> None:
    pod = {**POD, "spec": {**POD["spec"], **dict.fromkeys(["tolerations", "nodeSelector", "priority", "volumes"])}}
    pod["metadata"] = {"name": "p", "labels": None}
    pod["status"] = {"phase": None, "conditions": None}
    real, fake = pair.same("POST", "/api/v1/namespaces/NS/pods", pod)
    for field in ("tolerations", "nodeSelector", "priority", "volumes", "enableServiceLinks", "preemptionPolicy"):
        assert real["spec"].get(field, "left out") == fake["spec"].get(field, "left out"), field
    assert real["status"] == fake["status"] and "labels" not in real["metadata"] and "labels" not in fake["metadata"]
    service = {
        "metadata": {"name": "lb"},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 80, "targetPort": None}], "selector": None}
        | dict.fromkeys(["clusterIPs", "ipFamilies", "ipFamilyPolicy", "externalTrafficPolicy", "sessionAffinity"]),
    }
    real, fake = pair.same("POST", "/api/v1/namespaces/NS/services", service)
    for body in (real, fake):
        del body["spec"]["clusterIP"], body["spec"]["clusterIPs"], body["spec"]["ports"][0]["nodePort"]
    assert real["spec"] == fake["spec"]
    for path, body in (
        ("/api/v1/namespaces/NS/secrets", {"metadata": {"name": "s"}, "type": None, "data": None}),
        ("/api/v1/namespaces/NS/configmaps", {"metadata": {"name": "c", "annotations": None}, "data": None}),
    ):
        real, fake = pair.same("POST", path, body)
        assert {k: v for k, v in real.items() if k != "metadata"} == {k: v for k, v in fake.items() if k != "metadata"}
