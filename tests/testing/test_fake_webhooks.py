"""FakeAPIServer calls admission webhooks as kube-apiserver does: answers, failures and their wordings."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any, Iterator

import pytest
import trustme
from webhook_helpers import MUTATED_LABEL, AdmissionServer, configuration

from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import Forbidden, ServerError
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.testing import FakeAPIServer

M, V = "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"


@pytest.fixture
def fake() -> Iterator[FakeAPIServer]:
    with FakeAPIServer(namespace_lifecycle=True) as server:
        yield server


@pytest.fixture
def hook(fake: FakeAPIServer) -> Iterator[AdmissionServer]:
    with AdmissionServer(read_url=fake.url) as server:
        yield server


def call(
    fake: FakeAPIServer, method: str, path: str, body: Any = None, content_type: str = "application/json"
) -> tuple[int, Any, list[str]]:
    """One HTTP request; (status, decoded body, Warning header values)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(fake.url + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            status, raw, headers = answer.status, answer.read(), answer.headers
    except urllib.error.HTTPError as exc:
        status, raw, headers = exc.code, exc.read(), exc.headers
    return status, json.loads(raw), headers.get_all("Warning") or []


def register(fake: FakeAPIServer, config: dict[str, Any]) -> None:
    plural = config["kind"].lower() + "s"
    status, body, _ = call(fake, "POST", f"/apis/admissionregistration.k8s.io/v1/{plural}", config)
    assert status == 201, body


def cm(name: str = "c", labels: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, **meta} if name else dict(meta)
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {"k": "v"}}


CMS = "/api/v1/namespaces/default/configmaps"


def webhook(fake: FakeAPIServer, hook: AdmissionServer, kind: str, path: str, **options: Any) -> str:
    name = options.pop("name", f"{path.strip('/').replace('-', '')}.probe.io")
    register(fake, configuration(kind, name, hook.url(path), hook.ca_bundle, **options))
    return str(name)


def test_allowed_create_calls_the_webhook_with_the_review(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    webhook(fake, hook, V, "/allow")
    status, body, _ = call(fake, "POST", CMS + "?fieldManager=me", cm(labels={"a": "b"}))
    assert status == 201, body
    ((path, review),) = hook.reviews
    assert path.startswith("/allow?timeout=10s")
    assert review["apiVersion"] == "admission.k8s.io/v1" and review["kind"] == "AdmissionReview"
    request = review["request"]
    assert request["kind"] == request["requestKind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert request["resource"] == request["requestResource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert (request["name"], request["namespace"], request["operation"]) == ("c", "default", "CREATE")
    assert request["userInfo"]["username"] == "system:admin"
    assert request["object"]["metadata"]["labels"] == {"a": "b"} and request["oldObject"] is None
    assert request["dryRun"] is False
    assert request["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "me"}
    (recorded,) = fake.webhook_calls
    assert recorded.webhook == "allow.probe.io" and recorded.error is None and recorded.response is not None
    assert recorded.response["uid"] == request["uid"]


def test_update_and_delete_send_old_objects_and_their_options(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    webhook(fake, hook, V, "/allow", operations=("UPDATE", "DELETE"))
    assert call(fake, "POST", CMS, cm())[0] == 201
    status, body, _ = call(fake, "PATCH", CMS + "/c", {"data": {"k": "w"}}, "application/merge-patch+json")
    assert status == 200, body
    assert call(fake, "DELETE", CMS + "/c")[0] == 200
    (_, update), (_, delete) = hook.reviews
    assert update["request"]["operation"] == "UPDATE"
    assert update["request"]["object"]["data"] == {"k": "w"} and update["request"]["oldObject"]["data"] == {"k": "v"}
    assert update["request"]["options"]["kind"] == "UpdateOptions"
    assert delete["request"]["operation"] == "DELETE" and delete["request"]["object"] is None
    assert delete["request"]["oldObject"]["data"] == {"k": "w"}
    assert delete["request"]["options"] == {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"}


def test_generate_name_create_has_no_name(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    webhook(fake, hook, M, "/allow")
    status, body, _ = call(fake, "POST", CMS, cm("", generateName="gen-"))
    assert status == 201 and body["metadata"]["name"].startswith("gen-")
    ((_, review),) = hook.reviews
    assert "name" not in review["request"] and "name" not in review["request"]["object"]["metadata"]


def test_denied_without_a_code_is_400_with_the_webhooks_name(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    name = webhook(fake, hook, V, "/deny")
    status, body, _ = call(fake, "POST", CMS, cm())
    assert status == 400, body  # kube-apiserver 1.33: a code under 400 becomes 400, no reason added
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'admission webhook "{name}" denied the request: no thanks',
        "code": 400,
    }
    assert call(fake, "GET", CMS + "/c")[0] == 404


def test_denied_403_forbidden(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    name = webhook(fake, hook, M, "/deny-403")
    status, body, _ = call(fake, "POST", CMS, cm())
    assert (status, body["reason"]) == (403, "Forbidden")
    assert body["message"] == f'admission webhook "{name}" denied the request: no thanks'


def test_denied_with_a_status_code_keeps_code_and_reason(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    name = webhook(fake, hook, V, "/deny-422")
    status, body, _ = call(fake, "POST", CMS, cm())
    assert (status, body["code"], body["reason"]) == (422, 422, "Invalid")
    assert body["message"] == f'admission webhook "{name}" denied the request: bad value'


def test_mutating_patch_is_stored_and_validated_again(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    webhook(fake, hook, M, "/patch")
    webhook(fake, hook, V, "/allow")
    status, body, _ = call(fake, "POST", CMS, cm(labels={"a": "b"}))
    assert status == 201, body
    assert body["metadata"]["labels"] == {"a": "b", MUTATED_LABEL: "true"}
    assert call(fake, "GET", CMS + "/c")[1]["metadata"]["labels"] == {"a": "b", MUTATED_LABEL: "true"}
    assert hook.paths() == ["/patch", "/allow"]  # mutating first
    validating = hook.reviews[1][1]["request"]["object"]
    assert validating["metadata"]["labels"][MUTATED_LABEL] == "true"


def test_warnings_arrive_as_headers(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    webhook(fake, hook, V, "/warn")
    status, _, warnings = call(fake, "POST", CMS, cm())
    assert status == 201
    assert warnings == ['299 - "probe warning one"', '299 - "probe warning two"']


@pytest.mark.parametrize(
    ("path", "ending"),
    [
        ("/500", 'an error on the server ("") has prevented the request from succeeding'),
        (
            "/504",
            "the server was unable to return a response in the time allotted, but may still be processing the request",
        ),
    ],
)
def test_http_errors_fail_closed_with_kube_apiserver_wording(
    fake: FakeAPIServer, hook: AdmissionServer, path: str, ending: str
) -> None:
    name = webhook(fake, hook, V, path)
    status, body, _ = call(fake, "POST", CMS, cm())
    assert (status, body["reason"]) == (500, "InternalError"), body
    message = f'failed calling webhook "{name}": failed to call webhook: {ending}'
    assert body["message"] == f"Internal error occurred: {message}"
    assert body["details"] == {"causes": [{"message": message}]}


def test_connection_refused_and_ignore(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    name = webhook(fake, hook, V, "/allow")
    url = hook.url("/allow")
    hook.stop()
    status, body, _ = call(fake, "POST", CMS, cm())
    port = url.split(":")[2].split("/")[0]
    assert status == 500
    assert body["message"] == (
        f'Internal error occurred: failed calling webhook "{name}": failed to call webhook: '
        f'Post "{url}?timeout=10s": dial tcp 127.0.0.1:{port}: connect: connection refused'
    )
    register(fake, configuration(V, "ignored.probe.io", url, hook.ca_bundle, failure_policy="Ignore"))
    call(fake, "DELETE", f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{name}")
    assert call(fake, "POST", CMS, cm())[0] == 201


def test_timeout_is_enforced(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    name = webhook(fake, hook, V, "/slow", timeout=1)
    status, body, _ = call(fake, "POST", CMS, cm())
    url = hook.url("/slow")
    assert status == 500
    assert body["message"] == (
        f'Internal error occurred: failed calling webhook "{name}": failed to call webhook: '
        f'Post "{url}?timeout=1s": context deadline exceeded'
    )


def test_unknown_authority(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    other = trustme.CA()
    register(fake, configuration(V, "tls.probe.io", hook.url("/allow"), other_bundle(other)))
    status, body, _ = call(fake, "POST", CMS, cm())
    assert status == 500
    assert body["message"] == (
        'Internal error occurred: failed calling webhook "tls.probe.io": failed to call webhook: '
        f'Post "{hook.url("/allow")}?timeout=10s": tls: failed to verify certificate: '
        "x509: certificate signed by unknown authority"
    )


def other_bundle(ca: trustme.CA) -> str:
    import base64

    return base64.b64encode(ca.cert_pem.bytes()).decode()


def test_uid_mismatch_is_a_failed_call(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    name = webhook(fake, hook, V, "/uid")
    status, body, _ = call(fake, "POST", CMS, cm())
    assert status == 500
    uid = hook.reviews[0][1]["request"]["uid"]
    assert body["message"] == (
        f'Internal error occurred: failed calling webhook "{name}": received invalid webhook response: '
        f'expected response.uid="{uid}", got "not-the-uid"'
    )


def test_webhook_reading_the_fake_back_does_not_deadlock(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    webhook(fake, hook, V, "/read", timeout=5)
    assert call(fake, "POST", CMS, cm())[0] == 201
    assert call(fake, "POST", CMS + "?dryRun=All", cm("d"))[0] == 201
    assert hook.read_status == [200, 200]


def test_dry_run(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    webhook(fake, hook, M, "/patch")
    status, body, _ = call(fake, "POST", CMS + "?dryRun=All", cm())
    assert status == 201 and body["metadata"]["labels"] == {MUTATED_LABEL: "true"}
    assert call(fake, "GET", CMS + "/c")[0] == 404
    ((_, review),) = hook.reviews
    assert review["request"]["dryRun"] is True and review["request"]["options"]["dryRun"] == ["All"]


def test_an_update_that_lost_a_race_during_the_webhook_call_is_tried_again(
    fake: FakeAPIServer, hook: AdmissionServer
) -> None:
    assert call(fake, "POST", CMS, cm())[0] == 201
    webhook(fake, hook, V, "/bump", operations=("UPDATE",))
    status, body, _ = call(fake, "PATCH", CMS + "/c", {"data": {"k": "w"}}, "application/merge-patch+json")
    assert status == 200, body
    assert body["data"] == {"k": "w"} and body["metadata"]["annotations"] == {"probe/bumped": "true"}
    assert hook.read_status == [200]
    assert len(hook.reviews) == 3  # the first call, the bump's own, the call after the retry


def test_an_update_with_a_resource_version_that_lost_the_race_conflicts(
    fake: FakeAPIServer, hook: AdmissionServer
) -> None:
    assert call(fake, "POST", CMS, cm())[0] == 201
    webhook(fake, hook, V, "/bump", operations=("UPDATE",))
    current = call(fake, "GET", CMS + "/c")[1]
    current["data"] = {"k": "w"}
    status, body, _ = call(fake, "PUT", CMS + "/c", current)
    assert (status, body["reason"]) == (409, "Conflict")
    assert call(fake, "GET", CMS + "/c")[1]["data"] == {"k": "v"}


def test_the_call_record_repr_leaves_out_the_objects(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    webhook(fake, hook, V, "/allow", resources=("secrets",))
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"password": "hunter2"}}
    assert call(fake, "POST", "/api/v1/namespaces/default/secrets", secret)[0] == 201
    (recorded,) = fake.webhook_calls
    assert recorded.request["object"]["data"] == {"password": "aHVudGVyMg=="}
    assert "aHVudGVyMg" not in repr(recorded) and "hunter2" not in repr(recorded)


def test_stopping_the_fake_cuts_a_webhook_call_in_flight(hook: AdmissionServer) -> None:
    fake = FakeAPIServer().start()
    try:
        webhook(fake, hook, V, "/slow", timeout=30)
        answers: list[Any] = []

        def create() -> None:
            try:
                answers.append(call(fake, "POST", CMS, cm()))
            except OSError as exc:  # the stopping server may cut the client's connection first
                answers.append(exc)

        client = threading.Thread(target=create, name="test-slow-create")
        client.start()
        assert hook.wait_for(lambda path, request: path == "/slow", 10)
    finally:
        fake.stop()
    client.join(10)
    assert not client.is_alive() and not hook.release.is_set()  # the webhook is still busy: the fake did not wait
    assert len(answers) == 1
    if isinstance(answers[0], tuple):
        assert answers[0][0] == 500 and "failed to call webhook" in answers[0][1]["message"]


def test_a_cloudcoil_cache_client_sees_mutation_denial_and_failure(fake: FakeAPIServer, hook: AdmissionServer) -> None:
    """The client gets the patched object and typed errors; it does not surface ``Warning`` headers today
    (no client code reads them), so the warning webhook only has to let the write through."""
    webhook(fake, hook, M, "/patch")
    webhook(fake, hook, V, "/warn")
    config = Config(server=fake.url, namespace="default")
    try:
        client = ConfigMap.client(config)
        created = client.create(ConfigMap(metadata=ObjectMeta(name="c")))
        assert created.metadata.labels == {MUTATED_LABEL: "true"}
        webhook(fake, hook, V, "/deny-403", name="deny.probe.io")
        with pytest.raises(Forbidden) as denied:
            client.create(ConfigMap(metadata=ObjectMeta(name="d")))
        assert denied.value.message == 'admission webhook "deny.probe.io" denied the request: no thanks'
        call(fake, "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/deny.probe.io")
        webhook(fake, hook, V, "/500", name="broken.probe.io")
        with pytest.raises(ServerError) as failed:
            client.create(ConfigMap(metadata=ObjectMeta(name="e")))
        assert (
            failed.value.reason == "InternalError"
            and 'failed calling webhook "broken.probe.io"' in failed.value.message
        )
    finally:
        config.close()
