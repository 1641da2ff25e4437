"""Async views: one task per view on the event loop delivers in order (no OS thread per coroutine handler);
CachedResources returns editable deep copies from the cache."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from test_faults_e2e import check_order

from cloudcoil_cache.caching import CachedResources
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap


@pytest.mark.asyncio
async def test_an_async_views_handlers_see_each_objects_events_in_order_on_the_loop(server, make_config):
    config = make_config(resources=[ConfigMap])
    await config.async_initialize()
    view = config.cache.get_informer(ConfigMap)  # type: ignore[union-attr]  # sync=None under a loop: async
    assert type(view).__name__ == "AsyncInformer"
    log: list[tuple[str, str, str]] = []
    loop_threads: set[str] = set()
    done = asyncio.Event()

    @view.on_add
    async def added(obj: Any) -> None:
        loop_threads.add(threading.current_thread().name)
        log.append(("add", obj.metadata.name, obj.metadata.uid))
        if obj.metadata.name == "last":
            done.set()

    @view.on_update
    async def updated(old: Any, new: Any) -> None:
        await asyncio.sleep(0)  # yields to the loop mid-event: the next event still waits for it
        log.append(("update", new.metadata.name, new.metadata.uid))

    @view.on_delete
    def removed(obj: Any) -> None:  # a plain handler: runs in the executor, still in order
        log.append(("delete", obj.metadata.name, obj.metadata.uid))

    async with config:
        for round_ in range(2):
            for i in range(4):
                server.create("configmaps", {"metadata": {"name": f"cm-{i}"}, "data": {"v": "0"}}, "default")
                server.patch("configmaps", f"cm-{i}", {"data": {"v": f"{round_}"}}, "default")
                server.delete("configmaps", f"cm-{i}", "default")
        server.create("configmaps", {"metadata": {"name": "last"}}, "default")
        await asyncio.wait_for(done.wait(), 20)
        handler_threads = [t.name for t in threading.enumerate() if t.name.startswith("cloudcoil-handler")]
    check_order(log)
    assert loop_threads == {threading.current_thread().name}  # coroutine handlers ran on this loop
    assert handler_threads == []  # and no thread was started per handler or per view
    assert sum(1 for e in log if e[0] == "delete") == 8


def test_a_coroutine_handler_on_a_sync_view_is_a_type_error_naming_sync_false(make_config):
    config = make_config(resources=[ConfigMap])
    view = config.cache.get_informer(ConfigMap)  # type: ignore[union-attr]  # no loop: sync
    assert type(view).__name__ == "SyncInformer"

    async def handler(obj: Any) -> None: ...

    with pytest.raises(TypeError, match="sync=False"):
        view.on_add(handler)


def test_cached_resources_returns_editable_deep_copies_and_never_calls_the_api(server, make_config):
    server.create("configmaps", {"metadata": {"name": "a", "labels": {"x": "1"}}, "data": {"k": "v"}}, "default")
    config = make_config(resources=[ConfigMap])
    view = config.cache.get_informer(ConfigMap, sync=True)  # type: ignore[union-attr]
    cached = CachedResources(view, "default")
    with pytest.raises(RuntimeError, match="not running and synced"):
        cached.get("a")
    with config:
        server.wait_for_watches(1)
        server.clear_requests()
        copy = cached.get("a")
        assert copy is not None
        copy.data["k"] = "edited"  # editable
        assert view.get("a", "default").data["k"] == "v"  # the shared object is untouched
        assert [o.metadata.name for o in cached.list(labels={"x": "1"})] == ["a"]
        assert cached.list(labels={"x": "2"}) == [] and cached.get("missing") is None
        with pytest.raises(ValueError, match="mutually exclusive"):
            cached.list("default", all_namespaces=True)
        assert [r for r in server.requests if r.query.get("watch") != "1"] == []
