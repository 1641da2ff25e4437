"""Issue 5: async scopes across event loops, cancellation while syncing, and threads joined on exit."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from _aio_support import Calls, ConnectGate, OpenGate, cloudcoil_threads
from cluster_support import FAST

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import make_pod

WEB = ["web-0", "web-1", "web-2"]


@pytest.mark.parametrize("registered", ["outside-any-loop", "inside-the-first-loop"])
def test_a_config_entered_again_under_a_new_event_loop_works_and_delivers_on_that_loop(
    server, seeded, make_config, registered: str
):
    cfg = make_config(resources=[Pod], namespaces=["default"], mode="strict")
    pods = cfg.cache.get_informer(Pod, sync=False)
    calls = Calls()

    async def added(pod: Any) -> None:
        calls.record("add", pod)

    if registered == "outside-any-loop":
        pods.on_add(added)
    loops: list[asyncio.AbstractEventLoop] = []

    async def run(new_pod: str) -> list[str]:
        loop = asyncio.get_running_loop()
        loops.append(loop)
        if registered == "inside-the-first-loop" and len(loops) == 1:
            pods.on_add(added)
        async with cfg:
            server.create("pods", make_pod(new_pod, "default"), "default")
            await calls.until(lambda cs: any(c.name == new_pod and c.loop is loop for c in cs))
            return sorted(p.name for p in await Pod.async_list())

    assert asyncio.run(run("first")) == sorted([*WEB, "first"])
    assert cloudcoil_threads() == []
    assert asyncio.run(run("second")) == sorted([*WEB, "first", "second"])
    assert cloudcoil_threads() == []
    first_loop, second_loop = loops
    assert first_loop is not second_loop
    assert {c.loop for c in calls.items} == {first_loop, second_loop}
    # the second scope re-listed, so the handler got every object again, on the new loop
    assert sorted(c.name for c in calls.items if c.loop is second_loop) == sorted([*WEB, "first", "second"])


async def _task_cancel(enter: Any, sync_under_way: Any) -> float:
    task = asyncio.ensure_future(enter())
    await sync_under_way()
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return time.monotonic() - started


async def _wait_for_timeout(enter: Any, sync_under_way: Any) -> float:
    task = asyncio.ensure_future(asyncio.wait_for(enter(), 0.3))
    await sync_under_way()
    started = time.monotonic()
    with pytest.raises(asyncio.TimeoutError):
        await task
    return time.monotonic() - started


@pytest.mark.parametrize("cancel", [_task_cancel, _wait_for_timeout], ids=["task-cancel", "wait_for-timeout"])
@pytest.mark.parametrize("slow", ["list-in-flight", "list-failing-and-retried"])
def test_cancelling_a_task_waiting_for_the_sync_leaves_no_thread_and_the_next_entry_works(
    server, seeded, make_config, cancel: Any, slow: str
):
    cfg = make_config(resources=[Pod], namespaces=["default"], mode="strict", sync_timeout=20)
    if slow == "list-in-flight":
        server.set_delay(5.0)  # the LIST is answered only after 5 s
        lists_before_cancel = 1
    else:
        server.fail_next(1000, 500, verb="list")  # the sync keeps retrying with backoff
        lists_before_cancel = 2

    async def enter() -> None:
        async with cfg:
            pass

    async def sync_under_way() -> None:
        def lists_seen() -> None:
            for _ in range(lists_before_cancel):
                server.wait_for_request(lambda r: r.verb == "list", 5.0)
                if lists_before_cancel > 1:
                    server.clear_requests()

        await asyncio.to_thread(lists_seen)

    async def main() -> list[str]:
        took = await cancel(enter, sync_under_way)
        assert took < 2.0, f"cancelling took {took:.2f}s: it waited for the slow sync"
        assert cloudcoil_threads() == []  # right after the cancellation, nothing is left running
        assert not cfg.cache.status().started
        server.clear_faults()
        async with cfg:  # the next entry syncs and serves as if nothing had happened
            return sorted(p.name for p in await Pod.async_list())

    assert asyncio.run(main()) == WEB
    with cfg:  # and the Config is not stuck in "async" mode
        assert sorted(p.name for p in Pod.list()) == WEB


@pytest.mark.asyncio
async def test_leaving_the_last_async_scope_stops_and_joins_every_library_thread(server, seeded, make_config):
    def workers() -> list[str]:  # reflector and handler threads (the executor's come and go)
        library_pools = ("cloudcoil-blocking", "cloudcoil-control")
        return [name for name in cloudcoil_threads() if not name.startswith(library_pools)]

    cfg = make_config(resources=[Pod], namespaces=["default"], mode="strict")
    pods = cfg.cache.get_informer(Pod, sync=False)
    calls = Calls()
    never = asyncio.Event()

    @pods.on_add
    async def stuck(pod: Any) -> None:
        calls.record("add", pod)
        await never.wait()  # its current call never ends on its own; its backlog is dropped

    pods.on_update(lambda old, new: calls.record("update", (old, new)))

    @pods.on_delete
    async def removed(pod: Any) -> None:
        calls.record("delete", pod)

    async with cfg:
        async with cfg:
            await calls.until(lambda cs: len(cs) >= 1)
            threads_inside = workers()
        assert workers() == threads_inside  # the inner exit stopped nothing
    assert any(name.startswith("cloudcoil-reflector") for name in threads_inside)
    assert sum(name.startswith("cloudcoil-handler") for name in threads_inside) == 0  # a task on the loop
    assert cloudcoil_threads() == []
    assert len(calls.names("add")) == 1  # the stuck handler's queued events were dropped


def test_cancelling_a_task_while_the_first_list_connects_returns_without_waiting_for_the_list(
    server, seeded, make_config
):
    cfg = make_config(resources=[Pod], namespaces=["default"], mode="strict", sync_timeout=20)
    cfg.initialize()
    server.set_delay(3.0)  # the LIST, once sent, is answered only after 3 s

    async def enter() -> None:
        async with cfg:
            pass

    async def main() -> float:
        # the reflector's connect is held for 1 s: the cancellation lands inside it
        with ConnectGate(server.port, asyncio.get_running_loop(), hold=1.0) as gate:
            task = asyncio.ensure_future(enter())
            connecting = await asyncio.wait_for(gate.opened, 10)
            assert connecting.name.startswith("cloudcoil-reflector")
            started = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return time.monotonic() - started

    took = asyncio.run(main())
    assert cloudcoil_threads() == []
    assert took < 2.5, f"cancelling took {took:.2f}s: it waited for the slow LIST"


def test_cancelling_a_task_during_discovery_starts_nothing_and_the_next_entry_works(
    server, seeded, kubeconfig, found_at_first_use
):
    # discovery that reads a file at first use (see found_at_first_use)
    cfg = found_at_first_use(
        cache=Cache(resources=[Pod], namespaces=["default"], mode="strict", sync_timeout=20, tuning=FAST)
    )

    async def enter() -> list[str]:
        async with cfg:
            return sorted(p.name for p in await Pod.async_list())

    async def main() -> list[str]:
        with OpenGate(kubeconfig, asyncio.get_running_loop()) as gate:
            task = asyncio.ensure_future(enter())
            await asyncio.wait_for(gate.opened, 10)  # discovery is reading the kubeconfig
            task.cancel()
            gate.release()
            with pytest.raises(asyncio.CancelledError):
                await task
        assert cloudcoil_threads() == []
        assert not cfg.cache.status().started
        return await enter()

    try:
        assert asyncio.run(main()) == WEB
    finally:
        cfg.close()
