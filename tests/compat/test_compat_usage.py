"""cloudcoil's caching usage patterns, end to end over the fake server (issue 9, gap 8; reference §1–3).

Each test is written the way cloudcoil's docs use the API, imports renamed, and checks docs/contract.md's
contract (the **(fix)** where it differs from cloudcoil).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from cluster_support import FAST, Recorder, names, reads, seed

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import CacheUnavailableError, ResourceNotFound
from cloudcoil_cache.models import is_sealed
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod
from cloudcoil_cache.testing import FakeAPIServer, make_configmap, make_pod


def _seed_apps(server: FakeAPIServer) -> None:
    for name, app in (("web-0", "web"), ("web-1", "web"), ("db-0", "db")):
        server.create("pods", make_pod(name, labels={"app": app}))


# ------------------------------------------------------------------ informer reads and indexes


def test_informer_get_list_and_a_multi_key_index(server: FakeAPIServer, make_config) -> None:
    _seed_apps(server)
    config = make_config(resources=[Pod], namespaces=["default"])
    informer = config.cache.get_informer(Pod, sync=True)
    informer.add_index("by_app", lambda pod: [pod.metadata.labels["app"]])
    with config:
        assert informer.has_synced()
        assert informer.get("web-0").name == "web-0"  # the informer's namespace by default
        assert informer.get("web-0", "default").name == "web-0"
        assert informer.get("nope") is None
        assert names(informer.list()) == {"web-0", "web-1", "db-0"}
        assert names(informer.list(label_selector="app=web")) == {"web-0", "web-1"}
        assert names(informer.get_by_index("by_app", "web")) == {"web-0", "web-1"}
        assert sorted(informer.list_index_keys("by_app")) == ["db", "web"]
        assert all(is_sealed(p) for p in informer.list())


def test_an_index_function_may_return_one_key_as_a_string(server: FakeAPIServer, make_config) -> None:
    _seed_apps(server)
    config = make_config(resources=[Pod], namespaces=["default"])
    informer = config.cache.get_informer(Pod, sync=True)
    informer.add_index("by_app", lambda pod: pod.metadata.labels.get("app"))  # cloudcoil's style
    informer.add_index("none", lambda pod: None)
    with config:
        assert names(informer.get_by_index("by_app", "web")) == {"web-0", "web-1"}
        assert sorted(informer.list_index_keys("by_app")) == ["db", "web"]  # not "w", "e", "b"
        assert informer.list_index_keys("none") == []


def test_get_store_is_a_read_only_view(server: FakeAPIServer, make_config) -> None:
    _seed_apps(server)
    config = make_config(resources=[Pod], namespaces=["default"])
    informer = config.cache.get_informer(Pod, sync=True)
    with config:
        store = informer.get_store()
        assert names(store.list()) == {"web-0", "web-1", "db-0"}
        assert sorted(store.keys()) == ["default/db-0", "default/web-0", "default/web-1"]
        assert store.get("web-0").name == "web-0"  # get(name, namespace=None), as informer.get
        assert store.get("web-0", "default").name == "web-0"
        assert store.get("nope") is None
        assert [store.get_by_key(k).name for k in sorted(store.keys())] == ["db-0", "web-0", "web-1"]
        assert store.get_by_key("default/nope") is None and store.get_by_key("other/web-0") is None
        assert is_sealed(store.get("web-0"))
        for mutator in ("add", "update", "delete", "replace", "clear"):
            assert not hasattr(store, mutator), mutator


def test_cached_resources_is_exported() -> None:
    from cloudcoil_cache import caching

    assert "CachedResources" in caching.__all__
    assert caching.CachedResources is not None


# ------------------------------------------------------------ cached and live clients, policies


def test_cached_and_live_clients_from_client_for(server: FakeAPIServer, make_config) -> None:
    seed(server, 2)
    config = make_config(resources=[Pod])
    with config:
        cached, live = config.client_for(Pod), config.client_for(Pod, cached=False)
        server.clear_requests()
        assert names(cached.list()) == {"pod-0", "pod-1"}
        assert reads(server) == []
        assert names(live.list()) == {"pod-0", "pod-1"}
        assert len(reads(server)) == 1


def test_fallback_reads_what_the_cache_cannot_serve_from_the_api(server: FakeAPIServer, make_config) -> None:
    seed(server, 1)
    server.create("configmaps", make_configmap("cm"), "default")
    config = make_config(resources=[Pod])  # fallback is the default mode
    with config:
        server.clear_requests()
        assert config.client_for(ConfigMap).get("cm").name == "cm"  # a kind the cache does not hold
        assert [r.verb for r in reads(server)] == ["get"]


def test_strict_miss_says_not_found_in_cache(server: FakeAPIServer, make_config) -> None:
    seed(server, 1)
    config = make_config(resources=[Pod], mode="strict")
    with config:
        server.clear_requests()
        with pytest.raises(ResourceNotFound, match="not found in cache"):
            config.client_for(Pod).get("nope")
        with pytest.raises(CacheUnavailableError):
            config.client_for(ConfigMap).get("cm")  # a kind the strict cache does not hold
        assert reads(server) == []


def test_strict_and_fallback_blocks_change_the_policy_of_reads_inside(server: FakeAPIServer, make_config) -> None:
    server.create("configmaps", make_configmap("cm"), "default")
    config = make_config(resources=[Pod])
    with config:
        with config.cache.strict_mode():
            assert config.cache.mode == "strict"
            with pytest.raises(CacheUnavailableError):
                ConfigMap.get("cm")
        assert config.cache.mode == "fallback"
        assert ConfigMap.get("cm").name == "cm"


def test_mode_is_assignable_and_validated(make_config) -> None:
    config = make_config(resources=[Pod])
    config.cache.mode = "strict"
    assert config.cache.mode == "strict"
    with pytest.raises(ValueError, match="strict"):
        config.cache.mode = "sloppy"
    assert config.cache.mode == "strict"
    config.cache.mode = "fallback"
    assert config.cache.mode == "fallback"


def test_pause_reads_go_to_the_api(server: FakeAPIServer, make_config) -> None:
    seed(server, 1)
    config = make_config(resources=[Pod])
    with config:
        server.clear_requests()
        with config.cache.pause():
            assert Pod.get("pod-0").name == "pod-0"
            assert len(reads(server)) == 1
        server.clear_requests()
        assert Pod.get("pod-0").name == "pod-0"
        assert reads(server) == []


def test_enabled_is_false_inside_pause_for_this_thread_only(make_config) -> None:
    config = make_config(resources=[Pod])
    seen_elsewhere: list[bool] = []
    with config:
        assert config.cache.enabled
        with config.cache.pause():
            assert config.cache.enabled is False
            other = threading.Thread(target=lambda: seen_elsewhere.append(config.cache.enabled))
            other.start()
            other.join()
        assert config.cache.enabled is True
    assert seen_elsewhere == [True]


# ------------------------------------------------------------------------- status and scopes


def test_status_reports_the_scope(server: FakeAPIServer, make_config) -> None:
    seed(server, 3)
    config = make_config(resources=[Pod])
    before = config.cache.status()
    assert before.enabled and not before.started
    with config:
        status = config.cache.status()
        assert (status.enabled, status.started, status.ready) == (True, True, True)
        assert status.informer_count == 1
        assert status.resource_count == 3
        assert not status.errors
    assert config.cache.status().started is False


def test_nested_scopes_share_the_cache_until_the_last_exits(server: FakeAPIServer, make_config) -> None:
    seed(server, 1)
    config = make_config(resources=[Pod])
    with config:
        with config:
            assert config.cache.status().started
        assert config.cache.status().started  # the inner exit keeps it running
        server.create("pods", make_pod("late"))
        recorder = Recorder()
        config.cache.get_informer(Pod, sync=True).on_add(lambda p: recorder.add("add", p))
        recorder.wait(lambda events: "late" in [e[1].name for e in events])
    assert config.cache.status().started is False


# --------------------------------------------------------------- lifecycle methods on Cache


def test_cache_start_wait_ready_stop(server: FakeAPIServer, make_config) -> None:
    seed(server, 2)
    config = make_config(resources=[Pod])
    config.initialize()
    cache = config.cache
    assert cache.ready() is False  # not started
    cache.start()
    try:
        assert cache.wait(5) is True
        assert cache.ready() is True
        assert names(cache.get_informer(Pod, sync=True).list()) == {"pod-0", "pod-1"}
    finally:
        cache.stop()
    assert cache.status().started is False


def test_a_disabled_cache_is_ready_and_waits_at_once(kubeconfig: str) -> None:
    cache = Cache(enabled=False)
    config = Config(kubeconfig=kubeconfig, cache=cache)
    try:
        assert cache.ready() is True
        assert cache.wait(0) is True
    finally:
        config.close()


def test_cache_async_lifecycle(server: FakeAPIServer, make_config) -> None:
    seed(server, 2)
    config = make_config(resources=[Pod])

    async def main() -> None:
        await config.async_initialize()
        cache = config.cache
        await cache.async_start()
        try:
            assert await cache.async_wait(5) is True
            assert cache.ready() is True
            assert names(cache.get_informer(Pod, sync=False).list()) == {"pod-0", "pod-1"}
        finally:
            await cache.async_stop()
        assert cache.status().started is False

    asyncio.run(main())


# ------------------------------------------------------------------------------ get_informer


def test_get_informer_on_a_disabled_cache_is_none(kubeconfig: str) -> None:
    config = Config(kubeconfig=kubeconfig, cache=Cache(enabled=False))
    try:
        assert config.cache.get_informer(Pod) is None
    finally:
        config.close()


def test_get_informer_with_a_namespace_inside_the_scope(server: FakeAPIServer, make_config) -> None:
    seed(server, 2)
    config = make_config(resources=[Pod], namespaces=["default"])
    with config:
        view = config.cache.get_informer(Pod, namespace="default", sync=True)
        plain = config.cache.get_informer(Pod, sync=True)
        assert names(view.list()) == names(plain.list()) == {"pod-0", "pod-1"}
        assert config.cache.status().informer_count == 1  # the same underlying informer
        server.wait_for_watches(1)
        assert len([r for r in server.requests if r.verb == "watch"]) == 1  # no second watch
        with pytest.raises(ValueError, match="outside"):
            config.cache.get_informer(Pod, namespace="elsewhere", sync=True)


def test_get_informer_default_is_sync_without_a_running_loop(make_config) -> None:
    from cloudcoil_cache.caching import SyncInformer

    config = make_config(resources=[Pod])
    assert isinstance(config.cache.get_informer(Pod), SyncInformer)


def test_get_informer_default_is_async_under_a_running_loop(make_config) -> None:
    from cloudcoil_cache.caching import SyncInformer

    config = make_config(resources=[Pod])

    async def main() -> Any:
        return config.cache.get_informer(Pod)

    view = asyncio.run(main())
    assert not isinstance(view, SyncInformer)
    assert type(view).__name__ == "AsyncInformer"


def test_a_coroutine_handler_on_a_sync_view_is_a_type_error(make_config) -> None:
    config = make_config(resources=[Pod])
    informer = config.cache.get_informer(Pod, sync=True)

    async def handler(pod: Any) -> None:  # pragma: no cover - never called
        pass

    with pytest.raises(TypeError, match="sync=False"):
        informer.on_add(handler)
    with pytest.raises(TypeError, match="sync=False"):
        informer.on_update()(handler)


def test_async_initialize_then_an_async_informer(server: FakeAPIServer, make_config) -> None:
    seed(server, 2)
    config = make_config(resources=[Pod])

    async def main() -> set[str]:
        await config.async_initialize()  # discovery off the loop, before get_informer
        informer = config.cache.get_informer(Pod, sync=False)
        seen: set[str] = set()
        all_seen = asyncio.Event()

        @informer.on_add
        async def added(pod: Pod) -> None:
            seen.add(pod.name)
            if {"pod-0", "pod-1", "late"} <= seen:
                all_seen.set()

        async with config:
            assert names(informer.list()) == {"pod-0", "pod-1"}  # local, synchronous read
            server.create("pods", make_pod("late"))
            await asyncio.wait_for(all_seen.wait(), 10)
        return seen

    assert asyncio.run(main()) >= {"pod-0", "pod-1", "late"}


def test_cached_reads_in_an_async_program(server: FakeAPIServer, kubeconfig: str) -> None:
    """docs/contract.md's reference example: ``async with config`` then ``await Pod.async_list()``."""
    seed(server, 2)
    config = Config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod], tuning=FAST))

    async def main() -> set[str]:
        async with config:
            server.clear_requests()
            pods = await Pod.async_list()
            one = await Pod.async_get("pod-1")
            assert reads(server) == []
            return names(pods) | {one.name}

    try:
        assert asyncio.run(main()) == {"pod-0", "pod-1"}
    finally:
        config.close()


def test_models_built_from_dicts_go_through_the_client(server: FakeAPIServer, make_config) -> None:
    """cloudcoil's documented style: nested dicts in keyword construction, then ``.create()``."""
    config = make_config(resources=[ConfigMap])
    with config:
        created = ConfigMap(metadata=dict(name="a", namespace="default"), data={"k": "v"}).create()
        assert created.name == "a" and created.data == {"k": "v"}
        assert server.get("configmaps", "a", "default")["data"] == {"k": "v"}


# ------------------------------------------------------------------ cloudcoil's wait names


def test_wait_for_cache_sync_and_its_async_twin_wait_for_every_informer(server: FakeAPIServer, make_config) -> None:
    _seed_apps(server)
    config = make_config(resources=[Pod], namespaces=["default"], wait_for_sync=False)

    async def scope() -> tuple[bool, bool]:
        async with config:
            synced = await config.cache.async_wait_for_sync(timeout=10)
            return synced, config.cache.get_informer(Pod).has_synced()

    assert asyncio.run(scope()) == (True, True)
    with config:
        assert config.cache.wait_for_cache_sync(timeout=10) is True
        assert names(config.cache.get_informer(Pod, sync=True).list()) == {"web-0", "web-1", "db-0"}
