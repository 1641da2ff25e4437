"""Issue 5: `async with config:` scopes — reference counting, sync/async exclusivity, async discovery."""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any, Callable

import pytest
from _aio_support import Lateness, OpenGate, cloudcoil_threads

from cloudcoil_cache.client import Config, current_config
from cloudcoil_cache.errors import CacheUnavailableError
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer

PODS_LIST = "/api/v1/namespaces/default/pods"


def pod_lists(server: FakeAPIServer) -> list[Any]:
    return [r for r in server.requests if r.verb == "list" and r.path == PODS_LIST]


@pytest.mark.asyncio
async def test_nested_async_scopes_share_one_cache_that_stops_when_the_last_scope_exits(server, seeded, make_config):
    cfg = make_config(resources=[Pod], namespaces=["default"], mode="strict")
    async with cfg:
        assert cfg.cache.status().ready
        async with cfg:
            assert sorted(p.name for p in await Pod.async_list()) == seeded
        # the inner exit dropped one reference only: the cache still serves reads from memory
        assert cfg.cache.status().started
        assert len(pod_lists(server)) == 1  # the nested scope did not list a second time
        server.clear_requests()
        assert (await Pod.async_get("web-1")).name == "web-1"
        assert [r for r in server.requests if r.verb in ("get", "list")] == []
        assert cloudcoil_threads()
    assert not cfg.cache.status().started
    assert cloudcoil_threads() == []


@pytest.mark.asyncio
async def test_a_task_entering_a_config_that_is_still_syncing_waits_for_the_sync(server, seeded, make_config):
    cfg = make_config(resources=[Pod], namespaces=["default"], mode="strict")
    server.set_delay(0.5)  # the first scope's LIST takes a while
    first_entered = asyncio.Event()
    release_first = asyncio.Event()

    async def first() -> None:
        async with cfg:
            first_entered.set()
            await release_first.wait()

    first_task = asyncio.ensure_future(first())
    try:
        await asyncio.to_thread(server.wait_for_request, lambda r: r.verb == "list", 5.0)
        assert not first_entered.is_set()
        async with cfg:  # a second scope while the first one is still waiting for the LIST
            names = sorted(p.name for p in await Pod.async_list())
        assert names == seeded
    finally:
        release_first.set()
        await first_task


@pytest.mark.asyncio
async def test_concurrent_tasks_each_read_through_their_own_active_config(server, seeded, make_config):
    default_cfg = make_config(resources=[Pod], namespaces=["default"], mode="strict")
    other_cfg = make_config(resources=[Pod], namespaces=["other"], mode="strict")
    both_inside = asyncio.Barrier(2) if sys.version_info >= (3, 11) else None

    async def names_in(cfg: Config, namespace: str) -> list[str]:
        async with cfg:
            if both_inside is not None:
                await both_inside.wait()  # both scopes are open at the same time
            assert current_config() is cfg
            return sorted(p.name for p in await Pod.async_list(namespace=namespace))

    got = await asyncio.gather(names_in(default_cfg, "default"), names_in(other_cfg, "other"))
    assert got == [seeded, ["db-0"]]
    assert current_config() not in (default_cfg, other_cfg)


def enter_sync_inside_async(cfg: Config) -> None:
    async def inside() -> None:
        async with cfg:
            with pytest.raises(RuntimeError, match="two Configs"):
                with cfg:
                    pass
            assert cfg.cache.status().started  # the failed entry took no reference

    asyncio.run(inside())


def enter_async_inside_sync(cfg: Config) -> None:
    async def enter() -> None:
        async with cfg:
            pass

    with cfg:
        with pytest.raises(RuntimeError, match="two Configs"):
            asyncio.run(enter())
        assert cfg.cache.status().started


def enter_async_inside_activate(cfg: Config) -> None:
    async def enter() -> None:
        async with cfg:
            pass

    cfg.activate()
    try:
        with pytest.raises(RuntimeError, match="two Configs"):
            asyncio.run(enter())
    finally:
        cfg.deactivate()


@pytest.mark.parametrize(
    "mix",
    [enter_sync_inside_async, enter_async_inside_sync, enter_async_inside_activate],
    ids=["with-inside-async-with", "async-with-inside-with", "async-with-inside-activate"],
)
def test_mixing_sync_and_async_scopes_on_one_cached_config_raises_and_leaves_it_usable(
    server, seeded, make_config, mix: Callable[[Config], None]
):
    cfg = make_config(resources=[Pod], namespaces=["default"])
    mix(cfg)
    assert not cfg.cache.status().started
    assert cloudcoil_threads() == []

    async def async_names() -> list[str]:
        async with cfg:
            return sorted(p.name for p in await Pod.async_list())

    # once every scope has exited, either kind of scope may enter again
    assert asyncio.run(async_names()) == seeded
    with cfg:
        assert sorted(p.name for p in Pod.list()) == seeded


def test_an_uncached_config_may_be_entered_by_sync_and_async_scopes_at_once(server, seeded, kubeconfig):
    cfg = Config(kubeconfig=kubeconfig)

    async def names() -> list[str]:
        async with cfg:
            return sorted(p.name for p in await Pod.async_list(namespace="default"))

    try:
        with cfg:
            assert asyncio.run(names()) == seeded
    finally:
        cfg.close()


@pytest.mark.asyncio
async def test_an_async_scope_makes_the_config_active_only_inside_it(server, seeded, make_config):
    cfg = make_config(resources=[Pod], namespaces=["default"], mode="strict")
    assert current_config() is not cfg
    async with cfg:
        assert current_config() is cfg
        child = asyncio.ensure_future(asyncio.sleep(0, result="done"))
        assert await child == "done"
    assert current_config() is not cfg
    with pytest.raises(CacheUnavailableError, match="not started"):
        await (await Pod.async_client(cfg, cached=True)).list(namespace="default")


# ------------------------------------------------------------------ async discovery


@pytest.mark.asyncio
async def test_async_initialize_reads_the_kubeconfig_on_a_library_thread_while_the_loop_keeps_running(
    server, kubeconfig, found_at_first_use
):
    # a kubeconfig named at Config() is read there, once; one found by discovery at first use
    # (as in-cluster credentials are) is read by async_initialize, off the loop
    cfg = found_at_first_use()
    loop = asyncio.get_running_loop()
    try:
        with OpenGate(kubeconfig, loop) as gate:
            async with Lateness() as probe:
                task = asyncio.ensure_future(cfg.async_initialize())
                opener = await asyncio.wait_for(gate.opened, 10)
                ticks_while_blocked = len(probe.samples)
                assert not task.done()
                # the loop still runs other work while discovery is stuck in open()
                other_work = asyncio.ensure_future(asyncio.sleep(0.05, "ran"))
                assert await asyncio.wait_for(other_work, 2) == "ran"
                gate.release()
                assert await asyncio.wait_for(task, 10) is cfg
            assert len(probe.samples) > ticks_while_blocked
            assert probe.worst < 1.0
        assert opener is not threading.current_thread()
        assert opener.name.startswith("cloudcoil-control")  # the library's control executor
        assert cfg.server == server.url
    finally:
        cfg.close()
