"""Validation, defaulting, immutability and namespace lifecycle in the fake server (real messages)."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
import requests

from cloudcoil_cache.testing import FakeAPIServer

PODS = "/api/v1/namespaces/default/pods"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def pod(name: str = "p", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}], **spec},
    }


def deployment(name: str = "d", **spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}},
            **spec,
        },
    }


def post(server: FakeAPIServer, path: str, obj: Any, **params: str) -> requests.Response:
    return requests.post(server.url + path, json=obj, params=params, timeout=5)


@pytest.fixture
def strict_server() -> Iterator[FakeAPIServer]:
    with FakeAPIServer(namespace_lifecycle=True) as server:
        yield server


# -- validation ------------------------------------------------------------------------------


def test_a_bad_name_is_invalid_with_the_real_message_and_cause(fake_api_server: FakeAPIServer) -> None:
    resp = post(fake_api_server, PODS, pod("Bad_Name"))
    assert resp.status_code == 422
    body = resp.json()
    detail = (
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
        "'-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    )
    assert body["reason"] == "Invalid"
    assert body["message"] == f'Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": {detail}'
    assert body["details"] == {
        "name": "Bad_Name",
        "kind": "Pod",
        "causes": [
            {"reason": "FieldValueInvalid", "message": f'Invalid value: "Bad_Name": {detail}', "field": "metadata.name"}
        ],
    }


@pytest.mark.parametrize(
    "path, obj, message",
    [
        (
            "/api/v1/namespaces",
            {"metadata": {"name": "a.b"}},
            'Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots',
        ),
        (
            "/api/v1/namespaces",
            {"metadata": {"name": "a_b"}},
            'Namespace "a_b" is invalid: metadata.name: Invalid value: "a_b": a lowercase RFC 1123 label',
        ),
        (
            "/api/v1/namespaces/default/services",
            {"metadata": {"name": "1web"}, "spec": {"ports": [{"port": 80}]}},
            'Service "1web" is invalid: metadata.name: Invalid value: "1web": a DNS-1035 label',
        ),
    ],
    ids=["namespace-dots", "namespace-label", "service-dns1035"],
)
def test_names_follow_their_kinds_rule(
    fake_api_server: FakeAPIServer, path: str, obj: dict[str, Any], message: str
) -> None:
    resp = post(fake_api_server, path, obj)
    assert resp.status_code == 422 and resp.json()["message"].startswith(message)


def test_no_containers_is_a_required_value(fake_api_server: FakeAPIServer) -> None:
    body = post(fake_api_server, PODS, {**pod(), "spec": {"containers": []}}).json()
    assert body["message"] == 'Pod "p" is invalid: spec.containers: Required value'
    assert body["details"]["causes"] == [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.containers"}
    ]


def test_several_errors_are_listed_in_brackets(fake_api_server: FakeAPIServer) -> None:
    bad = {**pod(), "spec": {"containers": [{"name": "web"}], "restartPolicy": "Sometimes"}}
    body = post(fake_api_server, PODS, bad).json()
    assert body["message"] == (
        'Pod "p" is invalid: [spec.containers[0].image: Required value, spec.restartPolicy: '
        'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"]'
    )
    assert [c["field"] for c in body["details"]["causes"]] == ["spec.containers[0].image", "spec.restartPolicy"]


def test_spec_required_fields_and_selector_rules_apply_to_deployments(fake_api_server: FakeAPIServer) -> None:
    empty = post(fake_api_server, DEPLOYMENTS, {"metadata": {"name": "d"}}).json()
    assert empty["message"] == (  # kube-apiserver's answer, word for word
        'Deployment.apps "d" is invalid: [spec.selector: Required value, '
        "spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` does "
        "not match template `labels`, spec.template.spec.containers: Required value]"
    )
    assert empty["details"]["group"] == "apps"
    mismatched = deployment()
    mismatched["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    body = post(fake_api_server, DEPLOYMENTS, mismatched).json()
    assert body["message"] == (
        'Deployment.apps "d" is invalid: spec.template.metadata.labels: Invalid value: '
        'map[string]string{"app":"other"}: `selector` does not match template `labels`'
    )


def test_a_wrong_json_type_is_a_decode_error(fake_api_server: FakeAPIServer) -> None:
    resp = post(fake_api_server, DEPLOYMENTS, deployment(replicas="3"))
    assert resp.status_code == 400
    assert resp.json()["message"].startswith(
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal '
        "string into Go struct field DeploymentSpec.spec.replicas of type int32"
    )


def test_unknown_fields_are_dropped_with_a_warning_or_refused_when_strict(fake_api_server: FakeAPIServer) -> None:
    obj = pod()
    obj["spec"]["bogus"] = 1
    resp = post(fake_api_server, PODS, obj)
    assert resp.status_code == 201 and "bogus" not in resp.json()["spec"]
    assert resp.headers["Warning"] == '299 - "unknown field \\"spec.bogus\\""'
    strict = post(fake_api_server, PODS, {**obj, "metadata": {"name": "q"}}, fieldValidation="Strict")
    assert strict.status_code == 400
    assert strict.json()["message"] == 'strict decoding error: unknown field "spec.bogus"'


def test_config_keys_and_label_values_are_checked(fake_api_server: FakeAPIServer) -> None:
    cm = {"metadata": {"name": "c", "labels": {"ok": "not ok!"}}, "data": {"bad key": "v"}}
    body = post(fake_api_server, "/api/v1/namespaces/default/configmaps", cm).json()
    assert [c["field"] for c in body["details"]["causes"]] == ["metadata.labels", "data[bad key]"]


def test_a_lease_with_a_zero_duration_is_invalid(fake_api_server: FakeAPIServer) -> None:
    lease = {"metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": 0}}
    body = post(fake_api_server, "/apis/coordination.k8s.io/v1/namespaces/default/leases", lease).json()
    assert body["message"] == (
        'Lease.coordination.k8s.io "l" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0'
    )


# -- defaults --------------------------------------------------------------------------------


def test_a_pod_gets_the_real_defaults(fake_api_server: FakeAPIServer) -> None:
    obj = pod()
    obj["spec"]["containers"].append({"name": "side", "image": "envoy", "ports": [{"containerPort": 80}]})
    created = post(fake_api_server, PODS, obj).json()
    spec = created["spec"]
    assert (
        spec["restartPolicy"],
        spec["dnsPolicy"],
        spec["terminationGracePeriodSeconds"],
        spec["schedulerName"],
        spec["securityContext"],
    ) == ("Always", "ClusterFirst", 30, "default-scheduler", {})
    web, side = spec["containers"]
    assert (web["imagePullPolicy"], side["imagePullPolicy"]) == ("IfNotPresent", "Always")
    assert web["terminationMessagePath"] == "/dev/termination-log"
    assert web["terminationMessagePolicy"] == "File"
    assert side["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert created["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


def test_a_create_drops_the_status_it_was_sent_with(fake_api_server: FakeAPIServer) -> None:
    created = post(fake_api_server, PODS, {**pod(), "status": {"phase": "Running"}}).json()
    assert created["status"]["phase"] == "Pending"


def test_a_deployment_and_a_service_get_their_defaults(fake_api_server: FakeAPIServer) -> None:
    spec = post(fake_api_server, DEPLOYMENTS, deployment()).json()["spec"]
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert (spec["replicas"], spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (1, 10, 600)
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    svc = {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}
    first = post(fake_api_server, "/api/v1/namespaces/default/services", svc).json()["spec"]
    second = post(fake_api_server, "/api/v1/namespaces/default/services", {**svc, "metadata": {"name": "api"}}).json()[
        "spec"
    ]
    assert (first["type"], first["sessionAffinity"]) == ("ClusterIP", "None")
    assert first["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert first["clusterIP"].startswith("10.96.") and first["clusterIPs"] == [first["clusterIP"]]
    assert second["clusterIP"] != first["clusterIP"]


def _nulls(obj: Any) -> list[str]:
    """The paths in ``obj`` whose value is null."""
    if isinstance(obj, dict):
        return [f"{k}{'.' + p if p else ''}" for k, v in obj.items() for p in ([""] if v is None else _nulls(v))]
    if isinstance(obj, list):
        return [f"[{i}]{'.' + p if p else ''}" for i, v in enumerate(obj) for p in _nulls(v)]
    return []


def test_explicit_nulls_are_dropped_or_defaulted_as_if_left_out(strict_server: FakeAPIServer) -> None:
    # cloudcoil's models send every unset field as null; a null tolerations list was a 500
    nulls = dict.fromkeys(
        ["tolerations", "nodeSelector", "enableServiceLinks", "priority", "preemptionPolicy", "restartPolicy"]
        + ["serviceAccountName", "serviceAccount", "securityContext", "volumes", "schedulerName", "dnsPolicy"]
    )
    obj = pod(**nulls)
    obj["metadata"].update(labels=None, annotations=None)
    obj["spec"]["containers"][0].update(env=None, ports=None, resources=None, imagePullPolicy=None)
    obj["status"] = {"phase": None, "qosClass": None, "conditions": None}
    resp = post(strict_server, PODS, obj)
    assert resp.status_code == 201, resp.text
    created = resp.json()
    assert _nulls(strict_server.get("pods", "p", namespace="default")) == []
    spec = created["spec"]
    assert [t["key"] for t in spec["tolerations"]] == ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]
    assert (spec["enableServiceLinks"], spec["priority"], spec["preemptionPolicy"]) == (
        True,
        0,
        "PreemptLowerPriority",
    )
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("default", "default")
    assert spec["restartPolicy"] == "Always"
    assert spec["containers"][0]["imagePullPolicy"] == "IfNotPresent" and spec["containers"][0]["resources"] == {}
    assert created["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert "labels" not in created["metadata"] and _nulls(created) == []
    service = {
        "metadata": {"name": "lb"},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 80, "protocol": None, "targetPort": None}]}
        | dict.fromkeys(["clusterIPs", "ipFamilies", "ipFamilyPolicy", "externalTrafficPolicy", "selector"])
        | {"allocateLoadBalancerNodePorts": None, "sessionAffinity": None},
    }
    svc = post(strict_server, "/api/v1/namespaces/default/services", service).json()
    assert _nulls(svc) == []
    assert svc["spec"]["clusterIPs"] == [svc["spec"]["clusterIP"]] and svc["spec"]["ipFamilies"] == ["IPv4"]
    assert (svc["spec"]["ipFamilyPolicy"], svc["spec"]["externalTrafficPolicy"]) == ("SingleStack", "Cluster")
    assert svc["spec"]["allocateLoadBalancerNodePorts"] is True and svc["spec"]["ports"][0]["targetPort"] == 80
    secret = post(strict_server, "/api/v1/namespaces/default/secrets", {"metadata": {"name": "s"}, "type": None})
    assert secret.json()["type"] == "Opaque"
    namespace = {"metadata": {"name": "n", "labels": None}, "spec": {"finalizers": None}}
    ns = post(strict_server, "/api/v1/namespaces", namespace).json()
    assert ns["spec"] == {"finalizers": ["kubernetes"]}
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "n"}
    config = post(strict_server, "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "c"}, "data": None})
    assert "data" not in config.json()


def test_a_templates_null_creation_timestamp_is_kept_as_the_real_server_serves_it(
    fake_api_server: FakeAPIServer,
) -> None:
    obj = deployment(replicas=None, strategy=None)
    obj["spec"]["template"]["spec"]["tolerations"] = None
    spec = post(fake_api_server, DEPLOYMENTS, obj).json()["spec"]
    assert (spec["replicas"], spec["strategy"]["type"]) == (1, "RollingUpdate")
    assert "tolerations" not in spec["template"]["spec"]
    assert _nulls(spec) == ["template.metadata.creationTimestamp"]


# -- immutability --------------------------------------------------------------------------------


def test_a_pod_spec_is_immutable_but_for_images(fake_api_server: FakeAPIServer) -> None:
    created = post(fake_api_server, PODS, pod()).json()
    url = f"{fake_api_server.url}{PODS}/p"
    image = requests.patch(
        url,
        json={"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}},
        headers={"Content-Type": "application/strategic-merge-patch+json"},
        timeout=5,
    )
    assert image.status_code == 200
    created = image.json()
    created["spec"]["restartPolicy"] = "Never"
    resp = requests.put(url, json=created, timeout=5)
    assert resp.status_code == 422
    assert resp.json()["message"].startswith(
        'Pod "p" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`'
    )
    removal = requests.patch(
        url, json={"spec": {"containers": []}}, timeout=5, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert removal.status_code == 422


def test_a_deployments_selector_is_immutable(fake_api_server: FakeAPIServer) -> None:
    post(fake_api_server, DEPLOYMENTS, deployment())
    resp = requests.patch(
        f"{fake_api_server.url}{DEPLOYMENTS}/d",
        json={
            "spec": {
                "selector": {"matchLabels": {"app": "d", "x": "y"}},
                "template": {"metadata": {"labels": {"x": "y"}}},
            }
        },
        headers={"Content-Type": "application/strategic-merge-patch+json"},
        timeout=5,
    )
    assert resp.status_code == 422
    assert resp.json()["message"] == (
        'Deployment.apps "d" is invalid: spec.selector: Invalid value: v1.LabelSelector{'
        'MatchLabels:map[string]string{"app":"d", "x":"y"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
    )


def test_an_immutable_configmap_keeps_its_data(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("configmaps", {"metadata": {"name": "c"}, "data": {"a": "1"}, "immutable": True})
    resp = requests.patch(
        f"{fake_api_server.url}/api/v1/namespaces/default/configmaps/c",
        json={"data": {"a": "2"}},
        timeout=5,
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert resp.status_code == 422
    assert resp.json()["message"] == (
        'ConfigMap "c" is invalid: data: Forbidden: field is immutable when `immutable` is set'
    )


# -- custom resources ---------------------------------------------------------------------------


def test_a_custom_resource_is_checked_against_its_schema(fake_api_server: FakeAPIServer) -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {"size": {"type": "integer"}, "color": {"type": "string", "enum": ["red", "green"]}},
            }
        },
    }
    rtype = fake_api_server.register_resource("example.com", "v1", "Widget", "widgets", schema=schema)
    assert rtype.schema == schema
    path = "/apis/example.com/v1/namespaces/default/widgets"
    body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    bad = post(fake_api_server, path, {**body, "spec": {"size": "big", "color": "blue"}}).json()
    assert bad["code"] == 422
    assert bad["message"] == (
        'Widget.example.com "w" is invalid: [spec.size: Invalid value: "string": spec.size in '
        'body must be of type integer: "string", spec.color: Unsupported value: "blue": '
        'supported values: "red", "green"]'
    )
    missing = post(fake_api_server, path, {**body, "spec": {}}).json()
    assert missing["message"] == 'Widget.example.com "w" is invalid: spec.size: Required value'
    pruned = post(fake_api_server, path, {**body, "spec": {"size": 1, "extra": True}})
    assert pruned.status_code == 201 and pruned.json()["spec"] == {"size": 1}


# -- namespace lifecycle ------------------------------------------------------------------------


def test_the_system_namespaces_exist_from_the_start(strict_server: FakeAPIServer) -> None:
    names = {ns["metadata"]["name"] for ns in strict_server.list("namespaces")}
    assert names == {"default", "kube-system", "kube-public", "kube-node-lease"}
    assert strict_server.revision == 1


def test_a_create_in_a_missing_namespace_is_not_found(strict_server: FakeAPIServer) -> None:
    resp = post(strict_server, "/api/v1/namespaces/nope/pods", pod())
    assert resp.status_code == 404
    assert resp.json()["message"] == 'namespaces "nope" not found'
    assert resp.json()["details"] == {"name": "nope", "kind": "namespaces"}


def test_the_default_server_does_not_check_namespaces(fake_api_server: FakeAPIServer) -> None:
    assert post(fake_api_server, "/api/v1/namespaces/nope/pods", pod()).status_code == 201


def test_a_secret_gets_its_type_merges_string_data_and_keeps_its_type(fake_api_server: FakeAPIServer) -> None:
    url = fake_api_server.url + "/api/v1/namespaces/default/secrets"
    created = post(
        fake_api_server,
        "/api/v1/namespaces/default/secrets",
        {"metadata": {"name": "s"}, "data": {"a": "YQ=="}, "stringData": {"b": "b"}},
    ).json()
    assert created["type"] == "Opaque" and "stringData" not in created
    assert created["data"] == {"a": "YQ==", "b": "Yg=="}
    changed = requests.patch(
        f"{url}/s",
        json={"type": "kubernetes.io/tls"},
        timeout=5,
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert changed.status_code == 422
    assert changed.json()["message"] == (
        'Secret "s" is invalid: type: Invalid value: "kubernetes.io/tls": field is immutable'
    )
    bad = post(
        fake_api_server, "/api/v1/namespaces/default/secrets", {"metadata": {"name": "t"}, "data": {"a": "not base64!"}}
    )
    assert bad.status_code == 400
