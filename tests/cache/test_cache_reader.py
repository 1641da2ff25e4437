"""One reader per kind (``caching.CacheReader``): its hits are exactly what the read path (``read()``:
facts, ``decide``, serving) serves at once, in each state of the cache and its informer, over real
sockets; the cache binds one per kind; ``Pod.get``, ``client_for(...).get``, ``ctx.cached``'s
``KindReader`` and ``CachedResources`` read through it; and a scope keeps the cached clients."""

from __future__ import annotations

import gc
import sys
import weakref
from typing import Any, Callable

import attrs
import pytest
from cluster_support import fail_relists_with_403, reads, seed, wait_until

from cloudcoil_cache.apimachinery import ListMeta
from cloudcoil_cache.caching import Cache, CachedResources, CacheReader
from cloudcoil_cache.caching._policy import ReadRequest, get_request
from cloudcoil_cache.caching._reads import LIVE, Page, Wait, read
from cloudcoil_cache.client import Config
from cloudcoil_cache.client._kind_reader import KindReader
from cloudcoil_cache.client._lists import ObjectList, _served_meta, list_meta
from cloudcoil_cache.errors import CloudcoilError
from cloudcoil_cache.models import ResourceList
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod
from cloudcoil_cache.testing import FakeAPIServer


def first_answer(cache: Cache, request: ReadRequest) -> Any:
    """What ``read()`` serves at once: the stored object or the ``Page``, else None (a wait, a
    live read, a refusal, a miss)."""
    flow = read(cache, Pod, request)
    try:
        step = next(flow)
    except CloudcoilError:
        return None
    finally:
        flow.close()
    return None if step is LIVE or isinstance(step, Wait) else step


def agreed(cache: Cache, namespace: str, name: str) -> Any:
    """The reader's hit, checked against ``read()``'s first answer for the same get."""
    reader = cache.reader(Pod)
    fast = None if reader is None else reader.hit(name, namespace)
    assert fast is first_answer(cache, get_request("Pod", namespace, name)), (namespace, name)
    return fast


def agreed_list(cache: Cache, namespace: str | None) -> Any:
    """The reader's list hit, checked against ``read()``'s first answer for the same plain list."""
    reader = cache.reader(Pod)
    fast = None if reader is None else reader.hit_list(namespace)
    served = first_answer(cache, ReadRequest("Pod", namespace, None, namespace is None))
    if fast is None:
        assert not isinstance(served, Page), namespace
        return None
    assert isinstance(served, Page), namespace
    assert fast[0] == served.items and fast[1] == served.metadata["resourceVersion"]  # the same objects
    return fast


def test_the_readers_hits_are_what_the_read_path_serves(server: FakeAPIServer, make_config: Callable[..., Config]):
    seed(server, 2)
    seed(server, 1, namespace="other")
    config = make_config(resources=[Pod])
    cache = config.cache
    assert cache is not None
    reader = cache.reader(Pod)
    assert isinstance(reader, CacheReader) and cache.reader(Pod) is reader  # bound once
    assert cache.reader(ConfigMap) is None  # no informer: no reader
    assert agreed(cache, "default", "pod-0") is None  # not started
    assert agreed_list(cache, "default") is None
    with config:
        stored = agreed(cache, "default", "pod-0")
        assert stored is not None and stored.name == "pod-0"
        assert agreed(cache, "default", "missing") is None  # a miss: read() says not found
        assert agreed(cache, "other", "pod-0") is not None  # another namespace of an all-namespaces cache
        assert agreed(cache, "other", "pod-1") is None
        assert len(agreed_list(cache, "default")[0]) == 2
        assert len(agreed_list(cache, None)[0]) == 3  # every namespace
        with cache.strict_mode():
            assert agreed(cache, "default", "pod-0") is stored
            assert agreed_list(cache, "default") is not None
        with cache.fallback_mode():
            assert agreed(cache, "default", "pod-0") is stored
        with cache.pause():
            assert agreed(cache, "default", "pod-0") is None
            assert agreed_list(cache, "default") is None
        cache.note_delete(Pod, "default", "pod-0")  # a delete the watch never delivers: reads wait for it
        assert agreed(cache, "default", "pod-0") is None
        assert agreed(cache, "default", "pod-1") is not None  # another object: no write pending
        assert agreed_list(cache, "default") is None  # a write pending in the namespace
        assert agreed_list(cache, "other") is not None
    assert cache.reader(Pod) is reader
    assert agreed(cache, "default", "pod-1") is None  # stopped
    assert agreed_list(cache, None) is None


def test_the_readers_hits_keep_to_the_namespace_selectors_and_completeness_of_the_informer(
    server: FakeAPIServer, make_config: Callable[..., Config]
):
    seed(server, 3)
    seed(server, 1, namespace="other", app="web")
    one = make_config(resources=[Pod], namespaces="other")
    with one:
        assert one.cache is not None
        assert agreed(one.cache, "other", "pod-0") is not None
        assert agreed(one.cache, "default", "pod-0") is None  # outside the cache's namespace
        assert agreed_list(one.cache, "other") is not None
        assert agreed_list(one.cache, None) is None  # every namespace, from a cache of one
    selecting = make_config(resources=[Pod], label_selector="app=web")
    with selecting:
        assert selecting.cache is not None
        assert agreed(selecting.cache, "other", "pod-0") is not None  # a get of an object it holds
        assert agreed_list(selecting.cache, "other") is None  # a list without the informer's selector
    small = make_config(resources=[Pod], max_items_per_resource=2)
    with small:
        assert small.cache is not None
        held = [p.name for p in small.cache.get_informer(Pod).list("default")]  # type: ignore[union-attr]
        assert len(held) < 3
        assert agreed(small.cache, "default", held[0]) is not None  # an incomplete informer serves what it holds
        assert agreed_list(small.cache, "default") is None  # but no list
    disabled = make_config(resources=[Pod], per_resource={Pod: {"enabled": False}})
    with disabled:
        assert disabled.cache is not None and disabled.cache.reader(Pod) is None
        assert agreed(disabled.cache, "default", "pod-0") is None  # the kind's caching is off
    off = make_config(resources=[Pod], enabled=False)
    with off:
        assert off.cache is not None
        assert agreed(off.cache, "default", "pod-0") is None  # a disabled cache: read live


def test_the_readers_hits_follow_the_informers_health(server: FakeAPIServer, make_config: Callable[..., Config]):
    """Degraded (a failing watch within max_staleness): served; stale (max_staleness 0): not; failing
    (403): not; current again: served. Each checked against ``read()``."""
    seed(server, 2)
    for staleness, served in ((60, True), (0, False)):
        config = make_config(resources=[Pod], max_staleness=staleness)
        cache = config.cache
        assert cache is not None
        with config:
            informer = cache.informers()[0]
            server.fail_next(10_000, 503, verb="watch")
            server.drop_watches()
            wait_until(cache._sync_cond, lambda: informer.last_error is not None)
            assert informer.state()[0] == ("degraded" if served else "stale")
            assert (agreed(cache, "default", "pod-0") is not None) is served
            assert (agreed_list(cache, "default") is not None) is served
            server.clear_faults()
            server.drop_watches()
            wait_until(cache._sync_cond, lambda: informer.state()[0] == "current")
            assert agreed(cache, "default", "pod-0") is not None
    failing = make_config(resources=[Pod])
    with failing:
        assert failing.cache is not None
        fail_relists_with_403(server, failing)
        assert agreed(failing.cache, "default", "pod-1") is None
        assert agreed_list(failing.cache, "default") is None


def calls_during(read: Callable[[], object]) -> list[str]:
    """The library's Python functions ``read()`` calls, in order (``sys.setprofile``: observed, not mocked)."""
    seen: list[str] = []

    def profile(frame: Any, event: str, arg: object) -> None:
        path = frame.f_code.co_filename
        if event == "call" and "cloudcoil_cache" in path and "/tests/" not in path:
            seen.append(frame.f_code.co_qualname)

    sys.setprofile(profile)
    try:
        read()
    finally:
        sys.setprofile(None)
    return seen


def test_a_cached_hit_is_four_calls_and_a_controllers_read_builds_no_client(
    server: FakeAPIServer, make_config: Callable[..., Config]
):
    seed(server, 1)
    config = make_config(resources=[Pod])
    with config:
        client = config.client_for(Pod, cached=True)
        assert calls_during(lambda: client.get("pod-0", "default")) == [
            "Api.get",
            "CacheReader.hit",
            "WriteTracker.pending",
            "Store.get",
        ]
        kind = KindReader(
            Pod, config, watched=None, selector=None, default_namespace="default", owner="t", no_namespace="-"
        )
        calls = calls_during(lambda: kind.get("pod-0"))
        assert "CacheReader.hit" in calls and "CacheReader.get" in calls
        assert not [c for c in calls if c.startswith("ResourceClient")], calls  # not one client per read
        listed = calls_during(lambda: client.list("default"))
        assert "CacheReader.hit_list" in listed and "ObjectList.served" in listed
        assert "decide" not in listed and "read" not in listed  # a hit: no request, no facts, no policy


def test_every_reader_of_a_kind_reads_through_its_one_reader(server: FakeAPIServer, make_config: Callable[..., Config]):
    """``Pod.get``, a cached client's get and list, a ``KindReader`` (``ctx.cached``'s) and
    ``CachedResources`` answer from the one reader's store: shared objects, or copies of them."""
    seed(server, 2)
    config = make_config(resources=[Pod], mode="strict")
    cache = config.cache
    assert cache is not None
    with config:
        reader = cache.reader(Pod)
        assert reader is not None
        stored = reader.hit("pod-0", "default")
        assert stored is not None
        before = len(reads(server))
        assert Pod.get("pod-0") is stored and config.client_for(Pod, cached=True).get("pod-0") is stored
        assert Pod.list(namespace="default").items == reader.hit_list("default")[0]  # type: ignore[index]
        assert reader.get("pod-0", "default") is stored
        kind = KindReader(
            Pod, config, watched=None, selector=None, default_namespace="default", owner="t", no_namespace="-"
        )
        copied = kind.get("pod-0")
        assert copied is not stored and copied == stored
        assert kind.get("missing") is None
        assert [p.name for p in kind.list()] == ["pod-0", "pod-1"]
        view = cache.get_informer(Pod, sync=True)
        assert view is not None
        cloudcoil = CachedResources(view, "default").get("pod-1")
        assert cloudcoil is not None and cloudcoil == reader.hit("pod-1", "default")
        assert len(reads(server)) == before  # not one read reached the API server


def test_a_scope_keeps_its_cached_clients_and_drops_them_with_it(
    server: FakeAPIServer, make_config: Callable[..., Config]
):
    seed(server, 1)
    config = make_config(resources=[Pod])
    with config:
        client = Pod.client(cached=True)
        assert Pod.client(cached=True) is client and client.config is config
        assert Pod.client() is not Pod.client()  # live clients: made per call, as before
        before = len(reads(server))
        assert Pod.get("pod-0").name == "pod-0"
        assert len(reads(server)) == before  # served from the cache
        with config:
            assert Pod.client(cached=True) is not client  # a scope of its own
        assert Pod.client(cached=True) is client
        kept = weakref.ref(client)
        del client
    gc.disable()  # reference counting alone frees it: the scope held it, nothing holds the scope
    try:
        assert kept() is None
    finally:
        gc.enable()


def _node(pod: Any) -> str | None:
    return None if pod.spec is None else pod.spec.node_name


def test_a_list_the_reader_serves_is_a_few_calls_and_a_whole_new_list(
    server: FakeAPIServer, make_config: Callable[..., Config]
):
    """``Pod.list(index=...)`` and ``Pod.list()`` answered at once: the reader's hit and the list built
    without a ``ListOptions``, the policy or a ``ListMeta`` structured from a dict (its fixed cost), and
    still a whole ``ResourceList`` of its own: metadata (the store's resourceVersion), kind, apiVersion,
    a new items list and a new editable ``ListMeta`` each time; counted as a hit."""
    seed(server, 40)
    config = make_config(resources=[Pod], namespace="default", indexes={Pod: {"node": _node}})
    with config:
        assert config.cache is not None
        Pod.list(index=("node", "node-03"))  # the scope's Api of Pod, made once; the Config's namespace, read once
        server.clear_requests()
        by_index = calls_during(lambda: Pod.list(index=("node", "node-03")))
        assert by_index == [
            "Resource.list",
            "Api.list_hit",
            "CacheReader.hit_index",
            "CacheReader._serves_list",
            "Store.complete",
            "WriteTracker.pending",
            "Store.index_snapshot",
            "Api._served",
            "ObjectList.served",
            "_served_meta",
        ]
        plain = calls_during(lambda: Pod.list())
        assert plain[:3] == ["Resource.list", "Api.list_hit", "CacheReader.hit_list"] and "ListOptions" not in plain
        hits = config.cache.read_counts()["Pod"].hits
        first, second = Pod.list(index=("node", "node-03")), Pod.list(index=("node", "node-03"))
        assert config.cache.read_counts()["Pod"].hits == hits + 2  # a list by an index is a hit too
        whole = Pod.list()
        for found in (first, second):
            assert isinstance(found, ResourceList) and type(found) is ObjectList
            assert sorted(p.name for p in found) == ["pod-19", "pod-3", "pod-35"] and len(found) == 3
            assert (found.kind, found.api_version, found.resource) == ("PodList", "v1", Pod)
            assert found.metadata == ListMeta(resource_version=whole.metadata.resource_version)
            assert found.metadata.resource_version and not found.has_next_page()
            assert found.to_dict()["metadata"] == {"resourceVersion": whole.metadata.resource_version}
        assert first.items is not second.items and first.metadata is not second.metadata
        first.metadata.resource_version = "1"  # an editable ListMeta of its own
        first.items.clear()
        assert second.metadata.resource_version == whole.metadata.resource_version and len(second.items) == 3
        assert reads(server) == []
        # anything unusual is left to the full path, which checks and names it
        with pytest.raises(TypeError, match="namespace must be a string"):
            Pod.list(5, index=("node", "node-03"))  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="namespace"):
            Pod.list("a/b", index=("node", "node-03"))
        with pytest.raises(ValueError, match=r"index= must be a \(name, value\) pair"):
            Pod.list(index=("node", 3))  # type: ignore[arg-type]
        assert sorted(p.name for p in Pod.list("", index=("node", "node-03"))) == ["pod-19", "pod-3", "pod-35"]


def test_a_served_list_meta_sets_every_field_list_meta_has():
    """``_lists.list_meta``: each of ``ListMeta``'s fields set (a field added to ``ListMeta`` makes it
    fall back to the keyword ``__init__``), equal to ``ListMeta(resource_version=...)``."""
    meta = list_meta("42")
    assert list_meta is _served_meta
    assert all(getattr(meta, a.name, "unset") is None for a in attrs.fields(ListMeta) if a.name != "resource_version")
    assert meta == ListMeta(resource_version="42") and type(meta) is ListMeta
    meta.continue_ = "c"  # editable
    assert meta.to_dict() == {"resourceVersion": "42", "continue": "c"}
