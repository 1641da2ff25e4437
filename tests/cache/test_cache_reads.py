"""Cached Pod.list/Pod.get: default namespace, in-memory selectors, pagination, lazily created informers."""

from __future__ import annotations

import pytest
from cluster_support import fail_relists_with_403, names, reads, requests_to, seed

from cloudcoil_cache.errors import CacheUnavailableError
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Namespace, Pod
from cloudcoil_cache.testing import FakeAPIServer, make_configmap, make_pod

# name -> (labels, nodeName, phase)
LABELLED: dict[str, tuple[dict[str, str], str, str]] = {
    "web-a": ({"app": "web", "tier": "frontend", "gen": "1"}, "node-1", "Running"),
    "web-b": ({"app": "web", "tier": "backend", "gen": "3"}, "node-2", "Pending"),
    "db-a": ({"app": "db", "role": "primary", "gen": "5"}, "node-1", "Running"),
    "cache-a": ({"app": "cache", "gen": "10"}, "node-3", "Succeeded"),
    "bare": ({}, "", "Pending"),
}


def _seed_labelled(server: FakeAPIServer) -> None:
    for name, (labels, node, phase) in LABELLED.items():
        pod = make_pod(name, phase=phase, node_name=node)
        pod["metadata"]["labels"] = dict(labels)
        if not node:
            del pod["spec"]["nodeName"]
        server.create("pods", pod)


@pytest.mark.parametrize("source", ["config-argument", "kubeconfig-context"])
def test_a_cached_list_and_get_default_to_the_configs_namespace(server, make_config, tmp_path, source):
    from cluster_support import FAST

    from cloudcoil_cache.caching import Cache
    from cloudcoil_cache.client import Config

    seed(server, 2, namespace="team-a", prefix="mine")
    seed(server, 3, namespace="default", prefix="theirs")
    if source == "config-argument":
        config = make_config(namespace="team-a", resources=[Pod])
    else:
        kubeconfig = server.write_kubeconfig(tmp_path / "team-a.kubeconfig", namespace="team-a")
        config = Config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod], tuning=FAST))
    try:
        with config:
            server.clear_requests()
            assert names(Pod.list()) == {"mine-0", "mine-1"}
            assert Pod.get("mine-1").metadata.namespace == "team-a"
            assert reads(server) == []
    finally:
        config.close()


LABEL_SELECTORS = [
    pytest.param("app=web", {"web-a", "web-b"}, id="equals"),
    pytest.param("app==web", {"web-a", "web-b"}, id="double-equals"),
    pytest.param("app!=web", {"db-a", "cache-a", "bare"}, id="not-equals-includes-unlabelled"),
    pytest.param("app in (web,db)", {"web-a", "web-b", "db-a"}, id="set-in"),
    pytest.param("app notin (web, db)", {"cache-a", "bare"}, id="set-notin-with-spaces"),
    pytest.param("role", {"db-a"}, id="exists"),
    pytest.param("!role", {"web-a", "web-b", "cache-a", "bare"}, id="does-not-exist"),
    pytest.param("app=web,tier=backend", {"web-b"}, id="and-of-two"),
    pytest.param("app in (web,cache),gen>2", {"web-b", "cache-a"}, id="set-and-greater-than"),
    pytest.param("gen<5", {"web-a", "web-b"}, id="less-than"),
    pytest.param("app=nothing", set(), id="matches-nothing"),
]


@pytest.mark.parametrize(("selector", "expected"), LABEL_SELECTORS)
def test_label_selectors_are_evaluated_in_memory_with_the_full_syntax(server, make_config, selector, expected):
    _seed_labelled(server)
    config = make_config(resources=[Pod], mode="strict")
    with config:
        server.clear_requests()
        cached = names(Pod.list(label_selector=selector))
        assert reads(server) == []
        live = names(Pod.client(config).list(label_selector=selector))
    assert cached == expected
    assert cached == live


FIELD_SELECTORS = [
    pytest.param("metadata.name=db-a", {"db-a"}, id="name"),
    pytest.param("metadata.name!=db-a", set(LABELLED) - {"db-a"}, id="name-not-equal"),
    pytest.param("metadata.namespace=default", set(LABELLED), id="namespace"),
    pytest.param("spec.nodeName=node-1", {"web-a", "db-a"}, id="node-name"),
    pytest.param("spec.nodeName=", {"bare"}, id="empty-value-matches-unset"),
    pytest.param("status.phase==Pending", {"web-b", "bare"}, id="double-equals"),
    pytest.param("status.phase!=Running,spec.nodeName!=", {"web-b", "cache-a"}, id="and-of-two"),
]


@pytest.mark.parametrize(("selector", "expected"), FIELD_SELECTORS)
def test_field_selectors_are_evaluated_in_memory(server, make_config, selector, expected):
    _seed_labelled(server)
    config = make_config(resources=[Pod], mode="strict")
    with config:
        server.clear_requests()
        cached = names(Pod.list(field_selector=selector))
        assert reads(server) == []
        live = names(Pod.client(config).list(field_selector=selector))
    assert cached == expected
    assert cached == live


def test_a_field_selector_on_an_unset_boolean_matches_false_like_the_api_server(server, make_config):
    # kube-apiserver's pod fields set spec.hostNetwork to "false" when the pod does not set it
    # (pkg/registry/core/pod ToSelectableFields). The fake server shares the deviation, so the
    # expectation is written out rather than read from a live list.
    _seed_labelled(server)
    config = make_config(resources=[Pod], mode="strict")
    with config:
        assert names(Pod.list(field_selector="spec.hostNetwork=false")) == set(LABELLED)


def test_limit_and_continue_are_served_from_memory_and_iterating_walks_every_page(server, make_config):
    seed(server, 7)
    config = make_config(resources=[Pod], mode="strict")
    with config:
        server.clear_requests()
        first = Pod.list(limit=3)
        assert len(first.items) == 3 and len(first) == 7  # len(): the page plus remainingItemCount
        assert first.continue_ and first.remaining_item_count == 4
        second = Pod.list(limit=3, continue_=first.continue_)
        assert names(first.items).isdisjoint(names(second.items))
        walked = [p.metadata.name for p in Pod.list(limit=3)]
        assert reads(server) == []
    assert len(second.items) == 3 and len(second) == 4
    assert sorted(walked) == sorted(f"pod-{i}" for i in range(7))
    assert len(walked) == 7


def test_pages_are_served_with_the_selector_applied_before_paging(server, make_config):
    _seed_labelled(server)
    config = make_config(resources=[Pod], mode="strict")
    with config:
        pages = Pod.list(label_selector="app", limit=2)
        assert len(pages.items) == 2 and pages.remaining_item_count == 2 and len(pages) == 4
        assert names(pages) == {"web-a", "web-b", "db-a", "cache-a"}


@pytest.mark.parametrize(
    ("mode", "goes_live"), [("fallback", True), ("strict", False)], ids=["fallback-asks-the-server", "strict-raises"]
)
def test_a_continue_token_from_the_api_server_cannot_be_served_from_memory(server, make_config, mode, goes_live):
    seed(server, 4)
    config = make_config(resources=[Pod], mode=mode)
    with config:
        token = Pod.client(config).list(limit=2).continue_
        assert token
        server.clear_requests()
        if goes_live:
            page = Pod.list(limit=2, continue_=token)
            sent = requests_to(server, "list", "/api/v1/namespaces/default/pods")
            assert sent[0].query["continue"] == token
            assert len(page) == 2
        else:
            with pytest.raises(CacheUnavailableError, match="continue token"):
                Pod.list(limit=2, continue_=token)
            assert reads(server) == []


def test_with_resources_none_the_first_read_of_a_kind_starts_an_informer_and_waits_for_its_sync(server, make_config):
    seed(server, 3)
    server.create("configmaps", make_configmap("settings"))
    config = make_config(resources=None, mode="strict")
    with config:
        assert config.cache.status().informer_count == 0  # type: ignore[union-attr]
        server.clear_requests()
        assert names(Pod.list()) == {"pod-0", "pod-1", "pod-2"}
        first_list = requests_to(server, "list", "/api/v1/pods")
        assert len(first_list) == 1  # the informer's LIST, not a live read of the namespace
        server.wait_for_watches(1)
        server.clear_requests()
        assert names(Pod.list()) == {"pod-0", "pod-1", "pod-2"}
        assert Pod.get("pod-2").metadata.name == "pod-2"
        assert ConfigMap.get("settings").metadata.name == "settings"
        assert requests_to(server, "list", "/api/v1/configmaps")
        assert [r for r in reads(server) if "pods" in r.path] == []
        status = config.cache.status()  # type: ignore[union-attr]
    assert status.informer_count == 2
    assert {i.kind for i in status.informers} == {"Pod", "ConfigMap"}


def test_a_read_with_the_informers_own_selector_is_served_from_memory(server, make_config):
    _seed_labelled(server)
    config = make_config(resources=[Pod], label_selector="app=web", mode="strict")
    with config:
        server.clear_requests()
        assert names(Pod.list(label_selector="app=web")) == {"web-a", "web-b"}
        assert names(Pod.list(label_selector="app=web", field_selector="spec.nodeName=node-2")) == {"web-b"}
        assert reads(server) == []


def test_cluster_scoped_kinds_are_cached_whole_even_in_a_one_namespace_cache(server, make_config):
    for name in ("default", "team-a", "team-b"):
        server.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    config = make_config(resources=[Namespace], namespaces=["default"], mode="strict")
    with config:
        assert requests_to(server, "list", "/api/v1/namespaces")  # the informer's list: all of them
        server.clear_requests()
        assert names(Namespace.list()) == {"default", "team-a", "team-b"}
        assert names(Namespace.list(all_namespaces=True)) == {"default", "team-a", "team-b"}
        assert Namespace.get("team-b").metadata.name == "team-b"
        assert reads(server) == []


def test_a_cache_continue_token_is_never_sent_to_the_api_server(server, make_config):
    seed(server, 6)
    config = make_config(resources=[Pod], mode="fallback")
    with config:
        token = Pod.list(limit=2).continue_
        assert token
        fail_relists_with_403(server, config)  # the next page can no longer come from memory
        server.clear_requests()
        try:
            rest = names(Pod.list(limit=2, continue_=token))
        except CacheUnavailableError:  # a clear, typed refusal is acceptable
            rest = None
        sent = [r.query.get("continue", "") for r in server.requests if r.verb == "list"]
    assert rest is None or rest <= {f"pod-{i}" for i in range(2, 6)}
    assert [c for c in sent if c == token] == []


@pytest.mark.parametrize("mode", ["strict", "fallback"])
@pytest.mark.parametrize("token", ["cc-cache:!!!", "cc-cache:@@@@", "cc-cache:", "cc-cache:bm8tc2xhc2g="])
def test_a_malformed_cache_continue_token_is_refused_never_read_as_the_first_page(server, make_config, mode, token):
    seed(server, 3)
    config = make_config(resources=[Pod], mode=mode)
    with config:
        assert Pod.list(namespace="default", limit=1).continue_.startswith("cc-cache:")
        # a paging loop fed the first page again would never end
        with pytest.raises(CacheUnavailableError, match="malformed cache continue token"):
            Pod.list(namespace="default", limit=1, continue_=token)


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        # apimachinery's parser reads "()" as the set {""} (kube-apiserver 1.30 answers the same: tests/real)
        pytest.param("env in ()", {"empty"}, id="in-empty-set"),
        pytest.param("env notin ()", {"none", "prod"}, id="notin-empty-set"),
        pytest.param("env in (prod,)", {"empty", "prod"}, id="trailing-comma"),
    ],
)
def test_an_empty_value_in_a_set_selector_is_the_empty_string_as_on_the_api_server(
    server, make_config, selector, expected
):
    for name, labels in (("empty", {"env": ""}), ("prod", {"env": "prod"}), ("none", None)):
        server.create("pods", make_pod(name, "default", labels=labels), "default")
    config = make_config(resources=[Pod], mode="strict")
    with config:
        server.clear_requests()
        cached = names(Pod.list(namespace="default", label_selector=selector))
        assert reads(server) == []
        live = names(Pod.client(config).list(namespace="default", label_selector=selector))
    assert live == expected  # the fake server follows kube-apiserver here
    assert cached == expected
