"""A set of namespaces per kind (issue 35): ``Cache(namespaces=["a", "b"])`` and
``per_resource[Kind]["namespaces"]`` watch one informer per (kind, namespace) behind one read
path; reads in, across and outside the set, strict and fallback; the set changed at run time.
Over real sockets against the FakeAPIServer."""

from __future__ import annotations

from typing import Callable

import pytest
from cluster_support import names, reads, seed

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config, CoveringList
from cloudcoil_cache.errors import CacheUnavailableError, ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Namespace, Pod
from cloudcoil_cache.testing import FakeAPIServer, make_configmap


def seed_namespaces(server: FakeAPIServer, *namespaces: str) -> None:
    for ns in namespaces:
        seed(server, 2, namespace=ns, prefix=f"pod-{ns}")


def informer_namespaces(config: Config, kind: str = "Pod") -> set[str | None]:
    assert config.cache is not None
    return {i.key.namespace for i in config.cache.informers() if i.key.cls.kind == kind}


def test_a_set_watches_one_informer_per_namespace_and_serves_reads_in_it(
    server: FakeAPIServer, make_config: Callable[..., Config]
):
    seed_namespaces(server, "a", "b", "c")
    config = make_config(resources=[Pod], namespaces=["a", "b"])
    assert config.cache is not None
    assert config.cache.namespace is None and config.cache.namespaces == ("a", "b")
    assert config.cache.namespace_set(Pod) == ("a", "b")
    with config:
        assert informer_namespaces(config) == {"a", "b"}  # never an all-namespaces informer
        server.clear_requests()
        assert Pod.get("pod-a-0", "a").metadata.namespace == "a"
        assert names(Pod.list(namespace="b")) == {"pod-b-0", "pod-b-1"}
        with pytest.raises(ResourceNotFound, match="not found in cache"):
            Pod.get("pod-b-0", "a")  # another namespace's object is not in a's informer
        assert reads(server) == []  # all served by the cache
        covered = Pod.list(all_namespaces=True)
        assert isinstance(covered, CoveringList)
        assert covered.namespaces == ["a", "b"]  # says what it covers: never "all namespaces"
        assert covered.resource_version == ""
        assert names(covered) == {"pod-a-0", "pod-a-1", "pod-b-0", "pod-b-1"}
        paged = Pod.list(all_namespaces=True, limit=3)  # pages over the merged set, continued
        assert len(paged.items) == 3 and names(paged) == names(covered)
        assert reads(server) == []


def test_a_read_outside_the_set_reads_live_in_fallback_and_is_refused_in_strict(
    server: FakeAPIServer, make_config: Callable[..., Config]
):
    seed_namespaces(server, "a", "b", "c")
    config = make_config(resources=[Pod], namespaces=["a", "b"])
    assert config.cache is not None
    with config:
        server.clear_requests()
        assert Pod.get("pod-c-0", "c").metadata.name == "pod-c-0"  # fallback: live
        assert names(Pod.list(namespace="c")) == {"pod-c-0", "pod-c-1"}
        assert len(reads(server)) == 2
        assert config.cache.status().reads["Pod"].fallbacks == 2
        with config.cache.strict_mode():
            with pytest.raises(CacheUnavailableError, match=r"outside the cache's set of namespaces \['a', 'b'\]"):
                Pod.get("pod-c-0", "c")
            with pytest.raises(CacheUnavailableError, match=r"outside the cache's set"):
                Pod.list(namespace="c")
            assert Pod.get("pod-a-1", "a").metadata.name == "pod-a-1"  # inside: served
        assert len(reads(server)) == 2  # the refusals read nothing


def test_the_cache_watches_the_set_only(server: FakeAPIServer, make_config: Callable[..., Config]):
    seed_namespaces(server, "a", "b")
    config = make_config(resources=[Pod], namespaces=["a", "b"])
    with config:
        watched = {r.path for r in server.requests if r.verb in ("list", "watch")}
        assert watched == {"/api/v1/namespaces/a/pods", "/api/v1/namespaces/b/pods"}


def test_per_resource_namespaces_and_cluster_scoped_kinds(server: FakeAPIServer, make_config: Callable[..., Config]):
    seed_namespaces(server, "a", "b")
    server.create("configmaps", make_configmap("cm", "b"), "b")
    server.create("configmaps", make_configmap("cm", "a"), "a")
    server.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}})
    config = make_config(
        resources=[Pod, ConfigMap, Namespace], namespaces=["a", "b"], per_resource={ConfigMap: {"namespaces": ["b"]}}
    )
    assert config.cache is not None
    assert config.cache.namespace_set(ConfigMap) == ("b",)
    assert config.cache.namespace_set(Namespace) is None  # cluster-scoped: the set does not apply
    with config:
        assert informer_namespaces(config, "ConfigMap") == {"b"}
        assert informer_namespaces(config, "Namespace") == {None}
        server.clear_requests()
        assert ConfigMap.get("cm", "b").metadata.namespace == "b"
        assert names(Namespace.list()) >= {"a"}
        assert reads(server) == []
        with config.cache.strict_mode(), pytest.raises(CacheUnavailableError, match=r"set of namespaces \['b'\]"):
            ConfigMap.get("cm", "a")


def test_add_and_remove_a_namespace_at_run_time(server: FakeAPIServer, make_config: Callable[..., Config]):
    seed_namespaces(server, "a", "b", "c", "d")
    config = make_config(resources=[Pod], namespaces=["a", "b", "c"])
    cache = config.cache
    assert cache is not None
    with config:
        cache.add_namespace("d")  # a 4th namespace, at run time
        assert cache.namespaces == ("a", "b", "c", "d")
        assert cache.wait(10)  # served within a sync: wait on the informers' sync, no sleep
        server.clear_requests()
        with cache.strict_mode():
            assert names(Pod.list(namespace="d")) == {"pod-d-0", "pod-d-1"}
            assert Pod.list(all_namespaces=True).namespaces == ["a", "b", "c", "d"]
        assert reads(server) == []
        threads_before = len(cache.threads())
        cache.remove_namespace("b")
        assert informer_namespaces(config) == {"a", "c", "d"}
        assert len(cache.threads()) < threads_before  # b's informer is stopped and joined
        with cache.strict_mode():
            with pytest.raises(CacheUnavailableError, match="outside the cache's set"):
                Pod.get("pod-b-0", "b")  # a removed namespace's objects are no longer served
            assert "pod-b-0" not in names(Pod.list(all_namespaces=True))
        assert Pod.get("pod-b-0", "b").metadata.name == "pod-b-0"  # fallback: live


def test_a_namespace_added_before_the_start_is_watched_at_the_start(
    server: FakeAPIServer, make_config: Callable[..., Config]
):
    seed_namespaces(server, "a", "b", "c")
    config = make_config(resources=[Pod], namespaces=["a", "b"])
    assert config.cache is not None
    config.cache.add_namespace("c")
    with config:
        assert informer_namespaces(config) == {"a", "b", "c"}
        with config.cache.strict_mode():
            assert Pod.get("pod-c-1", "c").metadata.name == "pod-c-1"


def test_a_lazy_cache_over_a_set(server: FakeAPIServer, make_config: Callable[..., Config]):
    seed_namespaces(server, "a", "b")
    config = make_config(resources=None, namespaces=["a", "b"])
    with config:
        assert names(Pod.list(all_namespaces=True)) == {"pod-a-0", "pod-a-1", "pod-b-0", "pod-b-1"}
        assert informer_namespaces(config) == {"a", "b"}
        server.clear_requests()
        assert Pod.get("pod-b-1", "b").metadata.name == "pod-b-1"
        assert reads(server) == []


def test_changing_the_set_of_a_cache_without_one_is_an_error():
    with pytest.raises(ValueError, match="not a set"):
        Cache(resources=[Pod], namespaces="a").add_namespace("b")
    with pytest.raises(ValueError, match="all namespaces, not a set"):
        Cache(resources=[Pod]).remove_namespace("b")
    with pytest.raises(ValueError, match="not a valid namespace"):
        Cache(resources=[Pod], namespaces=["a", "b"]).add_namespace("Not_Valid")
    with pytest.raises(ValueError, match="not watched over a set"):
        Cache(resources=[Pod], namespaces=["a", "b"]).add_namespace("c", Namespace)


def test_a_single_namespace_keeps_its_meaning():
    for given in ("a", ["a"]):
        cache = Cache(resources=[Pod], namespaces=given)
        assert cache.namespace == "a" and cache.namespaces is None and cache.namespace_set(Pod) is None
        assert cache.reader(Pod) is not None  # the one informer's reader: the fast hit path


def test_get_informer_over_a_set_names_one_namespace(server: FakeAPIServer, make_config: Callable[..., Config]):
    seed_namespaces(server, "a", "b")
    config = make_config(resources=[Pod], namespaces=["a", "b"])
    cache = config.cache
    assert cache is not None
    with config:
        view = cache.get_informer(Pod, sync=True, namespace="b")
        assert view is not None and {o.metadata.name for o in view.list()} == {"pod-b-0", "pod-b-1"}
        with pytest.raises(ValueError, match="outside the cache's set"):
            cache.get_informer(Pod, sync=True, namespace="c")
        with pytest.raises(ValueError, match="name one"):
            cache.get_informer(Pod, sync=True)
