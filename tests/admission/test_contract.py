"""The HTTP status contract of ``AdmissionWebhook.answer`` (cloudcoil 0.8's, ported), driven with ``Exchange``s."""

from __future__ import annotations

import json
import logging
from typing import Iterator

import pytest
from _admission_support import call, configmap, exchange, response, review

from cloudcoil_cache.admission import AdmissionDenied, AdmissionRequest, AdmissionWebhook
from cloudcoil_cache.errors import CacheUnavailableError, CloudcoilError, ResourceConflict
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Namespace, Pod

VALIDATE = "/validate/core/v1/configmaps/check"


@pytest.fixture
def webhook() -> Iterator[AdmissionWebhook]:
    hook = AdmissionWebhook(max_body_bytes=4096)

    @hook.validating(ConfigMap, operations=("CREATE", "UPDATE", "DELETE"))
    def check(request: AdmissionRequest[ConfigMap]) -> None:
        data = request.resource.data if request.resource is not None else None
        what = (data or {}).get("what")
        if what == "deny":
            request.warn("you were warned")
            raise AdmissionDenied("denied: what=deny", code=409, reason="Conflict")
        if what == "boom":
            raise RuntimeError("secret detail that must not leak")
        if what == "unavailable":
            raise CacheUnavailableError("informer stale", reason="stale")
        if what == "api":
            raise ResourceConflict("token=abc", code=409)

    hook.start(5.0)
    yield hook
    hook.stop(5.0)


def test_healthz_is_200(webhook: AdmissionWebhook) -> None:
    assert call(webhook, exchange("/healthz", method="GET")).status == 200


def test_unknown_path_is_404(webhook: AdmissionWebhook) -> None:
    assert call(webhook, exchange("/validate/nothing", review(configmap()))).status == 404


def test_non_post_is_405(webhook: AdmissionWebhook) -> None:
    assert call(webhook, exchange(VALIDATE, review(configmap()), method="GET")).status == 405


def test_not_json_is_415(webhook: AdmissionWebhook) -> None:
    assert call(webhook, exchange(VALIDATE, review(configmap()), content_type="text/plain")).status == 415
    ok = exchange(VALIDATE, review(configmap()), content_type="application/json; charset=utf-8")
    assert call(webhook, ok).status == 200


def test_over_max_body_bytes_is_413(webhook: AdmissionWebhook) -> None:
    big = review(configmap(data={"x": "y" * 5000}))
    assert call(webhook, exchange(VALIDATE, big)).status == 413


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        {"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "request": {}},
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"},
        review(configmap(), uid=""),
        review(configmap(), operation="CONNECT"),
        review(configmap(), kind={"group": "", "version": "v1", "kind": "Secret"}),
        review(configmap(), resource={"group": "", "version": "v1", "resource": "secrets"}),
        review(configmap(), subResource="status"),
        review(configmap(), namespace=""),
        review(None),  # CREATE without object
        review(configmap(), operation="UPDATE"),  # UPDATE without oldObject
        review(configmap(), operation="DELETE", old=configmap()),  # DELETE with object
        review(configmap(), dryRun="yes"),
    ],
    ids=lambda b: str(b)[:60],
)
def test_malformed_or_mismatched_review_is_400(webhook: AdmissionWebhook, body: object) -> None:
    answer = call(webhook, exchange(VALIDATE, body))  # type: ignore[arg-type]
    assert answer.status == 400, answer.body
    assert json.loads(answer.body)["message"].startswith("Bad Request")


def test_allowed_echoes_the_uid(webhook: AdmissionWebhook) -> None:
    resp = response(call(webhook, exchange(VALIDATE, review(configmap(), uid="abc-123"))))
    assert resp == {"uid": "abc-123", "allowed": True}


def test_delete_sees_old_resource() -> None:
    hook = AdmissionWebhook()
    seen: list[AdmissionRequest[ConfigMap]] = []

    @hook.validating(ConfigMap, operations=("DELETE",))
    def check(request: AdmissionRequest[ConfigMap]) -> None:
        seen.append(request)

    with hook:
        resp = response(call(hook, exchange(hook.routes[0].path, review(None, operation="DELETE", old=configmap()))))
    assert resp["allowed"] is True
    assert seen[0].resource is None and seen[0].old_resource is not None
    assert seen[0].old_resource.metadata.name == "web" and seen[0].operation == "DELETE"
    assert seen[0].user_info.username == "alice" and seen[0].user_info.groups == ("dev",)


def test_undecodable_object_is_allowed_false_422_with_causes(webhook: AdmissionWebhook) -> None:
    bad = configmap(data="not a map")
    resp = response(call(webhook, exchange(VALIDATE, review(bad))))
    assert resp["allowed"] is False
    assert resp["status"]["code"] == 422 and resp["status"]["reason"] == "Invalid"
    assert resp["status"]["details"]["causes"]


def test_denied_is_200_allowed_false_with_its_status_and_warnings(webhook: AdmissionWebhook) -> None:
    resp = response(call(webhook, exchange(VALIDATE, review(configmap(data={"what": "deny"})))))
    assert resp["allowed"] is False
    assert resp["status"] == {"status": "Failure", "code": 409, "reason": "Conflict", "message": "denied: what=deny"}
    assert resp["warnings"] == ["you were warned"]
    assert webhook.metrics.value("cloudcoil_cache_admission_decisions_total", VALIDATE, "denied") == 1


@pytest.mark.parametrize(
    ("what", "cls"),
    [("boom", "RuntimeError"), ("unavailable", "CacheUnavailableError"), ("api", "ResourceConflict")],
)
def test_handler_failure_is_http_500_naming_only_the_class(
    webhook: AdmissionWebhook, caplog: pytest.LogCaptureFixture, what: str, cls: str
) -> None:
    with caplog.at_level(logging.ERROR, logger="cloudcoil_cache.admission"):
        answer = call(webhook, exchange(VALIDATE, review(configmap(data={"what": what}))))
    assert answer.status == 500
    assert json.loads(answer.body) == {"message": f"Admission webhook failed: {cls}"}
    assert b"secret" not in answer.body and b"token" not in answer.body
    assert any(r.exc_info for r in caplog.records), "logged with its traceback"
    assert webhook.metrics.value("controller_runtime_webhook_panics_total") == 1
    assert webhook.metrics.value("controller_runtime_webhook_requests_total", VALIDATE, "500") == 1


def test_not_started_is_503() -> None:
    hook = AdmissionWebhook()
    hook.validating(ConfigMap)(lambda request: None)
    assert call(hook, exchange(hook.routes[0].path, review(configmap()))).status == 503
    assert hook.readiness() == "admission webhook not started"


def test_admission_denied_checks_its_arguments() -> None:
    assert isinstance(AdmissionDenied("x"), CloudcoilError)
    for bad in (
        {"message": ""},
        {"message": "x", "code": 200},
        {"message": "x", "code": 600},
        {"message": "x", "code": True},
    ):
        message = bad.pop("message")
        with pytest.raises(ValueError):
            AdmissionDenied(message, **bad)  # type: ignore[arg-type]
    denied = AdmissionDenied("no", code=422, reason="Invalid")
    assert (denied.message, denied.code, denied.reason) == ("no", 422, "Invalid")


# ------------------------------------------------------------------ registration
def test_register_finds_marked_classmethods_and_staticmethods() -> None:
    from cloudcoil_cache.admission import mutating, validating

    class Marked(ConfigMap):
        @mutating(path="/mutate/cm")
        @classmethod
        def default(cls, request: AdmissionRequest[ConfigMap]) -> ConfigMap | None:
            return None

        @validating(operations=("DELETE",))
        @staticmethod
        async def check(request: AdmissionRequest[ConfigMap]) -> None:
            return None

    hook = AdmissionWebhook().register(Marked)
    by_path = {r.path: r for r in hook.routes}
    assert set(by_path) == {"/mutate/cm", "/validate/core/v1/configmaps/check"}
    assert by_path["/validate/core/v1/configmaps/check"].operations == ("DELETE",)
    assert by_path["/validate/core/v1/configmaps/check"].is_async


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"path": "/healthz"}, ValueError),
        ({"path": "no-slash"}, ValueError),
        ({"path": "/Upper/Case"}, ValueError),
        ({"timeout_seconds": 0}, ValueError),
        ({"timeout_seconds": 31}, ValueError),
        ({"timeout_seconds": 2.5}, ValueError),
        ({"failure_policy": "Maybe"}, ValueError),
        ({"side_effects": "Some"}, ValueError),
        ({"match_policy": "Fuzzy"}, ValueError),
        ({"operations": ("CONNECT",)}, ValueError),
        ({"operations": ()}, ValueError),
        ({"scope": "Galaxy"}, ValueError),
        ({"target": Pod}, ValueError),  # target= needs subresource=
        ({"namespace_selector": {"labels": {}}}, ValueError),
        ({"colour": "blue"}, TypeError),
    ],
)
def test_bad_options_are_refused_naming_the_option(options: dict[str, object], error: type[Exception]) -> None:
    with pytest.raises(error) as info:
        AdmissionWebhook().validating(ConfigMap, **options)  # type: ignore[arg-type]
    assert next(iter(options)) in str(info.value)


def test_a_path_is_registered_once() -> None:
    hook = AdmissionWebhook()
    hook.validating(ConfigMap, path="/v")(lambda request: None)
    with pytest.raises(ValueError, match="already registered"):
        hook.validating(Namespace, path="/v")(lambda request: None)
    with pytest.raises(TypeError, match="mutating webhooks only"):
        hook.validating(ConfigMap, reinvocation_policy="IfNeeded")


def test_configurations_service_and_url_forms() -> None:
    hook = AdmissionWebhook()
    hook.mutating(ConfigMap, reinvocation_policy="IfNeeded", namespace_selector={"matchLabels": {"a": "b"}})(
        lambda request: None
    )
    pem = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    (mutating,) = hook.configurations(
        name="hooks.example.com", service_name="svc", service_namespace="ops", ca_bundle=pem
    )
    (hook_doc,) = mutating["webhooks"]
    assert mutating["kind"] == "MutatingWebhookConfiguration"
    assert hook_doc["name"] == "mutate-0.hooks.example.com"
    assert hook_doc["clientConfig"]["service"] == {
        "namespace": "ops",
        "name": "svc",
        "port": 443,
        "path": "/mutate/core/v1/configmaps/lambda",
    }
    assert hook_doc["reinvocationPolicy"] == "IfNeeded" and hook_doc["namespaceSelector"] == {"matchLabels": {"a": "b"}}
    assert hook_doc["rules"] == [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "resources": ["configmaps"],
            "operations": ["CREATE", "UPDATE"],
            "scope": "Namespaced",
        }
    ]
    (by_url,) = hook.configurations(name="hooks.example.com", url="https://127.0.0.1:9443", ca_bundle=pem)
    assert by_url["webhooks"][0]["clientConfig"]["url"].startswith("https://127.0.0.1:9443/mutate/")
    with pytest.raises(ValueError, match="https"):
        hook.configurations(name="h.example.com", url="http://127.0.0.1", ca_bundle=pem)
    with pytest.raises(ValueError, match="PEM"):
        hook.configurations(name="h.example.com", url="https://127.0.0.1", ca_bundle=b"junk")


def test_undecodable_object_is_denied_also_under_failure_policy_ignore() -> None:
    hook = AdmissionWebhook()
    hook.validating(ConfigMap, path="/v", failure_policy="Ignore")(lambda request: None)
    with hook:
        resp = response(call(hook, exchange("/v", review(configmap(data=["not", "a", "map"])))))
    assert resp["allowed"] is False and resp["status"]["code"] == 422
    assert hook.metrics.value("cloudcoil_cache_admission_decisions_total", "/v", "invalid") == 1


def test_every_answer_on_a_route_is_counted_by_code(webhook: AdmissionWebhook) -> None:
    call(webhook, exchange(VALIDATE, review(configmap()), method="PUT"))
    call(webhook, exchange(VALIDATE, b"junk"))
    call(webhook, exchange(VALIDATE, review(configmap())))
    counted = {
        code: webhook.metrics.value("controller_runtime_webhook_requests_total", VALIDATE, code)
        for code in ("405", "400", "200")
    }
    assert counted == {"405": 1, "400": 1, "200": 1}
    assert webhook.metrics.value("controller_runtime_webhook_requests_in_flight", VALIDATE) == 0


def test_the_package_exports_its_public_names() -> None:
    import cloudcoil_cache.admission as admission

    assert all(hasattr(admission, name) and not name.startswith("_") for name in admission.__all__)
    assert {"AdmissionDenied", "AdmissionRequest", "AdmissionWebhook", "Operation", "UserInfo"} <= set(
        admission.__all__
    )
    assert {"mutating", "validating"} <= set(admission.__all__)


def test_a_request_repr_shows_no_object_data() -> None:
    hook = AdmissionWebhook()
    seen: list[str] = []

    @hook.validating(ConfigMap, path="/v")
    def record(request: AdmissionRequest[ConfigMap]) -> None:
        seen.append(repr(request))

    with hook:
        call(hook, exchange("/v", review(configmap(data={"password": "hunter2"}))))
    assert "hunter2" not in seen[0] and "req-1" in seen[0] and "CREATE" in seen[0]


def test_a_scale_subresource_route_decodes_the_target_kind() -> None:
    from cloudcoil_cache.models.kubernetes.apps.v1 import Deployment
    from cloudcoil_cache.models.kubernetes.autoscaling.v1 import Scale

    hook = AdmissionWebhook()
    seen: list[object] = []

    @hook.validating(Deployment, target=Scale, subresource="scale", operations=("UPDATE",))
    def check_scale(request: AdmissionRequest[Scale]) -> None:
        seen.append(request.resource)
        if request.resource is not None and request.resource.spec.replicas > 10:
            raise AdmissionDenied("at most 10 replicas")

    (route,) = hook.routes
    assert route.path == "/validate/apps/v1/deployments/scale/check-scale"
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web", "namespace": "default"}}
    body = review(
        {**scale, "spec": {"replicas": 11}},
        old={**scale, "spec": {"replicas": 1}},
        operation="UPDATE",
        kind={"group": "autoscaling", "version": "v1", "kind": "Scale"},
        resource={"group": "apps", "version": "v1", "resource": "deployments"},
        subResource="scale",
    )
    with hook:
        resp = response(call(hook, exchange(route.path, body)))
    assert resp["allowed"] is False and resp["status"]["message"] == "at most 10 replicas"
    assert isinstance(seen[0], Scale)
    (config,) = hook.configurations(name="h.example.com", url="https://127.0.0.1", ca_bundle=None)
    assert config["webhooks"][0]["rules"][0]["resources"] == ["deployments/scale"]


def test_a_generate_name_create_has_an_empty_name() -> None:
    hook = AdmissionWebhook()
    names: list[str] = []
    hook.validating(ConfigMap, path="/v")(lambda request: names.append(request.name))
    obj = configmap()
    del obj["metadata"]["name"]
    obj["metadata"]["generateName"] = "web-"
    with hook:
        assert response(call(hook, exchange("/v", review(obj))))["allowed"] is True
    assert names == [""]
