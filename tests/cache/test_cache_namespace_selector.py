"""A set of namespaces that follows Namespaces by label or name (``Cache(namespaces=NamespaceSelector(...))``),
``on_namespaces_changed`` listeners, and reads over a set served by the kind's ``SetReader`` (the hit
path: counted hits, no fallback). Over real sockets against the FakeAPIServer."""

from __future__ import annotations

import threading
from typing import Any, Callable

import pytest
from cluster_support import names, reads, seed

from cloudcoil_cache.caching import Cache, NamespaceSelector
from cloudcoil_cache.client import Config, CoveringList
from cloudcoil_cache.errors import CacheUnavailableError
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer


class SetChanges:
    """The (namespace, added) calls of a cache's ``on_namespaces_changed``, waited on with a condition."""

    def __init__(self, cache: Cache) -> None:
        self.cond = threading.Condition()
        self.calls: list[tuple[str, bool]] = []
        self.unsubscribe = cache.on_namespaces_changed(self.add)
        self.cache = cache

    def add(self, namespace: str, added: bool) -> None:
        with self.cond:
            self.calls.append((namespace, added))
            self.cond.notify_all()

    def wait_set(self, expected: tuple[str, ...], timeout: float = 10.0) -> None:
        with self.cond:
            assert self.cond.wait_for(lambda: self.cache.namespaces == expected, timeout), (
                f"the set is {self.cache.namespaces!r}, expected {expected!r} (calls: {self.calls})"
            )


def namespace(server: FakeAPIServer, name: str, **labels: str) -> None:
    server.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})


def relabel(server: FakeAPIServer, name: str, **labels: str | None) -> None:
    server.patch("namespaces", name, {"metadata": {"labels": labels}}, patch_type="merge")


def test_a_selector_follows_namespaces_labelled_relabelled_and_deleted(
    server: FakeAPIServer, make_config: Callable[..., Config]
):
    for ns, team in (("a", "x"), ("b", "x"), ("c", "y")):
        namespace(server, ns, team=team)
        seed(server, 2, namespace=ns, prefix=f"pod-{ns}")
    config = make_config(resources=[Pod], namespaces=NamespaceSelector("team=x"))
    cache = config.cache
    assert cache is not None
    assert cache.namespaces == () and cache.namespace is None  # a set, empty until the Namespaces are listed
    assert cache.namespace_selector == NamespaceSelector("team=x")
    changes = SetChanges(cache)
    with config:  # the scope's wait covers the informers the selector made: synced at once
        assert cache.namespaces == ("a", "b")
        with cache.strict_mode():
            assert names(Pod.list(namespace="b")) == {"pod-b-0", "pod-b-1"}
            with pytest.raises(CacheUnavailableError, match="outside the cache's set"):
                Pod.list(namespace="c")
        watched = {r.path for r in server.requests if r.verb == "watch"}
        assert "/api/v1/namespaces" in watched and "/api/v1/pods" not in watched  # Namespaces, one watch per member
        relabel(server, "c", team="x")  # labelled after the start: joins the set
        changes.wait_set(("a", "b", "c"))
        assert cache.wait(10)
        with cache.strict_mode():
            assert names(Pod.list(namespace="c")) == {"pod-c-0", "pod-c-1"}
        relabel(server, "a", team=None)  # unlabelled: leaves the set
        changes.wait_set(("b", "c"))
        server.delete("namespaces", "b")  # gone: leaves the set
        changes.wait_set(("c",))
        assert ("a", False) in changes.calls and ("c", True) in changes.calls
        with cache.strict_mode(), pytest.raises(CacheUnavailableError, match="outside the cache's set"):
            Pod.get("pod-a-0", "a")
        assert {i.key.namespace for i in cache.informers() if i.key.cls is Pod} == {"c"}
    relabel(server, "a", team="x")  # while the cache is stopped: seen at its next start
    with config:
        assert cache.namespaces == ("c", "a")
        with cache.strict_mode():
            assert names(Pod.list(namespace="a")) == {"pod-a-0", "pod-a-1"}
    changes.unsubscribe()


def test_a_selector_by_name_globs(server: FakeAPIServer, make_config: Callable[..., Config]):
    for ns in ("team-a", "team-b", "kube-team", "other"):
        namespace(server, ns)
    config = make_config(resources=[Pod], namespaces=NamespaceSelector(names=["team-*", "kube-*", "!kube-*"]))
    cache = config.cache
    assert cache is not None
    with config:
        assert cache.namespaces == ("team-a", "team-b")
        changes = SetChanges(cache)
        namespace(server, "team-c")
        changes.wait_set(("team-a", "team-b", "team-c"))


def test_a_namespace_selector_is_checked():
    with pytest.raises(ValueError, match="give a label selector"):
        NamespaceSelector()
    with pytest.raises(ValueError, match="not one string"):
        NamespaceSelector(names="team-*")
    with pytest.raises(ValueError):
        NamespaceSelector("team in (a")
    with pytest.raises(ValueError, match="a NamespaceSelector is the cache's own"):
        Cache(resources=[Pod], per_resource={Pod: {"namespaces": NamespaceSelector("a=b")}})
    assert NamespaceSelector("team=a", names=["t-*", "!t-x"]).matches("t-y", {"team": "a"})
    assert not NamespaceSelector("team=a", names=["t-*", "!t-x"]).matches("t-x", {"team": "a"})


def test_reads_over_a_set_are_hits_of_the_namespaces_readers(server: FakeAPIServer, make_config: Callable[..., Config]):
    for ns in ("a", "b", "c"):
        seed(server, 2, namespace=ns, prefix=f"pod-{ns}")
    config = make_config(
        resources=[Pod],
        namespaces=["a", "b", "c"],
        count_hits=True,
        indexes={Pod: {"last": lambda pod: pod.metadata.name[-1]}},
    )
    cache = config.cache
    assert cache is not None
    reader = cache.reader(Pod)
    assert reader is not None and cache.reader(Pod) is reader  # bound once, for the set
    with config:
        server.clear_requests()
        for _ in range(3):
            assert Pod.get("pod-b-1", "b").metadata.name == "pod-b-1"
        assert names(Pod.list(namespace="c")) == {"pod-c-0", "pod-c-1"}
        covered = Pod.list(all_namespaces=True)
        assert isinstance(covered, CoveringList) and covered.namespaces == ["a", "b", "c"]
        assert covered.resource_version == ""
        assert len(covered.items) == 6
        counts = cache.status().reads["Pod"]
        assert counts.hits == 5 and counts.fallbacks == 0 and counts.misses == 0  # all on the hit path
        assert reader.hits == 5  # the SetReader's own count: the policy never ran
        by_index = Pod.list(all_namespaces=True, index=("last", "1"))  # merged from each namespace's index
        assert isinstance(by_index, CoveringList) and by_index.namespaces == ["a", "b", "c"]
        assert names(by_index) == {"pod-a-1", "pod-b-1", "pod-c-1"}
        assert names(Pod.list(namespace="b", index=("last", "0"))) == {"pod-b-0"}
        assert cache.status().reads["Pod"].fallbacks == 0
        cache.add_namespace("d")
        seed(server, 1, namespace="d", prefix="pod-d")
        assert cache.wait(10)
        server.clear_requests()  # (d's informer listed)
        with cache.strict_mode():
            assert Pod.list(all_namespaces=True).namespaces == ["a", "b", "c", "d"]
        cache.remove_namespace("a")
        covered = Pod.list(all_namespaces=True)
        assert covered.namespaces == ["b", "c", "d"]
        assert Pod.get("pod-c-0", "c").metadata.name == "pod-c-0"
        assert cache.status().reads["Pod"].fallbacks == 0
        assert reads(server) == []


def test_a_listener_sees_each_change_once_and_outside_the_lock(make_config: Callable[..., Config]):
    config = make_config(resources=[Pod], namespaces=["a", "b"])
    cache = config.cache
    assert cache is not None
    seen: list[Any] = []

    def listener(namespace: str, added: bool) -> None:
        seen.append((namespace, added, cache.namespaces))  # reads the cache: no deadlock
        if namespace == "raise":
            raise RuntimeError("a failing listener is logged, never the caller's error")

    unsubscribe = cache.on_namespaces_changed(listener)
    cache.add_namespace("c")
    cache.add_namespace("c")  # no change: no call
    cache.remove_namespace("a")
    cache.add_namespace("raise")
    unsubscribe()
    cache.add_namespace("d")
    assert seen == [
        ("c", True, ("a", "b", "c")),
        ("a", False, ("b", "c")),
        ("raise", True, ("b", "c", "raise")),
    ]


def test_a_selector_that_selects_nothing_yet(server: FakeAPIServer, make_config: Callable[..., Config]):
    namespace(server, "a")
    seed(server, 1, namespace="a", prefix="pod-a")
    config = make_config(resources=[Pod], namespaces=NamespaceSelector("team=x"))
    cache = config.cache
    assert cache is not None
    assert not cache.namespaces_listed()
    with config:
        assert cache.namespaces == () and cache.namespaces_listed() and cache.ready()
        server.clear_requests()
        covered = Pod.list(all_namespaces=True)  # the empty set, said so: never "all namespaces"
        assert isinstance(covered, CoveringList) and covered.namespaces == [] and covered.items == []
        assert reads(server) == []
        with (
            cache.strict_mode(),
            pytest.raises(CacheUnavailableError, match=r"outside the cache's set of namespaces \[\]"),
        ):
            Pod.get("pod-a-0", "a")
    client = config.client_for(Pod, cached=True)
    assert names(client.list(all_namespaces=True)) == {"pod-a-0"}  # stopped: the API server's answer
