"""Bad read arguments and selector informers: the same answer whether the cache or the API serves."""

from __future__ import annotations

import pytest
from cluster_support import FAST, reads, seed

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import BadRequest, CacheUnavailableError, Forbidden, ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod


@pytest.mark.parametrize("mode", ["strict", "fallback"])
@pytest.mark.parametrize("limit", [-1, "5", True, 2.5], ids=repr)
def test_a_bad_limit_is_a_value_error_from_the_cache_and_the_api(server, make_config, mode, limit):
    seed(server, 3)
    config = make_config(resources=[Pod], mode=mode)
    with config:
        with pytest.raises(ValueError, match="limit must be an integer"):
            Pod.list(limit=limit)
        with config.cache.pause(), pytest.raises(ValueError, match="limit must be an integer"):
            Pod.list(limit=limit)


@pytest.mark.parametrize("mode", ["strict", "fallback"])
def test_an_empty_name_is_a_value_error_from_the_cache_and_the_api(server, make_config, mode):
    config = make_config(resources=[Pod], mode=mode)
    with config:
        with pytest.raises(ValueError, match="a name is required"):
            Pod.get("")
        with config.cache.pause(), pytest.raises(ValueError, match="a name is required"):
            Pod.get("")


@pytest.mark.parametrize("mode", ["strict", "fallback"])
def test_an_unknown_field_selector_gets_the_api_servers_400_never_an_empty_list(server, make_config, mode):
    seed(server, 2)
    config = make_config(resources=[Pod, ConfigMap], mode=mode)
    with config:
        server.clear_requests()
        with pytest.raises(BadRequest, match="field label not supported: foo.bar") as cached:
            Pod.list(field_selector="foo.bar=1")
        with pytest.raises(
            BadRequest,
            match=r'"data.x" is not a known field selector: only '
            r'"metadata.name", "metadata.namespace"',
        ):
            ConfigMap.list(field_selector="data.x=1")
        assert reads(server) == []  # refused by the cache itself
        with config.cache.pause(), pytest.raises(BadRequest) as live:
            Pod.list(field_selector="foo.bar=1")
        assert live.value.message == cached.value.message  # the same words as the real server
        assert len(Pod.list(field_selector="status.phase=Running,spec.hostNetwork=false").items) == 2


def test_a_selector_informer_serves_gets_of_what_it_holds_and_cannot_vouch_for_the_rest(server, make_config):
    seed(server, 2, app="web")
    seed(server, 1, prefix="db", app="db")
    config = make_config(resources=[Pod], label_selector="app=web", mode="strict")
    with config:
        server.clear_requests()
        assert Pod.get("pod-0").metadata.labels["app"] == "web"
        assert reads(server) == []
        with pytest.raises(CacheUnavailableError, match="selector not servable"):
            Pod.get("db-0")  # exists, but outside the informer's selection
        with config.cache.fallback_mode():
            assert Pod.get("db-0").metadata.labels["app"] == "db"  # read from the API
            with pytest.raises(ResourceNotFound):
                Pod.get("nowhere")


def test_get_informer_of_something_that_is_not_a_resource_class_is_a_value_error(make_config):
    config = make_config(resources=[Pod])
    with pytest.raises(ValueError, match="'Pod' is not a resource class"):
        config.cache.get_informer("Pod")


def test_a_list_result_has_list_metadata_like_cloudcoil(server, make_config):
    seed(server, 3)
    config = make_config(resources=[Pod])
    with config:
        page = Pod.list(limit=2)
        assert page.metadata.resource_version == page.resource_version
        assert page.metadata.continue_ == page.continue_ and page.continue_
        assert page.metadata.remaining_item_count == 1
        with config.cache.pause():
            live = Pod.list(limit=2)
        assert live.metadata.resource_version and live.metadata.continue_


def test_a_hard_sync_failure_names_the_informer_that_failed(server, kubeconfig):
    server.fail_next(100, 403, verb="list")
    config = Config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod], mode="strict", tuning=FAST))
    try:
        with pytest.raises(Forbidden, match=r"^403 Forbidden: Pod in all namespaces: pods is forbidden"):
            with config:
                pass
    finally:
        config.close()


def test_an_informers_local_list_refuses_a_field_the_kind_cannot_be_selected_on_as_pod_list_does(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod])
    informer = config.cache.get_informer(Pod, sync=True)
    with config:
        with pytest.raises(BadRequest, match="spec.bogus"):
            Pod.list(namespace="default", field_selector="spec.bogus=1")
        assert len(informer.list(namespace="default")) == 2
        with pytest.raises(BadRequest, match="spec.bogus"):  # it answered []
            informer.list(namespace="default", field_selector="spec.bogus=1")
        assert len(informer.list(namespace="default", field_selector="status.phase=Running")) == 2


def test_an_informers_local_read_outside_its_namespace_names_the_scope_instead_of_missing(server, make_config):
    seed(server, 2)
    seed(server, 2, namespace="other")
    config = make_config(resources=[Pod], namespaces=["default"])
    informer = config.cache.get_informer(Pod, sync=True)
    with config:
        assert len(informer.list()) == 2
        with pytest.raises(ValueError, match="outside this informer's scope.*'default'"):
            informer.list(namespace="other")  # answered [] with two pods there
        with pytest.raises(ValueError, match="outside this informer's scope"):
            informer.get("pod-0", namespace="other")  # answered None
        assert informer.get("pod-0").name == "pod-0"
        assert informer.get_store().get_by_key("other/pod-0") is None  # a key, as client-go's GetByKey


GROUP = "select.example.com"


@pytest.mark.parametrize("mode", ["strict", "fallback"])
def test_a_custom_resources_own_field_is_left_to_the_api_server_never_a_400_from_the_cache(server, make_config, mode):
    from cloudcoil_cache.resources import GenericResource

    gadget = GenericResource.define(api_version=f"{GROUP}/v1", kind="SelGadget", plural="selgadgets", namespaced=True)
    server.register_resource(GROUP, "v1", "SelGadget", "selgadgets")
    for name, color in (("g1", "red"), ("g2", "blue")):
        server.create(
            "selgadgets",
            {
                "apiVersion": f"{GROUP}/v1",
                "kind": "SelGadget",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"color": color},
            },
            "default",
        )
    config = make_config(resources=[gadget], mode=mode)
    informer = config.cache.get_informer(gadget, sync=True)
    with config:
        server.clear_requests()
        assert [g.name for g in gadget.list(namespace="default", field_selector="metadata.name=g1")] == ["g1"]
        assert reads(server) == []  # metadata fields: served from memory
        # spec.color is selectable only if the CRD declares it (selectableFields, 1.30+): only the
        # server knows. The cache used to answer the built-in kinds' 400 itself.
        if mode == "strict":
            with pytest.raises(CacheUnavailableError, match="selectableFields"):
                gadget.list(namespace="default", field_selector="spec.color=red")
        else:
            with pytest.raises(BadRequest, match="spec.color"):  # the fake server, as 1.30 without the CRD field
                gadget.list(namespace="default", field_selector="spec.color=red")
            assert reads(server) != []
        assert [g.name for g in informer.list(field_selector="spec.color=red")] == ["g1"]  # a local read
