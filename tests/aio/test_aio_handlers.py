"""Issue 5: async informers — coroutine handlers on the loop, plain ones off it, ordering, isolation."""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from typing import Any

import attrs
import pytest
from _aio_support import Calls
from cluster_support import FAST

from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import make_pod

WEB = ["web-0", "web-1", "web-2"]


@pytest.fixture
def cfg(server, seeded, make_config):
    return make_config(resources=[Pod], namespaces=["default"], mode="strict")


def register(pods: Any, event: str, calls: Calls, coroutine: bool) -> Any:
    """Register a handler of the given flavour that records each call (and where it ran)."""
    if event == "update":
        if coroutine:

            async def on_update(old: Any, new: Any) -> None:
                calls.record("update", (old, new))

            return pods.on_update(on_update)
        return pods.on_update(lambda old, new: calls.record("update", (old, new)))
    if coroutine:

        async def on_other(obj: Any) -> None:
            calls.record(event, obj)

        return getattr(pods, f"on_{event}")(on_other)
    return getattr(pods, f"on_{event}")(lambda obj: calls.record(event, obj))


@pytest.mark.asyncio
@pytest.mark.parametrize("event", ["add", "update", "delete"])
@pytest.mark.parametrize("coroutine", [True, False], ids=["coroutine-handler", "plain-handler"])
async def test_coroutine_handlers_run_on_the_event_loop_and_plain_handlers_off_it(
    server, cfg, event: str, coroutine: bool
):
    loop = asyncio.get_running_loop()
    loop_thread = threading.current_thread()
    pods = cfg.cache.get_informer(Pod, sync=False)
    calls = Calls()
    register(pods, event, calls, coroutine)
    async with cfg:
        server.patch("pods", "web-0", {"metadata": {"labels": {"touched": "1"}}}, "default")
        server.delete("pods", "web-0", "default")
        await calls.until_names(event, ["web-0"])
    for call in calls.items:
        if coroutine:
            assert call.loop is loop
            assert call.thread is loop_thread
        else:
            assert call.loop is None
            assert call.thread is not loop_thread


@pytest.mark.asyncio
@pytest.mark.parametrize("coroutine", [True, False], ids=["coroutine-handler", "plain-handler"])
async def test_handlers_registered_before_the_scope_receive_every_initial_object(server, cfg, coroutine: bool):
    pods = cfg.cache.get_informer(Pod, sync=False)
    calls = Calls()
    register(pods, "add", calls, coroutine)
    async with cfg:
        assert len(pods.list()) == 3
        await calls.until_names("add", WEB)
        server.create("pods", make_pod("web-3", "default"), "default")
        await calls.until_names("add", ["web-3"])
    assert sorted(calls.names("add")) == [*WEB, "web-3"]  # each object exactly once


@pytest.mark.asyncio
async def test_a_handler_registered_inside_the_scope_gets_the_cached_objects_then_live_events(server, cfg):
    pods = cfg.cache.get_informer(Pod, sync=False)
    calls = Calls()
    async with cfg:
        register(pods, "add", calls, coroutine=True)
        await calls.until_names("add", WEB)
        server.create("pods", make_pod("web-3", "default"), "default")
        await calls.until_names("add", ["web-3"])
    assert sorted(calls.names("add")) == [*WEB, "web-3"]


@pytest.mark.asyncio
async def test_a_coroutine_handler_sees_one_objects_updates_in_order_even_when_it_awaits(server, cfg):
    pods = cfg.cache.get_informer(Pod, sync=False)
    seen: list[str] = []
    calls = Calls()

    @pods.on_update
    async def changed(old: Any, new: Any) -> None:
        step = new.metadata.labels.get("step")
        if step is None:
            return
        await asyncio.sleep(0.02 if int(step) % 2 else 0)  # uneven work per event
        seen.append(step)
        calls.record("update", (old, new))

    async with cfg:
        for step in range(12):
            server.patch("pods", "web-0", {"metadata": {"labels": {"step": str(step)}}}, "default")
        await calls.until(lambda cs: len(cs) == 12)
    assert seen == [str(step) for step in range(12)]


@pytest.mark.asyncio
@pytest.mark.parametrize("slow_kind", ["coroutine-awaiting", "plain-blocking"])
async def test_a_slow_views_handler_delays_neither_other_views_nor_the_cache(server, cfg, slow_kind: str):
    pods = cfg.cache.get_informer(Pod, sync=False)
    fast_async_view = cfg.cache.get_informer(Pod, sync=False)  # each view has its own lane
    fast_plain_view = cfg.cache.get_informer(Pod, sync=False)
    async_gate = asyncio.Event()
    thread_gate = threading.Event()
    slow_calls, fast_async, fast_plain = Calls(), Calls(), Calls()

    if slow_kind == "coroutine-awaiting":

        async def slow(pod: Any) -> None:
            await async_gate.wait()
            slow_calls.record("add", pod)
    else:

        def slow(pod: Any) -> None:
            thread_gate.wait(10)
            slow_calls.record("add", pod)

    slow_handle = pods.on_add(slow)
    register(fast_async_view, "add", fast_async, coroutine=True)
    register(fast_plain_view, "add", fast_plain, coroutine=False)
    new = [f"new-{i}" for i in range(5)]
    try:
        async with cfg:
            for name in new:
                server.create("pods", make_pod(name, "default"), "default")
            await fast_async.until_names("add", [*WEB, *new])
            await fast_plain.until_names("add", [*WEB, *new])
            assert {p.name for p in pods.list()} == {*WEB, *new}  # the cache is not held up
            assert (await Pod.async_get("new-4")).name == "new-4"
            assert slow_calls.items == []
            assert slow_handle.backlog > 0
            async_gate.set()
            thread_gate.set()
            await slow_calls.until(lambda cs: len(cs) == 8)
            assert sorted(slow_calls.names("add")[:3]) == WEB  # the initial objects first...
            assert slow_calls.names("add")[3:] == new  # ...then the live ones, in order
    finally:
        thread_gate.set()


@pytest.mark.asyncio
async def test_a_coroutine_handler_that_raises_is_logged_and_keeps_receiving_events(server, cfg, caplog):
    pods = cfg.cache.get_informer(Pod, sync=False)
    calls = Calls()

    @pods.on_add
    async def picky(pod: Any) -> None:
        calls.record("add", pod)
        if pod.name == "web-1":
            raise ValueError("web-1 is not welcome")

    with caplog.at_level(logging.ERROR):
        async with cfg:
            await calls.until_names("add", WEB)
            server.create("pods", make_pod("web-3", "default"), "default")
            await calls.until_names("add", ["web-3"])
    failures = [r for r in caplog.records if "picky" in r.getMessage()]
    assert len(failures) == 1
    assert "web-1" in failures[0].getMessage()
    assert "web-1 is not welcome" in caplog.text


@pytest.mark.asyncio
async def test_async_informer_list_and_get_are_synchronous_local_reads(server, cfg):
    pods = cfg.cache.get_informer(Pod, sync=False)
    async with cfg:
        assert await pods.wait_for_sync(5) is True
        server.clear_requests()
        listed = pods.list()
        got = pods.get("web-2")
        assert not inspect.isawaitable(listed) and not inspect.isawaitable(got)
        assert sorted(p.name for p in listed) == WEB
        assert got is not None and got.name == "web-2"
        assert pods.get("nope") is None
        assert [p.name for p in pods.list(label_selector="app=web", field_selector="metadata.name=web-1")] == ["web-1"]
        assert [r for r in server.requests if r.verb != "watch"] == []


@pytest.mark.asyncio
async def test_get_on_an_all_namespaces_async_informer_needs_a_namespace(server, seeded, make_config):
    cfg = make_config(resources=[Pod], mode="strict")
    pods = cfg.cache.get_informer(Pod, sync=False)
    async with cfg:
        with pytest.raises(ValueError, match="namespace"):
            pods.get("web-0")
        assert pods.get("db-0", namespace="other").name == "db-0"


@pytest.mark.asyncio
async def test_sync_and_async_views_of_a_kind_share_one_watch(server, cfg):
    sync_view = cfg.cache.get_informer(Pod, sync=True)
    async_view = cfg.cache.get_informer(Pod, sync=False)
    async with cfg:
        await asyncio.to_thread(server.wait_for_watches, 1)
        assert server.active_watches == 1
        assert [p.name for p in sync_view.list()] == [p.name for p in async_view.list()]
        assert len([r for r in server.requests if r.verb == "list"]) == 1


@pytest.mark.asyncio
async def test_handler_decorators_work_with_and_without_parentheses_and_handles_can_be_removed(server, cfg):
    pods = cfg.cache.get_informer(Pod, sync=False)
    bare, called, removed = Calls(), Calls(), Calls()

    @pods.on_add
    async def with_bare_decorator(pod: Any) -> None:
        bare.record("add", pod)

    @pods.on_add()
    async def with_parentheses(pod: Any) -> None:
        called.record("add", pod)

    async def soon_removed(pod: Any) -> None:
        removed.record("add", pod)

    handle = pods.on_add(soon_removed)
    async with cfg:
        await bare.until_names("add", WEB)
        await called.until_names("add", WEB)
        await removed.until_names("add", WEB)
        handle.remove()
        server.create("pods", make_pod("web-3", "default"), "default")
        await bare.until_names("add", ["web-3"])
        await called.until_names("add", ["web-3"])
    assert "web-3" not in removed.names("add")
    await with_bare_decorator(Pod.from_dict(make_pod("direct", "default")))  # still the function
    assert bare.names("add")[-1] == "direct"


@pytest.mark.asyncio
async def test_the_last_scope_exit_lets_a_coroutine_handlers_current_call_finish_and_drops_the_queue(
    server, make_config
):
    for i in range(20):
        server.create("pods", make_pod(f"p{i}", "default"), "default")
    config = make_config(resources=[Pod], namespaces=["default"])
    pods = config.cache.get_informer(Pod, sync=False)
    started = asyncio.Event()
    finished: list[str] = []
    cancelled: list[str] = []

    @pods.on_add
    async def slow(pod: Any) -> None:
        started.set()
        try:
            await asyncio.sleep(0.3)  # the handler's own work, in progress when the scope exits
        except asyncio.CancelledError:
            cancelled.append(pod.name)
            raise
        finished.append(pod.name)

    async with config:
        await asyncio.wait_for(started.wait(), 5)
    assert cancelled == []  # the call in progress finished (docs/contract.md); it used to be cancelled
    assert 1 <= len(finished) < 20  # and the adds still queued were dropped


@pytest.mark.asyncio
async def test_a_coroutine_handler_still_running_past_the_stop_timeout_is_cancelled(server, make_config, caplog):
    server.create("pods", make_pod("p0", "default"), "default")
    config = make_config(resources=[Pod], namespaces=["default"], tuning=attrs.evolve(FAST, stop_timeout=0.5))
    pods = config.cache.get_informer(Pod, sync=False)
    started = asyncio.Event()
    outcome: list[str] = []

    @pods.on_add
    async def stuck(pod: Any) -> None:
        started.set()
        try:
            await asyncio.Event().wait()  # never set
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise

    with caplog.at_level(logging.WARNING, logger="cloudcoil_cache"):
        async with config:
            await asyncio.wait_for(started.wait(), 5)
    assert outcome == ["cancelled"]
    # bounded by the cache's stop_timeout (0.5 s), not by the handler nor the lanes' own 5 s
    assert any("did not end within 0.5s; its task is cancelled" in r.getMessage() for r in caplog.records)
