"""``request.cached(Kind)`` and ``request.client(Kind)`` against a real FakeAPIServer, over real sockets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from _admission_support import call, configmap, exchange, response, review
from cluster_support import FAST, fail_relists_with_403

from cloudcoil_cache.admission import AdmissionDenied, AdmissionRequest, AdmissionWebhook
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import CacheSyncTimeout
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod, Secret
from cloudcoil_cache.testing import FakeAPIServer, make_pod


def _secret(name: str, namespace: str = "default", **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels or None}, "data": {"k": "dg=="}}


@pytest.fixture
def config(fake_kubeconfig: Path) -> Iterator[Config]:
    cfg = Config(
        kubeconfig=str(fake_kubeconfig),
        namespace="default",
        cache=Cache(resources=[Secret, Pod], mode="strict", tuning=FAST, max_staleness=0),
    )
    yield cfg
    cfg.close()


def _webhook(config: Config) -> AdmissionWebhook:
    hook = AdmissionWebhook(config=config)

    @hook.validating(ConfigMap, path="/v")
    def needs_secret(request: AdmissionRequest[ConfigMap]) -> None:
        cm = request.resource
        assert cm is not None
        name = (cm.metadata.annotations or {}).get("example.com/secret")
        if name is None:
            return
        secret = request.cached(Secret).get(name)
        if secret is None:
            raise AdmissionDenied(f"secret {name!r} not found")
        secret.metadata.labels = {"edited": "yes"}  # an editable copy: the cache is not touched
        again = request.cached(Secret).get(name)
        assert again is not None and again.metadata.labels != {"edited": "yes"}

    return hook


def _cm_naming(secret: str) -> dict[str, Any]:
    return review(
        configmap(metadata={"name": "c", "namespace": "default", "annotations": {"example.com/secret": secret}})
    )


def test_cached_hit_miss_and_deep_copies(fake_api_server: FakeAPIServer, config: Config) -> None:
    fake_api_server.create("secrets", _secret("present"), "default")
    hook = _webhook(config)
    hook.start(10.0)
    try:
        assert hook.readiness() is None
        assert response(call(hook, exchange("/v", _cm_naming("present"))))["allowed"] is True
        denied = response(call(hook, exchange("/v", _cm_naming("absent"))))
        assert denied["allowed"] is False and "absent" in denied["status"]["message"]
    finally:
        hook.stop(10.0)
    metrics = hook.metrics
    assert metrics.value("cloudcoil_cache_admission_cached_reads_total", "Secret", "hit") == 2
    assert metrics.value("cloudcoil_cache_admission_cached_reads_total", "Secret", "miss") == 1
    assert hook.readiness() == "admission webhook not started"


def test_cached_list_and_namespace_default(fake_api_server: FakeAPIServer, config: Config) -> None:
    fake_api_server.create("secrets", _secret("a", app="x"), "default")
    fake_api_server.create("secrets", _secret("b", app="y"), "default")
    fake_api_server.create("secrets", _secret("c", "other", app="x"), "other")
    hook = AdmissionWebhook(config=config)
    seen: dict[str, Any] = {}

    @hook.validating(ConfigMap, path="/v")
    def lister(request: AdmissionRequest[ConfigMap]) -> None:
        reader = request.cached(Secret)
        seen["default"] = sorted(s.metadata.name for s in reader.list(labels={"app": "x"}))
        seen["all"] = sorted(s.metadata.name for s in reader.list(all_namespaces=True, labels={"app": "x"}))
        seen["other"] = reader.get("c", namespace="other") is not None

    with hook:
        assert response(call(hook, exchange("/v", review(configmap()))))["allowed"] is True
    assert seen == {"default": ["a"], "all": ["a", "c"], "other": True}


def test_a_kind_outside_the_cache_is_a_value_error(config: Config) -> None:
    hook = AdmissionWebhook(config=config)
    errors: list[str] = []

    @hook.validating(ConfigMap, path="/v")
    def reads_configmaps(request: AdmissionRequest[ConfigMap]) -> None:
        try:
            request.cached(ConfigMap)
        except ValueError as exc:
            errors.append(str(exc))

    with hook:
        call(hook, exchange("/v", review(configmap())))
    assert errors and errors[0].startswith("Admission cached reads require a preconfigured Config cache resource")
    assert "Pod, Secret" in errors[0]


def test_without_config_cached_and_client_refuse() -> None:
    hook = AdmissionWebhook()
    errors: list[Exception] = []

    @hook.validating(ConfigMap, path="/v")
    def reads(request: AdmissionRequest[ConfigMap]) -> None:
        for read in (lambda: request.cached(Secret), lambda: request.client(Secret)):
            try:
                read()
            except (ValueError, RuntimeError) as exc:
                errors.append(exc)

    with hook:
        call(hook, exchange("/v", review(configmap())))
    assert [type(e) for e in errors] == [ValueError, RuntimeError]
    assert str(errors[1]) == "Admission clients require AdmissionWebhook(config=...)"


def test_unavailable_informer_answers_500(fake_api_server: FakeAPIServer, config: Config) -> None:
    fake_api_server.create("pods", make_pod("p", "default"), "default")
    hook = AdmissionWebhook(config=config)

    @hook.validating(ConfigMap, path="/v")
    def reads_pods(request: AdmissionRequest[ConfigMap]) -> None:
        request.cached(Pod).get("p")

    with hook:
        assert response(call(hook, exchange("/v", review(configmap()))))["allowed"] is True
        fail_relists_with_403(fake_api_server, config)
        answer = call(hook, exchange("/v", review(configmap())))
        assert hook.readiness() is not None and "Pod" in str(hook.readiness())
    assert answer.status == 500
    assert json.loads(answer.body) == {"message": "Admission webhook failed: CacheUnavailableError"}
    assert hook.metrics.value("cloudcoil_cache_admission_cached_reads_total", "Pod", "unavailable") == 1


def test_start_waits_for_the_sync_and_fails_when_it_cannot(
    fake_api_server: FakeAPIServer, fake_kubeconfig: Path
) -> None:
    fake_api_server.fail_next(10_000, 500, verb="list", path="re:^/api/v1/secrets$")
    cache = Cache(resources=[Secret], mode="strict", tuning=FAST, sync_timeout=0.5)
    config = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=cache)
    try:
        hook = AdmissionWebhook(config=config)
        with pytest.raises(CacheSyncTimeout):
            hook.start(0.5)
        assert hook.readiness() == "admission webhook not started"
        assert not cache.started
    finally:
        config.close()


def test_request_client_is_live_sync_and_awaitable(fake_api_server: FakeAPIServer, config: Config) -> None:
    fake_api_server.create("secrets", _secret("live"), "default")
    hook = AdmissionWebhook(config=config)
    got: dict[str, str] = {}

    @hook.validating(ConfigMap, path="/sync")
    def sync_read(request: AdmissionRequest[ConfigMap]) -> None:
        got["sync"] = request.client(Secret).get("live").metadata.name

    @hook.validating(ConfigMap, path="/async")
    async def async_read(request: AdmissionRequest[ConfigMap]) -> None:
        client = await request.client(Secret)
        got["async"] = (await client.get("live")).metadata.name

    with hook:
        for path in ("/sync", "/async"):
            assert response(call(hook, exchange(path, review(configmap()))))["allowed"] is True
    assert got == {"sync": "live", "async": "live"}
