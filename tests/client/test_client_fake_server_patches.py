"""The fake server's strategic merge, server-side apply and scale, seen over HTTP."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
import requests

from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import BadRequest, ResourceConflict, UnprocessableEntity
from cloudcoil_cache.models.kubernetes.apps.v1 import Deployment
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_deployment

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "data" / "k8s-swagger-v1.30.2.json"

BASE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web",
        "namespace": "default",
        "labels": {"app": "web", "tier": "a"},
        "finalizers": ["a/one", "b/two"],
    },
    "spec": {
        "containers": [
            {
                "name": "web",
                "image": "nginx",
                "args": ["-v"],
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
            },
            {"name": "log", "image": "busybox"},
        ],
        "volumes": [{"name": "data", "emptyDir": {}}],
    },
}


def strategic(server: FakeAPIServer, config: Config, patch: dict[str, Any]) -> dict[str, Any]:
    """Patch BASE's spec as a Deployment's pod template (a pod's containers are immutable on a
    real server); the result is pod-shaped."""
    labels = {"app": "web"}
    server.create(
        "deployments",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": BASE["metadata"],
            "spec": {
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": BASE["spec"]},
            },
        },
        "default",
    )
    body = {k: ({"template": {"spec": v}} if k == "spec" else v) for k, v in patch.items()}
    result = Deployment.client(config).patch("web", body, patch_type="strategic").to_dict()
    return {"metadata": result["metadata"], "spec": result["spec"]["template"]["spec"]}


def containers(obj: dict[str, Any]) -> dict[str, Any]:
    return {c["name"]: c for c in obj["spec"]["containers"]}


@pytest.mark.parametrize(
    "patch, check",
    [
        (
            {"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}},
            lambda o: (
                [(c["name"], c["image"]) for c in o["spec"]["containers"]] == [("web", "nginx:2"), ("log", "busybox")]
            ),
        ),
        (
            {
                "spec": {
                    "containers": [{"name": "web", "env": [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}]}]
                }
            },
            lambda o: (
                containers(o)["web"]["env"]
                == [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}, {"name": "C", "value": "4"}]
            ),
        ),
        (
            {"spec": {"containers": [{"name": "web", "ports": [{"containerPort": 443}]}]}},
            lambda o: [p["containerPort"] for p in containers(o)["web"]["ports"]] == [80, 443],
        ),
        ({"spec": {"containers": [{"name": "web", "args": ["-q"]}]}}, lambda o: containers(o)["web"]["args"] == ["-q"]),
        ({"spec": {"containers": [{"name": "log", "$patch": "delete"}]}}, lambda o: list(containers(o)) == ["web"]),
        (
            {"spec": {"containers": [{"name": "only", "image": "x"}, {"$patch": "replace"}]}},
            lambda o: list(containers(o)) == ["only"],
        ),
        (
            {"spec": {"volumes": [{"name": "cache", "emptyDir": {}}]}},
            lambda o: [v["name"] for v in o["spec"]["volumes"]] == ["data", "cache"],
        ),
        (
            {"metadata": {"labels": {"$patch": "replace", "new": "1"}}},
            lambda o: o["metadata"]["labels"] == {"new": "1"},
        ),
        ({"metadata": {"labels": {"tier": None}}}, lambda o: o["metadata"]["labels"] == {"app": "web"}),
        (
            {"metadata": {"finalizers": ["b/two", "c/three"]}},
            lambda o: o["metadata"]["finalizers"] == ["a/one", "b/two", "c/three"],
        ),
        (
            {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a/one"]}},
            lambda o: o["metadata"]["finalizers"] == ["b/two"],
        ),
        (
            {"$setElementOrder/spec": [], "spec": {"containers": [{"name": "log", "image": "y"}]}},
            lambda o: containers(o)["log"]["image"] == "y",
        ),
    ],
    ids=[
        "containers-by-name",
        "env-by-name",
        "ports-by-container-port",
        "args-replaced",
        "patch-delete-item",
        "patch-replace-list",
        "volumes-by-name",
        "patch-replace-map",
        "null-deletes",
        "finalizers-as-set",
        "delete-from-primitive-list",
        "set-element-order-ignored",
    ],
)
def test_a_strategic_patch_follows_the_schemas_merge_keys(
    server: FakeAPIServer, config: Config, patch: dict[str, Any], check: Any
) -> None:
    assert check(strategic(server, config, patch))


def test_status_conditions_merge_by_type(server: FakeAPIServer, config: Config) -> None:
    server.create("pods", BASE, "default")
    client = Pod.client(config)
    client.patch(
        "web",
        {"status": {"conditions": [{"type": "Ready", "status": "False"}]}},
        patch_type="strategic",
        subresource="status",
    )
    result = client.patch(
        "web",
        {"status": {"conditions": [{"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True"}]}},
        patch_type="strategic",
        subresource="status",
    )
    assert [(c.type, c.status) for c in result.status.conditions] == [("Ready", "True"), ("Initialized", "True")]


def test_retain_keys_clears_the_other_members_of_a_union(server: FakeAPIServer, config: Config) -> None:
    server.create("deployments", make_deployment("api"), "default")
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    result = Deployment.client(config).patch("api", patch, patch_type="strategic")
    assert result.to_dict()["spec"]["strategy"] == {"type": "Recreate"}


def test_a_strategic_list_item_without_its_merge_key_is_invalid(server: FakeAPIServer, config: Config) -> None:
    with pytest.raises(UnprocessableEntity, match="does not contain declared merge key: name"):
        strategic(server, config, {"spec": {"containers": [{"image": "nameless"}]}})


def test_apply_creates_a_missing_object_with_201(server: FakeAPIServer) -> None:
    body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n"
    resp = requests.patch(
        f"{server.url}/api/v1/namespaces/default/configmaps/settings",
        params={"fieldManager": "yaml-tests"},
        data=body,
        timeout=5,
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert resp.status_code == 201
    obj = resp.json()
    assert obj["data"] == {"mode": "fast"}
    managed = obj["metadata"]["managedFields"]
    assert [(m["manager"], m["operation"], m["fieldsV1"]) for m in managed] == [
        ("yaml-tests", "Apply", {"f:data": {"f:mode": {}}})
    ]
    again = requests.patch(
        resp.url, data=body.replace("fast", "slow"), timeout=5, headers={"Content-Type": "application/apply-patch+yaml"}
    )
    assert again.status_code == 200 and again.json()["data"] == {"mode": "slow"}


@pytest.mark.parametrize(
    "body, message",
    [
        ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}}, "kind 'Pod'"),
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "other"}}, "does not match the name on the URL"),
    ],
    ids=["wrong-kind", "wrong-name"],
)
def test_apply_of_a_mismatched_object_is_a_bad_request(config: Config, body: dict[str, Any], message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        Pod.client(config).patch("web", body, patch_type="apply", field_manager="tests")


def test_the_scale_subresource_reads_and_writes_replicas(server: FakeAPIServer) -> None:
    server.create("deployments", make_deployment("api", replicas=2), "default")
    url = f"{server.url}/apis/apps/v1/namespaces/default/deployments/api/scale"
    scale = requests.get(url, timeout=5).json()
    assert (scale["kind"], scale["apiVersion"], scale["spec"]) == ("Scale", "autoscaling/v1", {"replicas": 2})
    assert scale["status"] == {"replicas": 2, "selector": "app.kubernetes.io/name=api"}
    scale["spec"]["replicas"] = 7
    assert requests.put(url, json=scale, timeout=5).json()["spec"] == {"replicas": 7}
    stale = requests.put(url, json=scale, timeout=5)
    assert (stale.status_code, stale.json()["reason"]) == (409, "Conflict")
    assert server.get("deployments", "api", "default")["spec"]["replicas"] == 7


def test_pods_have_no_scale_subresource(server: FakeAPIServer) -> None:
    resp = requests.get(f"{server.url}/api/v1/namespaces/default/pods/web/scale", timeout=5)
    assert resp.status_code == 404


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"client_ca": b"-----BEGIN CERTIFICATE-----"}, "client certificates need HTTPS"),
        ({"keyfile": "k.pem"}, "keyfile needs a certfile"),
        ({"certfile": "/nonexistent/c.pem"}, "cannot load the server certificate"),
    ],
    ids=["client-ca-without-tls", "key-without-cert", "missing-cert-file"],
)
def test_bad_tls_settings_are_a_value_error_naming_the_problem(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FakeAPIServer(**kwargs)


def test_a_stale_delete_precondition_on_resource_version_is_a_conflict(server: FakeAPIServer, config: Config) -> None:
    server.create("pods", BASE, "default")
    with pytest.raises(ResourceConflict, match="ResourceVersion in precondition: 1,"):
        Pod.client(config).delete("web", preconditions={"resourceVersion": "1"})


@pytest.mark.skipif(not SPEC.exists(), reason=f"the OpenAPI spec is not at {SPEC}")
def test_the_committed_patch_key_table_is_what_the_generator_writes(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("generate_patch_keys", ROOT / "tools" / "generate_patch_keys.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("generate_patch_keys", module)
    spec.loader.exec_module(module)
    fresh = module.generate(SPEC, tmp_path / "_patch_keys.py").read_text()
    committed = (ROOT / "cloudcoil_cache" / "testing" / "apiserver" / "machinery" / "patch_keys.py").read_text()
    assert fresh == committed, "regenerate with tools/generate_patch_keys.py"
    assert "{'containers': ('io.k8s.api.core.v1.Container', 'merge', 'name')" in fresh
