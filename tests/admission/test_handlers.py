"""Sync and async handlers: where they run, deadlines (504), disconnects, a full pool (503), warnings and audit."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Iterator

import pytest
from _admission_support import call, configmap, exchange, response, review

from cloudcoil_cache.admission import AdmissionDenied, AdmissionRequest, AdmissionWebhook
from cloudcoil_cache.admission._answer import deadline_of
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap

WAIT = 10.0  # an upper bound for waits that end as soon as their condition holds
FAST = {"timeout": "500ms"}  # kube-apiserver's ?timeout=: the handler gets 0.25 s


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """Released at teardown, so that no blocked handler thread outlives the test."""
    event = threading.Event()
    yield event
    event.set()


def test_sync_handlers_run_on_named_pool_threads_async_on_the_loop_thread() -> None:
    hook = AdmissionWebhook()
    threads: dict[str, str] = {}

    @hook.validating(ConfigMap, path="/sync")
    def sync_check(request: AdmissionRequest[ConfigMap]) -> None:
        threads["sync"] = threading.current_thread().name

    @hook.mutating(ConfigMap, path="/async")
    async def async_mutate(request: AdmissionRequest[ConfigMap]) -> ConfigMap:
        await asyncio.sleep(0)
        threads["async"] = threading.current_thread().name
        obj = request.resource
        assert obj is not None
        obj.metadata.labels = {"a": "b"}
        return obj

    with hook:
        assert response(call(hook, exchange("/sync", review(configmap()))))["allowed"] is True
        resp = response(call(hook, exchange("/async", review(configmap()))))
        assert resp["allowed"] is True and "patch" in resp
    assert threads["sync"].startswith("cloudcoil-admission-handler")
    assert threads["async"] == "cloudcoil-admission-loop"


def test_deadline_is_the_smaller_timeout_less_a_margin() -> None:
    hook = AdmissionWebhook()
    hook.validating(ConfigMap, path="/v", timeout_seconds=3)(lambda request: None)
    (route,) = hook.routes
    assert deadline_of(route, {}) == pytest.approx(2.75)
    assert deadline_of(route, {"timeout": "2s"}) == pytest.approx(1.75)
    assert deadline_of(route, {"timeout": "1m0s"}) == pytest.approx(2.75)
    assert deadline_of(route, {"timeout": "bogus"}) == pytest.approx(2.75)


def test_async_handler_past_its_deadline_is_cancelled_and_answered_504() -> None:
    hook = AdmissionWebhook()
    cancelled = threading.Event()

    @hook.validating(ConfigMap, path="/slow")
    async def slow(request: AdmissionRequest[ConfigMap]) -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with hook:
        answer = call(hook, exchange("/slow", review(configmap()), query=FAST))
    assert answer.status == 504
    assert cancelled.is_set()
    assert hook.metrics.value("cloudcoil_cache_admission_decisions_total", "/slow", "timeout") == 1
    assert hook.metrics.value("cloudcoil_cache_admission_handlers_abandoned_total") == 0


def test_sync_handler_past_its_deadline_is_abandoned_and_counted(gate: threading.Event) -> None:
    hook = AdmissionWebhook()
    finished = threading.Event()

    @hook.validating(ConfigMap, path="/slow")
    def slow(request: AdmissionRequest[ConfigMap]) -> None:
        gate.wait(WAIT)
        finished.set()

    with hook:
        answer = call(hook, exchange("/slow", review(configmap()), query=FAST))
        assert answer.status == 504
        assert hook.metrics.value("cloudcoil_cache_admission_handlers_abandoned_total") == 1
        assert not finished.is_set()
        gate.set()  # it finishes in the background; stop() joins its thread
        assert finished.wait(WAIT)


def test_disconnect_cancels_an_async_handler() -> None:
    hook = AdmissionWebhook()
    cancelled = threading.Event()
    disconnected = threading.Event()

    @hook.validating(ConfigMap, path="/v")
    async def wait_forever(request: AdmissionRequest[ConfigMap]) -> None:
        disconnected.set()  # as the server does when the client goes away
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with hook:
        answer = call(hook, exchange("/v", review(configmap())), disconnected)
    assert answer.status != 200 and cancelled.is_set()


def test_disconnect_abandons_a_sync_handler(gate: threading.Event) -> None:
    hook = AdmissionWebhook()
    disconnected = threading.Event()

    @hook.validating(ConfigMap, path="/v")
    def blocked(request: AdmissionRequest[ConfigMap]) -> None:
        disconnected.set()
        gate.wait(WAIT)

    with hook:
        answer = call(hook, exchange("/v", review(configmap())), disconnected)
        assert answer.status != 200
        assert hook.metrics.value("cloudcoil_cache_admission_handlers_abandoned_total") == 1
        gate.set()


def test_a_full_pool_waits_then_answers_503(gate: threading.Event) -> None:
    hook = AdmissionWebhook(max_concurrency=1)
    started = threading.Event()

    @hook.validating(ConfigMap, path="/v")
    def blocked(request: AdmissionRequest[ConfigMap]) -> None:
        started.set()
        gate.wait(WAIT)

    answers: list[Any] = []
    with hook:
        first = threading.Thread(target=lambda: answers.append(call(hook, exchange("/v", review(configmap())))))
        first.start()
        try:
            assert started.wait(WAIT)
            busy = call(hook, exchange("/v", review(configmap())))
            assert busy.status == 503
        finally:
            gate.set()
            first.join(WAIT)
    assert answers[0].status == 200


def test_warnings_on_allowed_answers_at_most_32() -> None:
    hook = AdmissionWebhook()

    @hook.validating(ConfigMap, path="/v")
    def chatty(request: AdmissionRequest[ConfigMap]) -> None:
        for i in range(40):
            request.warn(f"warning {i}")
        request.audit("checked-by", "chatty")

    with hook:
        resp = response(call(hook, exchange("/v", review(configmap()))))
    assert resp["allowed"] is True
    assert resp["warnings"] == [f"warning {i}" for i in range(32)]
    assert resp["auditAnnotations"] == {"checked-by": "chatty"}


@pytest.mark.parametrize(
    "bad",
    [lambda r: r.warn("x" * 257), lambda r: r.warn(""), lambda r: r.audit("a/b", "v"), lambda r: r.audit("k", 1)],
)
def test_bad_warnings_and_audit_keys_are_errors(bad: Any) -> None:
    hook = AdmissionWebhook()
    hook.validating(ConfigMap, path="/v")(bad)
    with hook:
        answer = call(hook, exchange("/v", review(configmap())))
    assert answer.status == 500 and json.loads(answer.body)["message"].endswith("ValueError")


def test_a_256_character_warning_goes_with_a_denial() -> None:
    hook = AdmissionWebhook()

    @hook.validating(ConfigMap, path="/v")
    async def deny(request: AdmissionRequest[ConfigMap]) -> None:
        request.warn("w" * 256)
        raise AdmissionDenied("no")

    with hook:
        resp = response(call(hook, exchange("/v", review(configmap()))))
    assert resp["allowed"] is False and resp["warnings"] == ["w" * 256]


def test_metrics_count_requests_latency_and_in_flight() -> None:
    pytest.importorskip("prometheus_client")
    from prometheus_client.parser import text_string_to_metric_families

    hook = AdmissionWebhook()
    hook.validating(ConfigMap, path="/v")(lambda request: None)
    with hook:
        for _ in range(3):
            call(hook, exchange("/v", review(configmap())))
    hook.metrics.certificate_read(False)
    hook.metrics.certificate_expiry(1.7e9)
    text, content_type = hook.metrics.render()
    assert content_type.startswith("text/plain")
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text.decode())
        for s in family.samples
    }
    assert samples[("controller_runtime_webhook_requests_total", (("code", "200"), ("webhook", "/v")))] == 3
    assert samples[("controller_runtime_webhook_requests_in_flight", (("webhook", "/v"),))] == 0
    assert samples[("controller_runtime_webhook_latency_seconds_count", (("webhook", "/v"),))] == 3
    assert samples[("cloudcoil_cache_admission_decisions_total", (("decision", "allowed"), ("webhook", "/v")))] == 3
    assert samples[("certwatcher_read_certificate_errors_total", ())] == 1
    assert samples[("cloudcoil_cache_webhook_certificate_expiry_timestamp_seconds", ())] == 1.7e9


def test_sequential_sync_requests_reuse_one_handler_thread() -> None:
    hook = AdmissionWebhook()
    names: set[str] = set()

    @hook.validating(ConfigMap, path="/v")
    def record(request: AdmissionRequest[ConfigMap]) -> None:
        names.add(threading.current_thread().name)

    with hook:
        for _ in range(20):
            assert call(hook, exchange("/v", review(configmap()))).status == 200
    assert len(names) == 1


def test_a_sync_handler_returning_a_coroutine_is_an_error_not_an_allowed_answer() -> None:
    hook = AdmissionWebhook()

    async def deny(request: AdmissionRequest[ConfigMap]) -> None:
        raise AdmissionDenied("no")

    hook.validating(ConfigMap, path="/v")(lambda request: deny(request))
    with hook:
        answer = call(hook, exchange("/v", review(configmap())))
    assert answer.status == 500 and json.loads(answer.body)["message"].endswith("TypeError")
