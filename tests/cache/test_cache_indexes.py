"""Indexes on the read paths (issue 35): declared on the Cache (``indexes=``, ``cache.index()``),
asked from ``Pod.list(index=(name, value))``/``async_list``/``Api.list``, ``KindReader.list`` and
admission's ``request.cached``; a field selector naming an indexed field is served by the index;
an index the cache cannot serve is an ``IndexUnavailableError`` naming it. Over real sockets."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable

import pytest
from cluster_support import FAST, names, reads, seed, wait_until

from cloudcoil_cache.admission._cached import AdmissionCache
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.client._kind_reader import KindReader
from cloudcoil_cache.errors import CacheUnavailableError, IndexUnavailableError
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod
from cloudcoil_cache.testing import FakeAPIServer


def node_of(pod: Any) -> str | None:
    spec = pod.spec
    return None if spec is None else spec.node_name


def on_node(count: int, node: str) -> set[str]:
    """The names ``seed`` gives the pods it puts on ``node`` (``make_pod``: node-{i % 16:02d})."""
    return {f"pod-{i}" for i in range(count) if f"node-{i % 16:02d}" == node}


def test_pod_list_by_index_answers_from_the_index_without_a_request(
    server: FakeAPIServer, make_config: Callable[..., Config]
):
    seed(server, 40)
    seed(server, 5, namespace="other")
    config = make_config(resources=[Pod], indexes={Pod: {"node": node_of}})
    with config:
        server.clear_requests()
        found = Pod.list(index=("node", "node-03"))
        assert names(found) == on_node(40, "node-03") == {"pod-3", "pod-19", "pod-35"}
        assert found.metadata.resource_version  # the store's version, as a cached list has
        assert all(obj is Pod.get(obj.name) for obj in found)  # shared read-only objects, as a cached list
        assert names(Pod.list("other", index=("node", "node-03"))) == {"pod-3"}
        assert names(Pod.list(all_namespaces=True, index=("node", "node-03"))) == {"pod-3", "pod-19", "pod-35"}
        assert list(Pod.list(index=("node", "node-99"))) == []
        assert names(Pod.list(index=("node", "node-03"), label_selector="app=nothing")) == set()  # both apply
        paged = Pod.list(index=("node", "node-03"), limit=2)  # pages of an index list, continued
        assert len(paged.items) == 2 and names(paged) == {"pod-3", "pod-19", "pod-35"}
        assert reads(server) == []  # never the API server


def team_of(pod: Any) -> str | None:
    return (pod.metadata.labels or {}).get("team")


def test_an_index_follows_the_watch(server: FakeAPIServer, kubeconfig: str):
    seed(server, 3)
    cache = Cache(resources=[Pod], tuning=FAST)
    cache.index(Pod, "team", team_of)  # before the start
    cache.index(Pod, "team", team_of)  # the same declaration again: a no-op
    with pytest.raises(ValueError, match="already has an index named 'team'"):
        cache.index(Pod, "team", lambda pod: None)
    config = Config(kubeconfig=kubeconfig, cache=cache)
    changed = threading.Condition()  # notified by the handler lane, after the store applied an event

    def notify(*_: Any) -> None:
        with changed:
            changed.notify_all()

    view = cache.get_informer(Pod, sync=True)
    assert view is not None
    view.on_update(notify)
    view.on_delete(notify)
    try:
        with config:
            assert list(Pod.list(index=("team", "blue"))) == []
            for name in ("pod-1", "pod-2"):
                pod = server.get("pods", name, "default")
                pod["metadata"].setdefault("labels", {})["team"] = "blue"
                server.update("pods", pod, "default")
            wait_until(changed, lambda: names(Pod.list(index=("team", "blue"))) == {"pod-1", "pod-2"})
            server.delete("pods", "pod-1", "default")
            wait_until(changed, lambda: names(Pod.list(index=("team", "blue"))) == {"pod-2"})
            cache.index(Pod, "node", node_of)  # after the start: built from the stored objects at once
            assert names(Pod.list(index=("node", "node-02"))) == {"pod-2"}
    finally:
        config.close()


def test_a_field_selector_on_an_indexed_field_is_served_by_the_index(
    server: FakeAPIServer, make_config: Callable[..., Config]
):
    seed(server, 20)
    # An index named after the field that files only pod-3 under node-03: what a list by the field
    # selector returns tells the index (pod-3) from a scan of the store (pod-3 and pod-19).
    config = make_config(
        resources=[Pod], indexes={Pod: {"spec.nodeName": lambda pod: node_of(pod) if pod.name == "pod-3" else None}}
    )
    with config:
        server.clear_requests()
        assert names(Pod.list(field_selector="spec.nodeName=node-03")) == {"pod-3"}
        assert names(Pod.list(field_selector="spec.nodeName=node-03,metadata.name!=pod-3")) == set()  # all terms
        unequal = {f"pod-{i}" for i in range(20) if i % 16 != 3}
        assert names(Pod.list(field_selector="spec.nodeName!=node-03")) == unequal  # no "=" term: a scan
        assert reads(server) == []
        cache = config.cache
        assert cache is not None
        with cache.pause():  # fallback mode, the cache bypassed: the API server answers a field selector
            assert names(Pod.list(field_selector="spec.nodeName=node-03")) == {"pod-3", "pod-19"}
        assert len(reads(server)) == 1


def test_an_index_the_cache_cannot_serve_is_a_typed_error_naming_it(
    server: FakeAPIServer, make_config: Callable[..., Config], kubeconfig: str
):
    seed(server, 4)
    config = make_config(resources=[Pod, ConfigMap], indexes={Pod: {"node": node_of}})
    cache = config.cache
    assert cache is not None
    with config:
        with pytest.raises(IndexUnavailableError, match="'nodes'.*no index of that name.*its indexes: node") as err:
            Pod.list(index=("nodes", "node-01"))
        assert err.value.index == "nodes"
        with pytest.raises(IndexUnavailableError, match="'node'.*API server has no index") as err:
            with cache.pause():  # fallback mode: a field selector could be read live, an index cannot
                Pod.list(index=("node", "node-01"))
        assert isinstance(err.value, CacheUnavailableError) and err.value.index == "node"
        with pytest.raises(IndexUnavailableError, match="ConfigMap by index 'x'"):
            ConfigMap.list(index=("x", "y"))  # no such index on a cached kind
        for bad in ("node", ("node",), ("node", 3), ["node", "x"], ("", "x")):
            with pytest.raises(ValueError, match=r"index= must be a \(name, value\) pair"):
                Pod.list(index=bad)  # type: ignore[arg-type]
    server.clear_requests()
    uncached = Config(kubeconfig=kubeconfig)
    try:
        with pytest.raises(IndexUnavailableError, match="'node'.*no cache"):
            uncached.client_for(Pod).list(index=("node", "node-01"))
        assert reads(server) == []  # refused before any request
    finally:
        uncached.close()
    strict = make_config(resources=[ConfigMap], mode="strict")
    with strict:
        with pytest.raises(IndexUnavailableError, match="'node'"):
            Pod.list(index=("node", "node-01"))  # a kind the strict cache does not hold


def test_async_list_by_index(server: FakeAPIServer, make_config: Callable[..., Config]):
    seed(server, 20)
    config = make_config(resources=[Pod], indexes={Pod: {"node": node_of}})

    async def main() -> tuple[set[str], set[str]]:
        async with config:
            found = await Pod.async_list(index=("node", "node-04"))
            with pytest.raises(IndexUnavailableError, match="'other'"):
                await Pod.async_list(index=("other", "x"))
            paged = await Pod.async_list(index=("node", "node-04"), limit=1)
            return names(found), names(paged)

    found, paged = asyncio.run(main())
    assert found == paged == {"pod-4"}


def test_kind_reader_and_admission_reads_by_index_are_deep_copies(
    server: FakeAPIServer, make_config: Callable[..., Config]
):
    seed(server, 20)
    config = make_config(resources=[Pod], indexes={Pod: {"node": node_of}})
    reader: KindReader[Pod] = KindReader(
        Pod, config, watched=None, selector=None, default_namespace="default", owner="test", no_namespace="-"
    )
    counted: list[tuple[str, str]] = []
    admission = AdmissionCache(config, lambda kind, result: counted.append((kind, result))).reader(Pod, "default")
    with config:
        for read in (reader, admission):
            copies = read.list(index=("node", "node-05"))
            assert names(copies) == {"pod-5"}
            assert copies[0] is not Pod.get("pod-5") and copies[0] == Pod.get("pod-5")  # an editable copy
            copies[0].metadata.labels = {"edited": "yes"}
            assert read.list(index=("node", "node-05"), labels={"edited": "yes"}) == []
            with pytest.raises(IndexUnavailableError, match="'missing'"):
                read.list(index=("missing", "x"))
    assert ("Pod", "hit") in counted and ("Pod", "unavailable") in counted


def test_index_declarations_are_checked(make_config: Callable[..., Config]):
    with pytest.raises(ValueError, match="index name must be a non-empty string"):
        Cache(indexes={Pod: {"": node_of}})
    with pytest.raises(ValueError, match="needs a callable"):
        Cache(indexes={Pod: {"node": "spec.nodeName"}})
    with pytest.raises(ValueError, match="expected a dict of index name"):
        Cache(indexes={Pod: node_of})
    with pytest.raises(ValueError, match="not a resource class"):
        Cache(indexes={"Pod": {"node": node_of}})
    with pytest.raises(ValueError, match="needs a callable"):
        Cache().index(Pod, "node", None)  # type: ignore[arg-type]


def test_a_lazy_cache_syncs_the_kind_then_answers_by_its_index(
    server: FakeAPIServer, make_config: Callable[..., Config]
):
    seed(server, 20)
    config = make_config(indexes={Pod: {"node": node_of}})  # resources=None: informers on first use
    cache = config.cache
    assert cache is not None
    with config:
        assert cache.reader(Pod) is None  # no informer yet
        assert names(Pod.list(index=("node", "node-06"))) == {"pod-6"}  # waits for the lazy sync
        assert cache.reader(Pod) is not None
        server.clear_requests()
        assert names(Pod.list(index=("node", "node-06"))) == {"pod-6"}
        assert reads(server) == []
