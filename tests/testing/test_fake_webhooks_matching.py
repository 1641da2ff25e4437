"""Which webhooks FakeAPIServer calls (rules, scope, selectors), failure policies, dry runs and the call record."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest
from test_fake_webhooks import CMS, M, V, call, cm, register, webhook
from webhook_helpers import AdmissionServer, configuration

from cloudcoil_cache.testing import FakeAPIServer


@pytest.fixture
def fake() -> Iterator[FakeAPIServer]:
    with FakeAPIServer(namespace_lifecycle=True) as server:
        yield server


@pytest.fixture
def hook(fake: FakeAPIServer) -> Iterator[AdmissionServer]:
    with AdmissionServer(read_url=fake.url) as server:
        yield server


def namespace(fake: FakeAPIServer, name: str, labels: dict[str, str] | None = None) -> None:
    meta: dict[str, Any] = {"name": name, "labels": labels or {}}
    status, body, _ = call(
        fake, "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}
    )
    assert status == 201, body


def pod(name: str = "p") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


# -- rules -----------------------------------------------------------------------------------


def test_rules_operations_and_resources(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    webhook(fake, hook, V, "/deny", operations=("UPDATE",))
    assert call(fake, "POST", CMS, cm())[0] == 201  # CREATE is not in the rule
    assert call(fake, "POST", "/api/v1/namespaces/default/secrets", {"metadata": {"name": "s"}})[0] == 201
    status, _, _ = call(fake, "PATCH", CMS + "/c", {"data": {"k": "w"}}, "application/merge-patch+json")
    assert status == 400
    assert hook.paths() == ["/deny"]


def test_wildcards_match_main_resources_and_subresources_only_when_named(
    fake: FakeAPIServer, hook: AdmissionServer
) -> None:
    webhook(fake, hook, V, "/allow", resources=("*",), operations=("*",), api_groups=("*",))
    status_hook = webhook(fake, hook, V, "/deny", name="status.probe.io", resources=("pods/status",))
    assert call(fake, "POST", "/api/v1/namespaces/default/pods", pod())[0] == 201
    assert hook.paths() == ["/allow"]  # the create is not pods/status
    status, body, _ = call(
        fake,
        "PATCH",
        "/api/v1/namespaces/default/pods/p/status",
        {"status": {"phase": "Running"}},
        "application/merge-patch+json",
    )
    assert status == 400 and status_hook in body["message"]
    (_, review) = hook.reviews[-1]
    assert review["request"]["subResource"] == "status" and review["request"]["requestSubResource"] == "status"
    assert hook.paths() == ["/allow", "/deny"]  # "*" does not cover pods/status


def test_scope(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    webhook(fake, hook, V, "/deny", resources=("*",), scope="Cluster", operations=("CREATE",))
    assert call(fake, "POST", CMS, cm())[0] == 201  # namespaced
    namespace_status, _, _ = call(
        fake, "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}
    )
    assert namespace_status == 400  # a namespace is cluster-scoped


def test_webhook_configurations_themselves_are_never_sent(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    webhook(fake, hook, V, "/deny", resources=("*",), api_groups=("*",), operations=("*",))
    register(fake, configuration(M, "second.probe.io", hook.url("/deny"), hook.ca_bundle))
    assert hook.reviews == []


# -- selectors -------------------------------------------------------------------------------


def test_namespace_selector_uses_the_namespaces_labels(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    namespace(fake, "guarded", {"team": "a"})
    namespace(fake, "open", {"team": "b"})
    webhook(
        fake,
        hook,
        V,
        "/deny",
        namespace_selector={"matchExpressions": [{"key": "team", "operator": "In", "values": ["a"]}]},
    )
    assert call(fake, "POST", "/api/v1/namespaces/open/configmaps", cm())[0] == 201
    assert call(fake, "POST", "/api/v1/namespaces/guarded/configmaps", cm())[0] == 400


def test_namespace_selector_always_matches_cluster_scoped_objects_and_namespaces_use_their_own_labels(
    fake: FakeAPIServer, hook: AdmissionServer
) -> None:
    webhook(
        fake,
        hook,
        V,
        "/deny",
        resources=("namespaces", "persistentvolumes"),
        namespace_selector={"matchLabels": {"team": "a"}},
    )
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/x"}},
    }
    assert call(fake, "POST", "/api/v1/persistentvolumes", pv)[0] == 400
    namespace(fake, "b-team", {"team": "b"})
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a-team", "labels": {"team": "a"}}}
    assert call(fake, "POST", "/api/v1/namespaces", ns)[0] == 400


def test_object_selector_matches_the_new_or_the_old_object(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    webhook(fake, hook, V, "/deny", object_selector={"matchLabels": {"guard": "on"}})
    assert call(fake, "POST", CMS, cm("free"))[0] == 201
    assert call(fake, "POST", CMS, cm("held", labels={"guard": "on"}))[0] == 400
    webhook(fake, hook, M, "/allow", name="obj.probe.io", object_selector={"matchLabels": {"guard": "on"}})
    call(fake, "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/deny.probe.io")
    assert call(fake, "POST", CMS, cm("held", labels={"guard": "on"}))[0] == 201
    register(
        fake,
        configuration(
            V, "deny.probe.io", hook.url("/deny"), hook.ca_bundle, object_selector={"matchLabels": {"guard": "on"}}
        ),
    )
    # the update removes the label: the old object still selects the webhook
    status, _, _ = call(
        fake, "PATCH", CMS + "/held", {"metadata": {"labels": {"guard": None}}}, "application/merge-patch+json"
    )
    assert status == 400


# -- policies, dry runs, answers ---------------------------------------------------------------


@pytest.mark.parametrize("path", ["/500", "/504", "/garbage", "/uid", "/slow"])
def test_ignore_lets_failed_calls_through(fake: FakeAPIServer, hook: AdmissionServer, path: str) -> None:
    webhook(fake, hook, V, path, failure_policy="Ignore", timeout=1)
    assert call(fake, "POST", CMS, cm())[0] == 201
    (recorded,) = fake.webhook_calls
    assert recorded.error is not None
    assert (recorded.response is not None) == (path == "/uid")  # a review came back, with the wrong uid


def test_ignore_does_not_override_a_denial(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    webhook(fake, hook, V, "/deny", failure_policy="Ignore")
    assert call(fake, "POST", CMS, cm())[0] == 400


def test_dry_run_is_refused_for_webhooks_with_side_effects(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    name = webhook(fake, hook, V, "/allow", side_effects="Some", failure_policy="Ignore")
    status, body, _ = call(fake, "POST", CMS + "?dryRun=All", cm())
    assert (status, body["reason"]) == (400, "BadRequest")
    assert body["message"] == f'admission webhook "{name}" does not support dry run'
    assert hook.reviews == []
    assert call(fake, "POST", CMS, cm())[0] == 201  # not a dry run: called


def test_dry_run_accepts_none_on_dry_run(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    webhook(fake, hook, V, "/allow", side_effects="NoneOnDryRun")
    assert call(fake, "POST", CMS + "?dryRun=All", cm())[0] == 201
    assert call(fake, "GET", CMS + "/c")[0] == 404


def test_a_patch_on_delete_is_an_internal_error_even_under_ignore(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    assert call(fake, "POST", CMS, cm(labels={"a": "b"}))[0] == 201
    name = webhook(fake, hook, M, "/patch", operations=("DELETE",), failure_policy="Ignore")
    status, body, _ = call(fake, "DELETE", CMS + "/c")
    assert (status, body["reason"]) == (500, "InternalError")
    assert body["message"] == (
        f'Internal error occurred: admission webhook "{name}" attempted to modify the object, '
        "which is not supported for this operation"
    )
    assert call(fake, "GET", CMS + "/c")[0] == 200


def test_update_sees_the_patched_object_and_conflicts_still_apply(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    assert call(fake, "POST", CMS, cm())[0] == 201
    webhook(fake, hook, M, "/patch", operations=("UPDATE",))
    current = call(fake, "GET", CMS + "/c")[1]
    current["data"] = {"k": "new"}
    status, body, _ = call(fake, "PUT", CMS + "/c", current)
    assert status == 200 and body["metadata"]["labels"] == {"probe/mutated": "true"}
    assert body["data"] == {"k": "new"}
    assert call(fake, "PUT", CMS + "/c", current)[0] == 409  # the stale resourceVersion


def test_the_fake_without_webhooks_only_stores_configurations(hook: AdmissionServer) -> None:
    with FakeAPIServer(webhooks=False) as fake:
        webhook(fake, hook, V, "/deny")
        assert call(fake, "POST", CMS, cm())[0] == 201
        fake.webhooks = True
        assert call(fake, "POST", CMS, cm("d"))[0] == 400
    assert hook.paths() == ["/deny"]


def test_the_direct_object_api_does_not_call_webhooks(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    webhook(fake, hook, V, "/deny")
    fake.create("configmaps", cm(), "default")
    assert hook.reviews == [] and fake.webhook_calls == []


def test_service_client_config_is_a_failed_call(fake: FakeAPIServer) -> None:
    config = configuration(V, "svc.probe.io", "https://unused", None)
    config["webhooks"][0]["clientConfig"] = {"service": {"name": "s", "namespace": "default"}}
    register(fake, config)
    status, body, _ = call(fake, "POST", CMS, cm())
    assert status == 500 and "clientConfig.service" in body["message"]


def test_wait_for_webhook_calls(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    webhook(fake, hook, V, "/allow")
    call(fake, "POST", CMS, cm())
    (recorded,) = fake.wait_for_webhook_calls(1, timeout=5)
    assert recorded.url == hook.url("/allow") and not recorded.mutating
    fake.clear_webhook_calls()
    assert fake.webhook_calls == []


# -- kubectl shows the warnings ----------------------------------------------------------------


def _kubectl() -> str | None:
    try:
        from cloudcoil_cache.testing._real import find_assets

        found = find_assets() / "kubectl"
        if os.access(found, os.X_OK):
            return str(found)
    except RuntimeError:
        pass
    return shutil.which("kubectl")


@pytest.mark.skipif(_kubectl() is None, reason="no kubectl")
def test_kubectl_prints_webhook_warnings(fake: FakeAPIServer, hook: AdmissionServer, tmp_path: Path) -> None:
    webhook(fake, hook, V, "/warn")
    kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
    done = subprocess.run(
        [str(_kubectl()), "--kubeconfig", kubeconfig, "create", "configmap", "c", "--from-literal=k=v"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Warning: probe warning one" in done.stderr and "Warning: probe warning two" in done.stderr


def test_user_info_is_the_authenticated_user(hook: AdmissionServer) -> None:
    with FakeAPIServer(expected_token="secret-token") as fake:
        config = configuration(V, "user.probe.io", hook.url("/allow"), hook.ca_bundle)
        for path, body in (
            ("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", config),
            (CMS, cm()),
        ):
            request = urllib.request.Request(fake.url + path, data=json.dumps(body).encode(), method="POST")
            request.add_header("Content-Type", "application/json")
            request.add_header("Authorization", "Bearer secret-token")
            with urllib.request.urlopen(request, timeout=30) as answer:
                assert answer.status == 201
    (_, review) = hook.reviews[0]
    assert review["request"]["userInfo"] == {
        "username": "token-user",
        "groups": ["system:masters", "system:authenticated"],
    }
