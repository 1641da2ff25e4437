"""``request.cached(PartialObjectMetadata.of(Kind))`` for a kind the webhook's cache holds as metadata only
(``Cache(metadata_only=[Secret])``): served by a real WebhookServer over TLS on loopback, reading a
metadata-only informer of the FakeAPIServer; a typed read of that kind never gets a partial object."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from _admission_support import configmap, review
from _server_support import request
from cluster_support import FAST
from metadata_support import LIST_ACCEPT

from cloudcoil_cache.admission import AdmissionDenied, AdmissionRequest, AdmissionWebhook, WebhookServer
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import CacheSyncTimeout
from cloudcoil_cache.models import PartialObjectMetadata
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod, Secret
from cloudcoil_cache.testing import FakeAPIServer

SecretMetadata = PartialObjectMetadata.of(Secret)


@pytest.fixture
def config(fake_kubeconfig: Path) -> Iterator[Config]:
    cfg = Config(
        kubeconfig=str(fake_kubeconfig),
        namespace="default",
        cache=Cache(resources=[Pod], metadata_only=[Secret], mode="strict", tuning=FAST, max_staleness=0),
    )
    yield cfg
    cfg.close()


def _secret(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default", "labels": labels or None}, "data": {"k": "dg=="}}


def _post(server: WebhookServer, secret: str) -> dict[str, Any]:
    cm = configmap(metadata={"name": "c", "namespace": "default", "annotations": {"example.com/secret": secret}})
    status, body = request(
        server,
        "/v",
        method="POST",
        body=json.dumps(review(cm)).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert status == 200, body
    answer: dict[str, Any] = json.loads(body)["response"]
    return answer


def test_a_metadata_only_kind_is_read_as_partial_objects_through_a_webhook_server(
    fake_api_server: FakeAPIServer, config: Config
) -> None:
    fake_api_server.create("secrets", _secret("db", app="x"), "default")
    fake_api_server.create("secrets", _secret("other", app="y"), "default")
    hook = AdmissionWebhook(config=config)
    seen: dict[str, Any] = {}

    @hook.validating(ConfigMap, path="/v")
    def needs_secret(request: AdmissionRequest[ConfigMap]) -> None:
        assert request.resource is not None
        name = (request.resource.metadata.annotations or {}).get("example.com/secret")
        assert name is not None
        reader = request.cached(SecretMetadata)
        found = reader.get(name)
        seen["listed"] = sorted(m.metadata.name for m in reader.list(labels={"app": "x"}))
        try:
            request.cached(Secret)  # the cache holds no whole Secret: never a partial one in its place
        except ValueError as exc:
            seen["typed"] = str(exc)
        if found is None:
            raise AdmissionDenied(f"secret {name!r} not found")
        seen["found"] = found
        found.metadata.labels = {"edited": "yes"}  # an editable copy: the cache is not touched
        seen["again"] = reader.get(name)
        seen["live"] = request.client(Secret).get(name)  # the whole object is one live get away

    gets_before = 0
    with WebhookServer(hook, port=0) as server:
        assert hook.readiness() is None
        lists = [r for r in fake_api_server.requests if r.path.endswith("/secrets") and r.method == "GET"]
        assert lists and all(
            r.headers["Accept"].split(",")[0] == LIST_ACCEPT for r in lists if r.query.get("watch") != "1"
        )
        gets_before = sum(1 for r in fake_api_server.requests if r.path.endswith("/secrets/db"))
        assert _post(server, "db")["allowed"] is True
        denied = _post(server, "absent")
        assert denied["allowed"] is False and "'absent' not found" in denied["status"]["message"]
    found, again, live = seen["found"], seen["again"], seen["live"]
    assert type(found) is SecretMetadata and isinstance(found, PartialObjectMetadata)
    assert found.metadata.name == "db" and not hasattr(found, "data")
    assert again is not None and again.metadata.labels == {"app": "x"}  # the copy's edit stayed in the copy
    assert seen["listed"] == ["db"]
    assert type(live) is Secret and live.data == {"k": "dg=="}
    # the cached reads made no API call (the one live get did)
    assert sum(1 for r in fake_api_server.requests if r.path.endswith("/secrets/db")) == gets_before + 1
    typed = seen["typed"]
    assert typed.startswith("Admission cached reads require a preconfigured Config cache resource")
    assert "'Secret' is cached as metadata only" in typed and "PartialObjectMetadata.of(Secret)" in typed
    assert "readable: PartialObjectMetadata.of(Secret), Pod" in typed
    reads = hook.metrics
    assert reads.value("cloudcoil_cache_admission_cached_reads_total", "Secret", "hit") >= 3
    assert reads.value("cloudcoil_cache_admission_cached_reads_total", "Secret", "miss") >= 1


def test_a_kind_cached_whole_is_not_read_as_metadata(fake_kubeconfig: Path) -> None:
    config = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=Cache(resources=[Secret], tuning=FAST))
    hook = AdmissionWebhook(config=config)
    errors: list[str] = []

    @hook.validating(ConfigMap, path="/v")
    def reads(request: AdmissionRequest[ConfigMap]) -> None:
        try:
            request.cached(SecretMetadata)
        except ValueError as exc:
            errors.append(str(exc))
        assert request.cached(Secret) is not None  # the whole kind reads as before

    try:
        with WebhookServer(hook, port=0) as server:
            status, _ = request(
                server,
                "/v",
                method="POST",
                body=json.dumps(review(configmap())).encode(),
                headers={"Content-Type": "application/json"},
            )
            assert status == 200
    finally:
        config.close()
    assert errors and "'PartialObjectMetadata.of(Secret)' is not one; readable: Secret" in errors[0]


def test_start_waits_for_the_metadata_only_informers_sync(
    fake_api_server: FakeAPIServer, fake_kubeconfig: Path
) -> None:
    fake_api_server.fail_next(10_000, 500, verb="list", path="re:^/api/v1/secrets$")
    # the cache does not wait on its own start: only the webhook's wait for its informers can fail it
    cache = Cache(
        resources=[], metadata_only=[Secret], mode="strict", tuning=FAST, sync_timeout=0.5, wait_for_sync=False
    )
    config = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=cache)
    try:
        hook = AdmissionWebhook(config=config)
        with pytest.raises(CacheSyncTimeout, match="admission"):
            hook.start(0.5)
        assert not cache.started
    finally:
        config.close()
