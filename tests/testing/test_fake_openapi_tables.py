"""OpenAPI v2/v3 documents, server-side tables, protobuf request bodies and watch timeouts."""

from __future__ import annotations

from typing import Any

import requests
from fake_server_helpers import read_events, watch

from cloudcoil_cache.testing import FakeAPIServer, make_pod

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


# -- OpenAPI ---------------------------------------------------------------------------------


def test_openapi_v2_is_the_spec_in_json_and_protobuf_only_is_not_acceptable(fake_api_server: FakeAPIServer) -> None:
    resp = requests.get(fake_api_server.url + "/openapi/v2", timeout=10)
    doc = resp.json()
    assert doc["swagger"] == "2.0" and "io.k8s.api.core.v1.Pod" in doc["definitions"]
    refused = requests.get(
        fake_api_server.url + "/openapi/v2",
        timeout=10,
        headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"},
    )
    assert refused.status_code == 406


def test_openapi_v3_lists_every_group_version_and_serves_each(fake_api_server: FakeAPIServer) -> None:
    root = requests.get(fake_api_server.url + "/openapi/v3", timeout=10).json()
    assert {"api/v1", "apis/apps/v1", "apis/autoscaling/v2"} <= set(root["paths"])
    url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/apps/v1?hash=")
    doc = requests.get(fake_api_server.url + url, timeout=10).json()
    assert doc["openapi"] == "3.0.0"
    deployment = doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"]
    assert deployment["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    assert deployment["properties"]["spec"]["$ref"] == ("#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec")
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    assert "application/apply-patch+yaml" in patch["requestBody"]["content"]
    missing = requests.get(fake_api_server.url + "/openapi/v3/apis/nope/v1", timeout=10)
    assert missing.status_code == 404


def test_a_custom_resources_schema_is_in_both_documents(fake_api_server: FakeAPIServer) -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"size": {"type": "integer", "description": "how big"}}}
        },
    }
    fake_api_server.register_resource("example.com", "v1", "Widget", "widgets", schema=schema)
    doc = requests.get(fake_api_server.url + "/openapi/v3/apis/example.com/v1", timeout=10).json()
    widget = doc["components"]["schemas"]["com.example.v1.Widget"]
    assert widget["properties"]["spec"]["properties"]["size"]["description"] == "how big"
    assert widget["x-kubernetes-group-version-kind"][0]["kind"] == "Widget"
    v2 = requests.get(fake_api_server.url + "/openapi/v2", timeout=10).json()
    assert "com.example.v1.Widget" in v2["definitions"]
    assert "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}" in v2["paths"]


# -- tables ----------------------------------------------------------------------------------


def test_a_pod_list_as_a_table_has_the_real_columns(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("pods", make_pod("web-1", node_name="n1"))
    table = requests.get(
        fake_api_server.url + "/api/v1/namespaces/default/pods", timeout=5, headers={"Accept": TABLE}
    ).json()
    assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert [(c["name"], c["priority"]) for c in table["columnDefinitions"]] == [
        ("Name", 0),
        ("Ready", 0),
        ("Status", 0),
        ("Restarts", 0),
        ("Age", 0),
        ("IP", 1),
        ("Node", 1),
        ("Nominated Node", 1),
        ("Readiness Gates", 1),
    ]
    (row,) = table["rows"]
    assert row["cells"][:4] == ["web-1", "2/2", "Running", "0"]
    assert row["cells"][6] == "n1"
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert table["metadata"]["resourceVersion"]


def test_other_kinds_get_their_columns_or_name_and_created_at(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("configmaps", {"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}})
    cms = requests.get(
        fake_api_server.url + "/api/v1/namespaces/default/configmaps/c",
        timeout=5,
        headers={"Accept": TABLE},
        params={"includeObject": "Object"},
    ).json()
    assert [c["name"] for c in cms["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert cms["rows"][0]["cells"][:2] == ["c", 2]
    assert cms["rows"][0]["object"]["data"] == {"a": "1", "b": "2"}
    fake_api_server.create("limitranges", {"metadata": {"name": "l"}, "spec": {"limits": [{"type": "Container"}]}})
    ranges = requests.get(fake_api_server.url + "/api/v1/limitranges", timeout=5, headers={"Accept": TABLE}).json()
    assert [c["name"] for c in ranges["columnDefinitions"]] == ["Name", "Created At"]


def test_a_table_watch_sends_one_row_tables(fake_api_server: FakeAPIServer) -> None:
    rv = fake_api_server.revision
    fake_api_server.create("configmaps", {"metadata": {"name": "c"}, "data": {"a": "1"}})
    resp = requests.get(
        fake_api_server.url + "/api/v1/namespaces/default/configmaps",
        params={"watch": "true", "resourceVersion": rv, "timeoutSeconds": 1},
        headers={"Accept": TABLE},
        stream=True,
        timeout=5,
    )
    with resp:
        (event,) = read_events(resp, 1)
    assert event["type"] == "ADDED" and event["object"]["kind"] == "Table"
    assert event["object"]["rows"][0]["cells"][:2] == ["c", 1]


# -- protobuf bodies -----------------------------------------------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, value: bytes | str | int) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = _field(1, api_version) + _field(2, kind)
    return b"k8s\x00" + _field(1, type_meta) + _field(2, raw)


def test_a_protobuf_body_is_decoded(fake_api_server: FakeAPIServer) -> None:
    # ConfigMap{metadata{name: "p", labels{a: b}}, data{k: v}} in Kubernetes' protobuf encoding.
    meta = _field(1, "p") + _field(11, _field(1, "a") + _field(2, "b")) + _field(3, "")
    raw = _field(1, meta) + _field(2, _field(1, "k") + _field(2, "v"))
    resp = requests.post(
        fake_api_server.url + "/api/v1/namespaces/default/configmaps",
        data=_envelope("v1", "ConfigMap", raw),
        timeout=5,
        headers={"Content-Type": "application/vnd.kubernetes.protobuf"},
    )
    assert resp.status_code == 201, resp.text
    body: dict[str, Any] = resp.json()
    assert body["metadata"]["labels"] == {"a": "b"} and body["data"] == {"k": "v"}
    assert "namespace" not in body or body["metadata"]["namespace"] == "default"


def test_a_protobuf_access_review_is_answered(fake_api_server: FakeAPIServer) -> None:
    attributes = _field(1, "default") + _field(2, "list") + _field(5, "pods")
    raw = _field(2, _field(1, attributes))
    resp = requests.post(
        fake_api_server.url + "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        data=_envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview", raw),
        timeout=5,
        headers={"Content-Type": "application/vnd.kubernetes.protobuf"},
    )
    assert resp.status_code == 201
    assert resp.json()["spec"]["resourceAttributes"] == {"namespace": "default", "verb": "list", "resource": "pods"}
    assert resp.json()["status"] == {"allowed": True}


def test_an_undecodable_body_is_415(fake_api_server: FakeAPIServer) -> None:
    resp = requests.post(
        fake_api_server.url + "/api/v1/namespaces/default/configmaps",
        data=b"\xa1\x01\x02",
        timeout=5,
        headers={"Content-Type": "application/cbor"},
    )
    assert resp.status_code == 415 and resp.json()["reason"] == "UnsupportedMediaType"


# -- watch timeouts ----------------------------------------------------------------------------


def test_a_watch_without_timeout_seconds_lasts_half_an_hour_to_an_hour() -> None:
    assert FakeAPIServer().watch_timeout_range == (1800.0, 3600.0)


def test_the_fixture_keeps_short_watches(fake_api_server: FakeAPIServer) -> None:
    assert fake_api_server.watch_timeout_range == (5.0, 10.0)
    with watch(fake_api_server.url, "/api/v1/namespaces/default/pods", timeoutSeconds=1) as resp:
        assert read_events(resp) == []
