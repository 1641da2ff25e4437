"""Informers created on first use (resources=None), and cached reads through the async twins."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from cluster_support import names, reads, requests_to, seed

from cloudcoil_cache.errors import CacheUnavailableError, Forbidden
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod
from cloudcoil_cache.testing import make_configmap


def test_concurrent_first_reads_of_a_kind_share_one_informer_and_one_list(server, make_config):
    seed(server, 3)
    config = make_config(resources=None, mode="strict")
    results: list[Any] = []
    go = threading.Barrier(4, timeout=5)

    def first_read() -> None:
        with config:
            go.wait()
            try:
                results.append(names(Pod.list()))
            except Exception as exc:  # reported below
                results.append(exc)

    with config:
        threads = [threading.Thread(target=first_read, name=f"test-first-read-{i}") for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        server.wait_for_watches(1)
        watches = len([r for r in server.requests if r.verb == "watch"])
        status = config.cache.status()  # type: ignore[union-attr]
    assert results == [{"pod-0", "pod-1", "pod-2"}] * 4
    assert len(requests_to(server, "list", "/api/v1/pods")) == 1
    assert watches == 1 and status.informer_count == 1


def test_a_first_read_of_a_forbidden_kind_fails_fast_naming_the_error_in_strict_mode(server, make_config):
    server.fail_next(10_000, 403, verb="list", path="re:^/api/v1/pods$")
    config = make_config(resources=None, mode="strict", sync_timeout=30)
    with config:
        start = time.monotonic()
        try:
            Pod.list()
        except CacheUnavailableError as exc:
            caught = exc
        elapsed = time.monotonic() - start
    assert elapsed < 2
    assert "informer failing" in str(caught) and "Forbidden" in str(caught)
    assert isinstance(caught.last_error, Forbidden)


def test_a_first_read_of_a_forbidden_kind_goes_to_the_api_server_in_fallback_mode(server, make_config):
    seed(server, 2)
    server.fail_next(10_000, 403, verb="list", path="re:^/api/v1/pods$")
    config = make_config(resources=None, mode="fallback", sync_timeout=30)
    with config:
        start = time.monotonic()
        listed = names(Pod.list())
        elapsed = time.monotonic() - start
    assert listed == {"pod-0", "pod-1"}
    assert elapsed < 2
    assert requests_to(server, "list", "/api/v1/namespaces/default/pods")


def test_the_async_reference_example_reads_from_the_cache(server, kubeconfig):
    from cluster_support import FAST

    from cloudcoil_cache.caching import Cache
    from cloudcoil_cache.client import Config

    seed(server, 3)
    cfg = Config(
        kubeconfig=kubeconfig,
        namespace="default",
        cache=Cache(
            resources=[Pod],
            namespaces=["default"],
            mode="strict",
            wait_for_sync=True,
            max_items_per_resource=0,
            tuning=FAST,
        ),
    )

    async def pods_in_default() -> Any:
        async with cfg:
            server.clear_requests()
            listed = await Pod.async_list(namespace="default")
            got = await Pod.async_get("pod-2")
            return listed, got, reads(server)

    try:
        listed, got, sent = asyncio.run(pods_in_default())
    finally:
        cfg.close()
    assert names(listed) == {"pod-0", "pod-1", "pod-2"}
    assert got.metadata.name == "pod-2"
    assert sent == []


def test_an_async_first_read_with_resources_none_starts_the_informer_off_the_event_loop(server, make_config):
    seed(server, 2)
    server.create("configmaps", make_configmap("settings"))
    config = make_config(resources=None, mode="strict")

    async def main() -> Any:
        async with config:
            ticks = 0
            stop = asyncio.Event()

            async def ticker() -> None:  # keeps running while the informers sync: the loop is free
                nonlocal ticks
                while not stop.is_set():
                    ticks += 1
                    await asyncio.sleep(0)

            task = asyncio.ensure_future(ticker())
            try:
                pods = names(await Pod.async_list())
                settings = await ConfigMap.async_get("settings")
            finally:
                stop.set()
                await task
            server.clear_requests()
            again = names(await Pod.async_list())
            return pods, settings, again, reads(server), ticks

    pods, settings, again, sent, ticks = asyncio.run(main())
    assert pods == again == {"pod-0", "pod-1"}
    assert settings.metadata.name == "settings"
    assert sent == []
    assert ticks > 1
