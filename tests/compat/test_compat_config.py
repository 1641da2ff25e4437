"""cloudcoil's Config names: ``with_cache``, ``clone``, ``client_for`` (issue 9, gap 1), over the fake server."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from cluster_support import FAST, reads, seed

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import AsyncResourceClient, Config, ResourceClient
from cloudcoil_cache.errors import ConfigError
from cloudcoil_cache.models.apimachinery import ObjectMeta
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod, Service
from cloudcoil_cache.testing import FakeAPIServer, make_configmap


@pytest.fixture
def plain(kubeconfig: str):
    config = Config(kubeconfig=kubeconfig)
    yield config
    config.close()


def _close(*configs: Config) -> None:
    for config in configs:
        config.close()


def test_with_cache_true_gives_a_cached_config_on_the_same_connection(
    server: FakeAPIServer, plain: Config, tmp_path: Path
) -> None:
    seed(server, 3)
    plain.initialize()
    # The clone reuses the discovered connection: the kubeconfig file is not read again.
    os.rename(plain._args["kubeconfig"], tmp_path / "moved")
    cached = plain.with_cache(True)
    try:
        assert cached is not plain
        assert isinstance(cached.cache, Cache) and cached.cache.enabled
        assert plain.cache is None
        assert (cached.server, cached.namespace) == (plain.server, plain.namespace)
        with cached:
            assert {p.name for p in Pod.list()} == {"pod-0", "pod-1", "pod-2"}  # starts Pod's informer
            server.clear_requests()
            assert {p.name for p in Pod.list()} == {"pod-0", "pod-1", "pod-2"}
            assert Pod.get("pod-1").name == "pod-1"
            assert reads(server) == []  # served by the cache
        assert cached.transport is not plain.transport  # its own pool, closed by its own close()
    finally:
        cached.close()
    assert plain.transport is not None  # closing the clone left the original usable
    assert Pod.client(plain).get("pod-0").name == "pod-0"


def test_with_cache_takes_what_the_constructor_takes(plain: Config) -> None:
    mine = Cache(resources=[Pod], mode="strict", tuning=FAST)
    given = plain.with_cache(mine)
    off = plain.with_cache(False)
    try:
        assert given.cache is mine
        assert off.cache is None and not off.cached
        with pytest.raises(ConfigError, match="expected True, False or a Cache"):
            plain.with_cache("yes")  # type: ignore[arg-type]
    finally:
        _close(given, off)


def test_with_cache_replaces_the_cache_of_a_cached_config(make_config) -> None:
    config = make_config(resources=[Pod])
    uncached = config.with_cache(False)
    other = config.with_cache(Cache(resources=[ConfigMap], tuning=FAST))
    try:
        assert uncached.cache is None
        assert other.cache is not config.cache and other.cache.resources == [ConfigMap]
    finally:
        _close(uncached, other)


def test_clone_copies_the_arguments_and_the_cache_settings(server: FakeAPIServer, make_config) -> None:
    seed(server, 2, namespace="team-a")
    config = make_config(
        namespace="team-a",
        resources=[Pod],
        namespaces=["team-a"],
        mode="strict",
        label_selector="app",
        sync_timeout=7,
        per_resource={ConfigMap: {"label_selector": "x=y", "max_items": 5}, Service: None},
    )
    copy = config.clone()
    try:
        assert copy.cache is not config.cache and isinstance(copy.cache, Cache)
        assert copy.cache.resources == [Pod]
        assert copy.cache.namespace == "team-a"
        assert copy.cache.mode == "strict"
        assert copy.cache.sync_timeout == 7
        assert copy.cache.settings_for(ConfigMap) == config.cache.settings_for(ConfigMap)
        assert copy.cache.settings_for(ConfigMap).label_selector == "x=y"
        assert copy.cache.settings_for(Service).enabled is False
        assert copy.cache.tuning is config.cache.tuning
        assert repr(copy.cache) == repr(config.cache)
        assert copy.namespace == "team-a"
        # The copy is a working, independent cache: its scope starts its own informers.
        with copy:
            assert config.cache.status().started is False
            assert copy.cache.status().started is True
    finally:
        copy.close()


def test_clone_overrides_any_constructor_argument(server: FakeAPIServer, plain: Config) -> None:
    seed(server, 1, namespace="other", prefix="theirs")
    other_ns = plain.clone(namespace="other")
    cached = plain.clone(cache=True)
    try:
        assert other_ns.namespace == "other" and plain.namespace == "default"
        assert other_ns.cache is None
        assert Pod.client(other_ns).get("theirs-0").namespace == "other"
        assert cached.cached and plain.cache is None
    finally:
        _close(other_ns, cached)


def test_clone_with_a_new_server_discovers_again(server: FakeAPIServer, plain: Config) -> None:
    plain.initialize()
    with FakeAPIServer() as second:
        second.create("configmaps", make_configmap("only-here"), "default")
        moved = plain.clone(server=second.url, skip_verify=True)
        try:
            assert moved.server.rstrip("/") == second.url.rstrip("/")
            assert ConfigMap.client(moved).get("only-here").name == "only-here"
        finally:
            moved.close()


def test_clone_rejects_unknown_arguments(plain: Config) -> None:
    with pytest.raises(TypeError, match=r"unknown argument\(s\) \['bogus'\]"):
        plain.clone(bogus=1)


def test_clone_never_shows_the_token(kubeconfig: str) -> None:
    config = Config(kubeconfig=kubeconfig, token="s3cr3t-token")
    copy = config.clone(namespace="x")
    try:
        assert "s3cr3t" not in repr(copy)
    finally:
        _close(config, copy)


def test_client_for_gives_cached_and_live_clients(server: FakeAPIServer, make_config) -> None:
    seed(server, 2)
    config = make_config(resources=[Pod])
    with config:
        cached = config.client_for(Pod)
        live = config.client_for(Pod, cached=False)
        assert isinstance(cached, ResourceClient) and cached.cached
        assert isinstance(live, ResourceClient) and not live.cached
        server.clear_requests()
        assert cached.get("pod-0").name == "pod-0"
        assert {p.name for p in cached.list()} == {"pod-0", "pod-1"}
        assert reads(server) == []
        assert live.get("pod-0").name == "pod-0"
        assert len(reads(server)) == 1
        # Writes always go to the API server, also through a cached client.
        created = cached.create(
            Pod(metadata=dict(name="new", namespace="default"), spec=dict(containers=[dict(name="c", image="i")]))
        )
        assert created.name == "new"
        assert live.get("new").spec.containers[0].image == "i"


def test_client_for_on_an_uncached_config_is_live(server: FakeAPIServer, plain: Config) -> None:
    seed(server, 1)
    client = plain.client_for(Pod)
    assert isinstance(client, ResourceClient) and not client.cached
    assert client.get("pod-0").name == "pod-0"
    with pytest.raises(ConfigError, match="no enabled cache"):
        plain.client_for(Pod, cached=True)


def test_client_for_rejects_a_class_that_is_not_a_resource(plain: Config) -> None:
    with pytest.raises(ConfigError, match="not a resource class"):
        plain.client_for(ObjectMeta)


def test_client_for_async(server: FakeAPIServer, make_config) -> None:
    seed(server, 2)
    config = make_config(resources=[Pod])

    async def main() -> None:
        async with config:
            client = config.client_for(Pod, sync=False)
            assert isinstance(client, AsyncResourceClient)
            server.clear_requests()
            assert (await client.get("pod-1")).name == "pod-1"
            assert reads(server) == []
            live = await config.async_client_for(Pod, cached=False)
            assert (await live.get("pod-1")).name == "pod-1"
            assert len(reads(server)) == 1

    asyncio.run(main())
