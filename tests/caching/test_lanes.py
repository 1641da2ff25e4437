"""Handler lanes, thread and asyncio alike: which handlers an event reaches, and what a stop cuts off."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from _objects import obj

from cloudcoil_cache.caching._async import AsyncLane
from cloudcoil_cache.caching._dispatch import Registration, ThreadLane
from cloudcoil_cache.caching._store import Added, Deleted


def test_a_thread_lane_calls_the_handlers_of_each_event_kind_in_order_and_survives_one_that_raises(caplog):
    lane = ThreadLane("pods@*#1")
    calls: list[str] = []
    done = threading.Event()

    def broken(o: Any) -> None:
        calls.append(f"broken:{o.metadata.name}")
        raise RuntimeError("boom")

    lane.add(Registration("add", broken, "broken"))
    lane.add(Registration("add", lambda o: calls.append(f"add:{o.metadata.name}"), "adds"))
    lane.add(Registration("delete", lambda o: (calls.append(f"delete:{o.metadata.name}"), done.set()), "deletes"))
    lane.start()
    try:
        lane.enqueue([Added(obj("a")), Deleted(obj("a"))])
        assert done.wait(10)
    finally:
        join = lane.stop()
        assert join is not None
        join(10)
    assert calls == ["broken:a", "add:a", "delete:a"]
    assert "event handler broken raised on Added default/a" in caplog.text


def test_a_stopped_thread_lane_makes_no_further_call_of_the_event_in_progress():
    lane = ThreadLane("pods@*#1")
    calls: list[str] = []
    entered, release = threading.Event(), threading.Event()

    def first(o: Any) -> None:
        calls.append("first")
        entered.set()
        release.wait(10)

    lane.add(Registration("add", first, "first"))
    lane.add(Registration("add", lambda o: calls.append("second"), "second"))
    lane.start()
    lane.enqueue([Added(obj("a")), Added(obj("b"))])
    assert entered.wait(10)
    join = lane.stop()  # while "first" is in its call: it finishes, nothing else runs
    release.set()
    assert join is not None
    join(10)
    assert calls == ["first"]
    assert lane.backlog == 0


@pytest.mark.parametrize("coroutine", [True, False], ids=["coroutine-handler", "plain-handler"])
def test_a_stopped_async_lane_makes_no_further_call_of_the_event_in_progress(coroutine):
    calls: list[str] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        entered, release = asyncio.Event(), threading.Event()

        async def first_async(o: Any) -> None:
            calls.append("first")
            entered.set()
            await asyncio.to_thread(release.wait, 10)

        def first_plain(o: Any) -> None:  # runs in the library's executor
            calls.append("first")
            loop.call_soon_threadsafe(entered.set)
            release.wait(10)

        lane = AsyncLane("pods@*#1", loop, lambda: None)
        lane.add(Registration("add", first_async if coroutine else first_plain, "first"))
        lane.add(Registration("add", lambda o: calls.append("second"), "second"))
        lane.start()
        lane.enqueue([Added(obj("a")), Added(obj("b"))])
        await asyncio.wait_for(entered.wait(), 10)
        join = lane.stop()
        release.set()
        assert join is not None
        await asyncio.to_thread(join, 10)  # off the loop: waits for the call in progress

    asyncio.run(main())
    assert calls == ["first"]
