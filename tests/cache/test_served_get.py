"""A cached get's shortcut (``caching._reads.served_get``) serves exactly what the read path
(``read()``: facts, ``decide``, serving) serves, in each situation of the cache, over real sockets;
and a scope keeps the cached clients ``Pod.get`` reads through."""

from __future__ import annotations

import gc
import weakref
from typing import Any, Callable

from cluster_support import reads, seed

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.caching._policy import get_request
from cloudcoil_cache.caching._reads import LIVE, Wait, read, served_get
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import CloudcoilError
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod
from cloudcoil_cache.testing import FakeAPIServer


def first_answer(cache: Cache, namespace: str, name: str) -> Any:
    """What ``read()`` serves at once: the stored object, else None (a wait, a live read, a refusal, a miss)."""
    flow = read(cache, Pod, get_request("Pod", namespace, name))
    try:
        step = next(flow)
    except CloudcoilError:
        return None
    finally:
        flow.close()
    return None if step is LIVE or isinstance(step, Wait) else step


def agreed(cache: Cache, namespace: str, name: str) -> Any:
    """``served_get``'s answer, checked against ``read()``'s."""
    fast = served_get(cache, Pod, namespace, name)
    assert fast is first_answer(cache, namespace, name), (namespace, name)
    return fast


def test_the_shortcut_serves_what_the_read_path_serves(server: FakeAPIServer, make_config: Callable[..., Config]):
    seed(server, 2)
    config = make_config(resources=[Pod])
    cache = config.cache
    assert cache is not None
    assert agreed(cache, "default", "pod-0") is None  # not started
    with config:
        stored = agreed(cache, "default", "pod-0")
        assert stored is not None and stored.name == "pod-0"
        assert agreed(cache, "default", "missing") is None  # a miss: read() says not found
        assert agreed(cache, "other", "pod-0") is None
        with cache.strict_mode():
            assert agreed(cache, "default", "pod-0") is stored
        with cache.fallback_mode():
            assert agreed(cache, "default", "pod-0") is stored
        with cache.pause():
            assert agreed(cache, "default", "pod-0") is None
        assert served_get(cache, ConfigMap, "default", "pod-0") is None  # a kind not cached
        cache.note_delete(Pod, "default", "pod-0")  # a delete the watch never delivers: reads wait for it
        assert agreed(cache, "default", "pod-0") is None
        assert agreed(cache, "default", "pod-1") is not None  # another object: no write pending
    assert agreed(cache, "default", "pod-1") is None  # stopped


def test_the_shortcut_keeps_to_the_namespace_and_the_kinds_of_the_cache(
    server: FakeAPIServer, make_config: Callable[..., Config]
):
    seed(server, 1)
    seed(server, 1, namespace="other")
    config = make_config(resources=[Pod], namespaces="other")
    cache = config.cache
    assert cache is not None
    with config:
        assert agreed(cache, "other", "pod-0") is not None
        assert agreed(cache, "default", "pod-0") is None  # outside the cache's namespace
    disabled = make_config(resources=[Pod], per_resource={Pod: {"enabled": False}})
    assert disabled.cache is not None
    with disabled:
        assert agreed(disabled.cache, "default", "pod-0") is None  # the kind's caching is off


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
