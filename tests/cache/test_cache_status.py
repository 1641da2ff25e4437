"""config.cache.status(): the cache as a whole, one entry per informer, the errors of failing informers."""

from __future__ import annotations

import time

from cluster_support import Recorder, fail_relists_with_403, requests_to, seed

from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod
from cloudcoil_cache.testing import make_configmap


def test_status_before_during_and_after_a_scope(server, make_config):
    seed(server, 3)
    server.create("configmaps", make_configmap("a"))
    server.create("configmaps", make_configmap("b"))
    config = make_config(resources=[Pod, ConfigMap])
    before = config.cache.status()  # type: ignore[union-attr]
    with config:
        during = config.cache.status()  # type: ignore[union-attr]
    after = config.cache.status()  # type: ignore[union-attr]
    assert (before.enabled, before.started, before.ready) == (True, False, False)
    assert before.informer_count == 2 and before.resource_count == 0 and before.errors == {}
    assert (during.enabled, during.started, during.ready) == (True, True, True)
    assert during.mode == "fallback"
    assert during.resource_count == 5 and during.informer_count == 2 and during.errors == {}
    assert sorted((s.kind, s.object_count) for s in during.informers) == [("ConfigMap", 2), ("Pod", 3)]
    assert (after.started, after.ready) == (False, False)


def test_each_informer_entry_reports_its_scope_selectors_sync_and_counters(server, make_config):
    seed(server, 3, app="web")
    config = make_config(
        resources=[Pod], namespaces=["default"], label_selector="app=web", field_selector="status.phase=Running"
    )
    informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
    rec = Recorder()
    informer.on_add(lambda pod: rec.add("add", pod))
    started = time.time()
    with config:
        rec.wait(lambda ev: len(ev) >= 3)  # the handler's queue is drained
        status = config.cache.status().informers[0]  # type: ignore[union-attr]
        listed = requests_to(server, "list", "/api/v1/namespaces/default/pods")
    assert (status.kind, status.api_version, status.namespace) == ("Pod", "v1", "default")
    assert (status.label_selector, status.field_selector) == ("app=web", "status.phase=Running")
    assert status.started and status.synced and status.complete
    assert status.object_count == 3
    assert status.resource_version and int(status.resource_version) >= 3
    assert listed and status.relist_count == 1
    assert status.last_sync_time is not None and started - 1 <= status.last_sync_time <= time.time()
    assert status.evictions == 0 and status.last_error is None
    assert list(status.handler_backlogs.values()) == [0]


def test_a_failing_informer_fills_errors_and_its_entry_never_silently_empty(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod, ConfigMap])
    with config:
        informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
        server.wait_for_watches(2)
        fail_relists_with_403(server, config)
        status = config.cache.status()  # type: ignore[union-attr]
        assert informer.status().last_error
    entries = {s.kind: s for s in status.informers}
    assert list(status.errors) == ["Pod@*"]
    assert "Forbidden" in status.errors["Pod@*"]
    assert entries["Pod"].last_error == status.errors["Pod@*"]
    assert entries["ConfigMap"].last_error is None


def test_an_informer_that_never_synced_is_reported_not_ready_with_its_error(server, make_config):
    server.fail_next(10_000, 403, verb="list", path="re:^/api/v1/pods$")
    config = make_config(resources=[Pod], mode="fallback")
    with config:
        status = config.cache.status()  # type: ignore[union-attr]
    assert status.started and not status.ready
    assert not status.informers[0].synced
    assert "Forbidden" in status.errors["Pod@*"]


def test_the_token_of_a_rejected_config_appears_in_no_status_error_or_log(server, tmp_path, caplog):
    from cluster_support import FAST

    from cloudcoil_cache.caching import Cache
    from cloudcoil_cache.client import Config
    from cloudcoil_cache.errors import CacheUnavailableError, Unauthorized

    server.expected_token = "the-right-token"
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", token="leaked-if-you-see-me")
    config = Config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod], mode="fallback", tuning=FAST))
    try:
        with caplog.at_level("DEBUG", logger="cloudcoil_cache"):
            with config:
                status = config.cache.status()  # type: ignore[union-attr]
                with config.cache.strict_mode():  # type: ignore[union-attr]
                    try:
                        Pod.list()
                    except CacheUnavailableError as exc:
                        unavailable = exc
                try:
                    Pod.list()  # fallback: the API server rejects it too
                except Unauthorized as exc:
                    rejected = exc
    finally:
        config.close()
    texts = [str(status), repr(config), str(unavailable), repr(unavailable), str(rejected)]
    texts += [r.getMessage() for r in caplog.records]
    assert "Unauthorized" in status.errors["Pod@*"]
    assert [t for t in texts if "leaked-if-you-see-me" in t] == []
