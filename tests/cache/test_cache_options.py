"""Cache(...) options: validation at construction, and per_resource settings over the global ones."""

from __future__ import annotations

from typing import Any

import pytest
from cluster_support import Recorder, names, requests_to, seed

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.errors import CacheUnavailableError
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod, Service
from cloudcoil_cache.testing import make_configmap

INVALID: list[Any] = [
    pytest.param(dict(namespaces=["a", "B_x"]), r"not a valid namespace", id="bad-name-in-a-set"),
    pytest.param(dict(namespaces=[""]), r"non-empty string", id="empty-namespace"),
    pytest.param(dict(namespaces=[]), r"namespaces=None to watch all", id="empty-list"),
    pytest.param(dict(label_selector="app in (web"), r"label_selector.*app in \(web", id="malformed-label-selector"),
    pytest.param(dict(label_selector="app=web,,tier=x"), r"label_selector", id="empty-label-requirement"),
    pytest.param(dict(label_selector="gen>high"), r"needs a non-negative integer", id="greater-than-a-word"),
    pytest.param(dict(label_selector="bad key!=x"), r"label_selector", id="label-key-with-space"),
    pytest.param(
        dict(field_selector="metadata.name"), r"field_selector.*metadata\.name", id="field-selector-without-operator"
    ),
    pytest.param(dict(label_selector=["app=web"]), r"selector string", id="selector-not-a-string"),
    pytest.param(
        dict(per_resource={Pod: {"labels": "app=web"}}), r"unknown setting.*labels", id="unknown-per-resource-key"
    ),
    pytest.param(
        dict(per_resource={Pod: {"label_selector": "app in ("}}),
        r"Pod.*label_selector",
        id="malformed-per-resource-selector",
    ),
    pytest.param(
        dict(per_resource={"Pod": {"resync_period": 5}}), r"not a resource class", id="per-resource-key-not-a-class"
    ),
    pytest.param(
        dict(per_resource={Pod: ["resync_period"]}), r"expected a dict of settings", id="per-resource-value-not-a-dict"
    ),
    pytest.param(dict(per_resource={Pod: {"max_items": -1}}), r"max_items", id="negative-per-resource-max-items"),
    pytest.param(dict(mode="lenient"), r"mode='lenient'.*'strict' or 'fallback'", id="bad-mode"),
    pytest.param(dict(resources="Pod"), r"resources", id="resources-a-string"),
    pytest.param(dict(resources=[dict]), r"not a resource class", id="resources-not-classes"),
    pytest.param(dict(sync_timeout=0), r"sync_timeout", id="zero-sync-timeout"),
    pytest.param(dict(resync_period=-5), r"resync_period", id="negative-resync-period"),
    pytest.param(dict(max_items_per_resource=-1), r"max_items_per_resource", id="negative-max-items"),
    pytest.param(dict(max_items_per_resource=2.5), r"max_items_per_resource", id="fractional-max-items"),
]


@pytest.mark.parametrize(("options", "message"), INVALID)
def test_invalid_cache_options_raise_value_error_naming_the_problem(options, message):
    with pytest.raises(ValueError, match=message):
        Cache(**options)


@pytest.mark.parametrize(
    "namespaces", [None, ["default"], "default"], ids=["none-is-all", "one-namespace", "a-bare-string"]
)
def test_valid_namespace_forms_are_accepted(namespaces):
    cache = Cache(namespaces=namespaces)
    assert cache.namespace == (None if not namespaces else "default")


def test_per_resource_fields_left_unset_inherit_the_global_values_on_the_wire(server, make_config):
    seed(server, 2, app="web")
    seed(server, 1, prefix="other", app="db")
    server.create("configmaps", make_configmap("web-settings", labels={"app": "web", "tier": "config"}))
    server.create("configmaps", make_configmap("db-settings", labels={"app": "db", "tier": "config"}))
    config = make_config(
        resources=[Pod, ConfigMap, Service],
        label_selector="app=web",
        field_selector="metadata.namespace=default",
        per_resource={
            Pod: {"resync_period": 60},  # selectors inherited
            ConfigMap: {"label_selector": "tier=config"},  # label overridden, field inherited
            Service: {"enabled": False},
        },
    )
    with config:
        pods = requests_to(server, "list", "/api/v1/pods")
        configmaps = requests_to(server, "list", "/api/v1/configmaps")
        services = requests_to(server, "list", "/api/v1/services")
        statuses = {s.kind: s for s in config.cache.status().informers}  # type: ignore[union-attr]
        cached_pods = names(config.cache.get_informer(Pod).list())  # type: ignore[union-attr]
        cached_configmaps = names(config.cache.get_informer(ConfigMap).list())  # type: ignore[union-attr]
    assert pods[0].query["labelSelector"] == "app=web"
    assert pods[0].query["fieldSelector"] == "metadata.namespace=default"
    assert configmaps[0].query["labelSelector"] == "tier=config"
    assert configmaps[0].query["fieldSelector"] == "metadata.namespace=default"
    assert services == []
    assert set(statuses) == {"Pod", "ConfigMap"}
    assert cached_pods == {"pod-0", "pod-1"}
    assert cached_configmaps == {"web-settings", "db-settings"}


def test_per_resource_max_items_overrides_the_global_capacity_and_unset_inherits_it(server, make_config):
    seed(server, 4)
    for i in range(4):
        server.create("configmaps", make_configmap(f"cm-{i}"))
    config = make_config(
        resources=[Pod, ConfigMap],
        max_items_per_resource=2,
        mode="strict",
        per_resource={ConfigMap: {"max_items": 0}, Pod: {"resync_period": 30}},
    )
    with config:
        assert len(ConfigMap.list().items) == 4  # unlimited: complete, servable
        with pytest.raises(CacheUnavailableError, match="informer incomplete"):
            Pod.list()
        statuses = {s.kind: s for s in config.cache.status().informers}  # type: ignore[union-attr]
    assert statuses["Pod"].object_count == 2 and statuses["Pod"].evictions == 2
    assert statuses["ConfigMap"].evictions == 0


@pytest.mark.parametrize("entry", [None, {"enabled": False}], ids=["none", "enabled-false"])
def test_a_kind_disabled_by_per_resource_gets_no_informer_and_get_informer_returns_none(server, make_config, entry):
    config = make_config(resources=[Pod, ConfigMap], per_resource={ConfigMap: entry})
    with config:
        assert [s.kind for s in config.cache.status().informers] == ["Pod"]  # type: ignore[union-attr]
        assert config.cache.get_informer(ConfigMap) is None  # type: ignore[union-attr]  # as cloudcoil
    assert requests_to(server, "list", "/api/v1/configmaps") == []


def test_a_disabled_cache_sends_every_read_to_the_api_server(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod], enabled=False, mode="strict")
    with config:
        assert names(Pod.list()) == {"pod-0", "pod-1"}
        status = config.cache.status()  # type: ignore[union-attr]
    assert requests_to(server, "list", "/api/v1/namespaces/default/pods")
    assert requests_to(server, "list", "/api/v1/pods") == []
    assert not status.enabled and not status.started


def test_an_informer_is_complete_again_after_a_relist_that_fits_in_its_capacity(server, make_config):
    seed(server, 3)
    config = make_config(resources=[Pod], max_items_per_resource=2, resync_period=1, mode="strict")
    informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
    relisted = Recorder()
    informer.on_update(lambda old, new: relisted.add("update", new))
    with config:
        with pytest.raises(CacheUnavailableError, match="informer incomplete"):
            Pod.list()
        server.delete("pods", "pod-0")
        server.clear_requests()
        relisted.wait(lambda ev: len(ev) >= 2, timeout=5)  # a resync relist re-delivered what it holds
        assert informer.status().object_count == 2
        assert names(Pod.list()) == {"pod-1", "pod-2"}
