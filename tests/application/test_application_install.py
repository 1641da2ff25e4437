"""Application.install() against the fake API server over real HTTP: server-side apply in order, CRDs first."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from cloudcoil_cache.admission import AdmissionWebhook
from cloudcoil_cache.application import Application
from cloudcoil_cache.controller import Controller
from cloudcoil_cache.errors import WaitTimeout
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.resources import GenericResource

Widget = GenericResource.define(api_version="example.com/v1", kind="Widget", plural="widgets", namespaced=True)

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }
        ],
    },
}


def app(**options: Any) -> Application:
    ctl = Controller(Widget, lambda w, ctx: None).owns(ConfigMap)
    return Application("widgets", ctl, leader_election=True, crds=[CRD], module="widgets.main", **options)


def test_install_applies_crds_first_then_every_manifest(fake_api_server, config):
    application = app()
    applied = application.install(config, namespace="ops", image="example.com/widgets:1", create_namespace=True)
    kinds = [obj.kind for obj in applied]
    assert kinds == ["CustomResourceDefinition", "Namespace", "ServiceAccount", "Role", "RoleBinding", "Deployment"]
    writes = [r for r in fake_api_server.requests if r.verb in ("create", "update", "patch")]
    assert [r.verb for r in writes] == ["patch"] * 6
    assert all(
        r.headers.get("Content-Type", r.headers.get("content-type")) == "application/apply-patch+yaml" for r in writes
    )
    assert all(r.query.get("fieldManager") == "widgets" and r.query.get("force") == "true" for r in writes)
    role = fake_api_server.get("roles.rbac.authorization.k8s.io", "widgets", "ops")
    expected = next(d for d in application.manifests(namespace="ops") if d["kind"] == "Role")
    assert role["rules"] == expected["rules"]
    managers = {entry["manager"] for entry in role["metadata"]["managedFields"]}
    assert managers == {"widgets"}
    assert fake_api_server.get("serviceaccounts", "widgets", "ops")["metadata"]["labels"]["app.kubernetes.io/name"]
    assert fake_api_server.get("customresourcedefinitions.apiextensions.k8s.io", "widgets.example.com")


def test_install_again_is_a_no_op_and_a_removed_rule_goes_away(fake_api_server, config):
    app().install(config, namespace="ops")
    role = fake_api_server.get("roles.rbac.authorization.k8s.io", "widgets", "ops")
    again = app().install(config, namespace="ops")
    assert [o.kind for o in again] == ["CustomResourceDefinition", "ServiceAccount", "Role", "RoleBinding"]
    assert fake_api_server.get("roles.rbac.authorization.k8s.io", "widgets", "ops") == role
    # without leader election, the Lease rule is no longer applied: server-side apply removes it
    plain = Application("widgets", Controller(Widget, lambda w, ctx: None).owns(ConfigMap), module="m")
    plain.install(config, namespace="ops")
    rules = fake_api_server.get("roles.rbac.authorization.k8s.io", "widgets", "ops")["rules"]
    assert "leases" not in {r for rule in rules for r in rule["resources"]}


def test_install_waits_for_the_deployment_when_asked(fake_api_server, config):
    def roll_out() -> None:  # the fake has no deployment controller: play its part once the Deployment exists
        fake_api_server.wait_for_request(
            lambda r: r.verb == "get" and r.path.endswith("/deployments/widgets"), timeout=10
        )
        deployment = fake_api_server.get("deployments.apps", "widgets", "ops")
        status = {"observedGeneration": deployment["metadata"]["generation"], "replicas": 1}
        status.update(updatedReplicas=1, availableReplicas=1, readyReplicas=1)
        fake_api_server.patch("deployments.apps", "widgets", {"status": status}, "ops", subresource="status")

    helper = threading.Thread(target=roll_out, name="test-roll-out")
    helper.start()
    try:
        applied = app().install(config, namespace="ops", image="img:1", wait=True, timeout=10)
    finally:
        helper.join()
    assert applied[-1].kind == "Deployment"


def test_install_wait_times_out_with_a_typed_error(fake_api_server, config):
    with pytest.raises(WaitTimeout):
        app().install(config, namespace="ops", image="img:1", wait=True, timeout=0.5)


def test_install_with_webhooks_applies_the_configurations_last(fake_api_server, config):
    hooks = AdmissionWebhook()
    hooks.validating(ConfigMap, path="/validate-configmaps")(lambda request: None)
    applied = app(webhooks=hooks).install(config, namespace="default", image="example.com/widgets:1")
    assert [obj.kind for obj in applied] == [
        "CustomResourceDefinition",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "Service",
        "Deployment",
        "ValidatingWebhookConfiguration",
    ]
    stored = fake_api_server.get(
        "validatingwebhookconfigurations.admissionregistration.k8s.io", "widgets.default.cloudcoil.io", None
    )
    assert stored["webhooks"][0]["clientConfig"]["service"]["name"] == "widgets-webhook"
