"""Application(webhooks=...): run() serves them through the Manager; manifests() adds the Service, the
TLS Secret mount, the webhook port and the configurations (last), and no RBAC."""

from __future__ import annotations

import base64
import http.client
import json
import ssl
from pathlib import Path
from typing import Any

import pytest

from cloudcoil_cache.admission import AdmissionDenied, AdmissionRequest, AdmissionWebhook, WebhookServer
from cloudcoil_cache.admission._certs import SelfSignedCertificates
from cloudcoil_cache.application import Application
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.testing import FakeAPIServer

WAIT = 10.0


def _noop(obj: Any, ctx: Any) -> None:
    return None


def webhook() -> AdmissionWebhook:
    hooks = AdmissionWebhook()

    @hooks.validating(ConfigMap, path="/validate-configmaps")
    def no_forbidden_key(request: AdmissionRequest) -> None:
        if "forbidden" in (request.resource.data or {}):
            raise AdmissionDenied("the key 'forbidden' is not allowed")

    @hooks.mutating(ConfigMap, path="/default-configmaps")
    def default(request: AdmissionRequest) -> Any:
        return None

    return hooks


def by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def app(**options: Any) -> Application:
    return Application("widgets", Controller(ConfigMap, _noop), module="widgets.main", **options)


def test_manifests_add_the_service_the_secret_mount_and_the_configurations_last() -> None:
    docs = app(webhooks=webhook()).manifests(namespace="ops", image="img:1")
    assert [d["kind"] for d in docs] == [
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "Service",
        "Deployment",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ]
    (service,) = by_kind(docs, "Service")
    assert service["metadata"]["name"] == "widgets-webhook" and service["metadata"]["namespace"] == "ops"
    assert service["spec"] == {
        "selector": {"app.kubernetes.io/name": "widgets"},
        "ports": [{"name": "webhook", "port": 443, "targetPort": "webhook", "protocol": "TCP"}],
    }
    pod = by_kind(docs, "Deployment")[0]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert {"name": "webhook", "containerPort": 9443, "protocol": "TCP"} in container["ports"]
    assert container["volumeMounts"] == [
        {"name": "webhook-tls", "mountPath": "/var/run/cloudcoil/tls", "readOnly": True}
    ]
    assert pod["volumes"] == [{"name": "webhook-tls", "secret": {"secretName": "widgets-webhook-tls"}}]
    (validating,) = by_kind(docs, "ValidatingWebhookConfiguration")
    assert validating["metadata"]["name"] == "widgets.ops.cloudcoil.io"
    (hook,) = validating["webhooks"]
    assert hook["clientConfig"]["service"] == {
        "namespace": "ops",
        "name": "widgets-webhook",
        "port": 443,
        "path": "/validate-configmaps",
    }
    assert "caBundle" not in hook["clientConfig"]  # to be injected (cert-manager): none was given


def test_rbac_is_unchanged_by_webhooks() -> None:
    plain = by_kind(app().manifests(namespace="ops"), "Role")
    assert by_kind(app(webhooks=webhook()).manifests(namespace="ops"), "Role") == plain


def test_no_webhook_objects_without_an_image() -> None:
    docs = app(webhooks=webhook()).manifests(namespace="ops")
    assert [d["kind"] for d in docs] == ["ServiceAccount", "Role", "RoleBinding"]


def test_the_ca_bundle_from_bytes_or_a_file(tmp_path: Path) -> None:
    pem = SelfSignedCertificates(("localhost",)).ca_bundle
    expected = base64.b64encode(pem).decode()
    for options in ({"ca_bundle": pem}, {"ca_file": _write(tmp_path / "ca.pem", pem)}):
        docs = app(webhooks=webhook(), **options).manifests(namespace="ops", image="img:1")
        for doc in by_kind(docs, "ValidatingWebhookConfiguration") + by_kind(docs, "MutatingWebhookConfiguration"):
            assert [h["clientConfig"]["caBundle"] for h in doc["webhooks"]] == [expected]


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_a_webhook_server_keeps_its_port_service_port_and_tls_secret() -> None:
    server = WebhookServer(webhook(), port=8443, service_port=8444, tls_secret="operator-tls")
    docs = app(webhooks=server).manifests(namespace="ops", image="img:1")
    (service,) = by_kind(docs, "Service")
    assert service["spec"]["ports"][0]["port"] == 8444
    pod = by_kind(docs, "Deployment")[0]["spec"]["template"]["spec"]
    assert {"name": "webhook", "containerPort": 8443, "protocol": "TCP"} in pod["containers"][0]["ports"]
    assert pod["volumes"][0]["secret"]["secretName"] == "operator-tls"
    (validating,) = by_kind(docs, "ValidatingWebhookConfiguration")
    assert validating["webhooks"][0]["clientConfig"]["service"]["port"] == 8444


def test_an_admission_webhook_is_served_from_the_mounted_secret(tmp_path: Path) -> None:
    server = app(webhooks=webhook(), webhook_cert_dir=str(tmp_path)).webhooks.server()  # type: ignore[union-attr]
    assert (server.host, server.port, server.tls_secret) == ("0.0.0.0", 9443, "widgets-webhook-tls")


@pytest.mark.parametrize(
    ("options", "error", "text"),
    [
        ({"webhooks": AdmissionWebhook()}, ValueError, "has no routes"),
        ({"webhooks": "hooks"}, TypeError, "expects an AdmissionWebhook or a WebhookServer"),
        ({"ca_bundle": b"not a certificate"}, ValueError, "expected PEM certificate"),
        ({"ca_file": "/nonexistent/ca.pem"}, ValueError, "cannot read '/nonexistent/ca.pem'"),
        ({"ca_bundle": b"x", "ca_file": "y"}, ValueError, "not both"),
        ({"webhook_cert_dir": "relative/tls"}, ValueError, "absolute path"),
    ],
)
def test_bad_webhook_options_are_named(options: dict[str, Any], error: type[Exception], text: str) -> None:
    options.setdefault("webhooks", webhook())
    with pytest.raises(error) as info:
        app(**options)
    assert text in str(info.value)


def _review(data: dict[str, str]) -> bytes:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}, "data": data}
    request = {
        "uid": "req-1",
        "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "operation": "CREATE",
        "namespace": "default",
        "name": "c",
        "userInfo": {"username": "alice"},
        "object": obj,
    }
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}).encode()


def test_run_serves_the_webhooks_with_the_controllers(fake_api_server: FakeAPIServer, config: Config) -> None:
    server = WebhookServer(webhook(), port=0, max_concurrency=2)
    application = Application(
        "widgets", Controller(ConfigMap, _noop), webhooks=server, config=config, health_port=None, sync_timeout=10
    )
    with pytest.raises(ValueError, match="listens on port 0"):
        application.manifests(image="img:1")
    manager = application.manager()  # what run() runs until SIGTERM/SIGINT or its stop Event
    assert manager.webhooks is server
    manager.start()
    try:
        context = ssl.create_default_context(cadata=server.ca_bundle.decode())
        conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=context, timeout=WAIT)
        try:
            headers = {"Content-Type": "application/json"}
            conn.request("POST", "/validate-configmaps", body=_review({"forbidden": "1"}), headers=headers)
            answer = json.loads(conn.getresponse().read())
        finally:
            conn.close()
        assert answer["response"]["allowed"] is False
        assert "the key 'forbidden' is not allowed" in answer["response"]["status"]["message"]
        assert manager.ready()
    finally:
        manager.stop()
    assert not server.running and server.threads() == []
