"""The async twins of cloudcoil's resource methods over HTTP: async_fetch, async_save,
async_delete_all, async_watch (an async generator that never ends on its own) and async_wait_for."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest
from _client_support import last

from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import ResourceConflict, WaitTimeout
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.testing import FakeAPIServer, RecordedRequest


def configmap(
    name: str, namespace: str | None = None, *, labels: dict[str, str] | None = None, **data: str
) -> ConfigMap:
    return ConfigMap(metadata=dict(name=name, namespace=namespace, labels=labels), data=data or None)


def watches(server: FakeAPIServer) -> list[RecordedRequest]:
    return [r for r in server.requests if r.verb == "watch"]


async def watch_requests(server: FakeAPIServer, count: int) -> None:
    """Wait (off the loop) until the server has received ``count`` watch requests."""
    await asyncio.to_thread(server.wait_for_request, lambda _r: len(watches(server)) >= count, 10)


@pytest.mark.asyncio
async def test_async_save_creates_then_updates_and_async_fetch_reads_it(server: FakeAPIServer, config: Config) -> None:
    async with config:
        saved = await configmap("settings", key="one").async_save()
        saved.data["key"] = "two"
        updated = await saved.async_save()
        assert updated.data == {"key": "two"}
        with pytest.raises(ResourceConflict):
            await saved.async_save()
        fetched = await saved.async_fetch()
    assert fetched.metadata.resource_version == updated.metadata.resource_version
    # the first save looks for the object (absent: created); the others carry a resourceVersion
    assert [r.verb for r in server.requests] == ["get", "create", "update", "update", "get"]


@pytest.mark.asyncio
async def test_async_save_replaces_an_existing_object_at_its_version(server: FakeAPIServer, config: Config) -> None:
    existing = server.create("configmaps", configmap("settings", key="old").to_dict(), "default")
    async with config:
        replaced = await configmap("settings", key="new").async_save()
    assert replaced.data == {"key": "new"}
    assert last(server, "update").json()["metadata"]["resourceVersion"] == existing["metadata"]["resourceVersion"]


@pytest.mark.asyncio
async def test_async_delete_all_deletes_what_the_label_selector_matches(server: FakeAPIServer, config: Config) -> None:
    async with config:
        for i in range(3):
            await configmap(f"cm-{i}", labels={"test": "true"}).async_create()
        await configmap("keep").async_create()
        await ConfigMap.async_delete_all(label_selector="test=true")
        assert [c.metadata.name for c in (await ConfigMap.async_list()).items] == ["keep"]
    assert last(server, "deletecollection").query["labelSelector"] == "test=true"


@pytest.mark.asyncio
async def test_async_watch_is_an_async_generator_delivering_changes(server: FakeAPIServer, config: Config) -> None:
    async with config:
        created = await configmap("watched", key="v").async_create()
        events: list[tuple[str, Any]] = []

        async def consume() -> None:
            async with contextlib.aclosing(
                ConfigMap.async_watch(
                    field_selector="metadata.name=watched", resource_version=created.metadata.resource_version
                )
            ) as stream:
                async for event in stream:
                    events.append(event)
                    if event[0] == "DELETED":
                        return

        task = asyncio.create_task(consume())
        created.metadata.annotations = {"test": "updated"}
        updated = await created.async_update()
        await updated.async_remove()
        await asyncio.wait_for(task, 10)
    modified = [o for t, o in events if t == "MODIFIED"]
    assert modified[0].metadata.resource_version == updated.metadata.resource_version
    assert [o.metadata.annotations for t, o in events if t == "DELETED"] == [{"test": "updated"}]


@pytest.mark.asyncio
async def test_awaiting_async_watch_gives_the_same_stream(server: FakeAPIServer, config: Config) -> None:
    async with config:
        await configmap("a").async_create()
        events = await ConfigMap.async_watch(allow_bookmarks=False)
        try:
            event_type, obj = await events.__anext__()
        finally:
            await events.aclose()
    assert (event_type, obj.metadata.name) == ("ADDED", "a")


@pytest.mark.asyncio
async def test_a_quiet_async_watch_is_reopened_after_the_read_timeout(server: FakeAPIServer, config: Config) -> None:
    server.bookmark_interval = 3600.0
    async with config:
        stream = ConfigMap.async_watch(read_timeout=0.3)
        try:
            first = asyncio.ensure_future(stream.__anext__())
            await watch_requests(server, 3)  # two read timeouts passed: neither ended the watch
            await configmap("late").async_create()
            event_type, obj = await asyncio.wait_for(first, 10)
        finally:
            await stream.aclose()
    assert (event_type, obj.metadata.name) == ("ADDED", "late")


@pytest.mark.parametrize("mode", ["event", "http"], ids=["error-event", "http-410"])
@pytest.mark.asyncio
async def test_a_410_restarts_the_async_watch_from_the_current_state(
    server: FakeAPIServer, config: Config, mode: str
) -> None:
    server.expired_watch_mode = mode
    async with config:
        rv = (await ConfigMap.async_list()).resource_version
        await configmap("survivor").async_create()
        server.compact()
        async with contextlib.aclosing(ConfigMap.async_watch(resource_version=rv, allow_bookmarks=False)) as stream:
            event_type, obj = await stream.__anext__()
    assert (event_type, obj.metadata.name) == ("ADDED", "survivor")
    assert [r.query.get("resourceVersion") for r in watches(server)] == [rv, ""]


@pytest.mark.asyncio
async def test_cancelling_the_consumer_ends_a_blocked_async_watch(server: FakeAPIServer, config: Config) -> None:
    server.bookmark_interval = 3600.0
    async with config:

        async def consume() -> None:
            async for _ in ConfigMap.async_watch():
                pass

        task = asyncio.create_task(consume())
        await asyncio.to_thread(server.wait_for_watches, 1)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert time.monotonic() - started < 1


@pytest.mark.asyncio
async def test_async_wait_for_sees_a_change_made_before_it_watched(server: FakeAPIServer, config: Config) -> None:
    async with config:
        created = await configmap("waited", key="initial").async_create()
        server.patch("configmaps", "waited", {"data": {"key": "updated"}}, "default")

        def updated(event_type: str, obj: ConfigMap) -> bool | None:
            if event_type != "MODIFIED":
                return None
            return obj.data.get("key") == "updated"

        found = await created.async_wait_for(updated, timeout=5)
        assert found.data == {"key": "updated"}
        await created.async_remove()
        matched = await created.async_wait_for({"changed": updated, "gone": lambda t, _: t == "DELETED"}, timeout=5)
    assert matched == "changed"  # the first predicate matching the first event (MODIFIED) wins


@pytest.mark.asyncio
async def test_async_wait_for_times_out_promptly(server: FakeAPIServer, config: Config) -> None:
    async with config:
        created = await configmap("waited").async_create()
        started = time.monotonic()
        with pytest.raises(WaitTimeout, match="ConfigMap default/waited"):
            await created.async_wait_for(lambda event_type, _: event_type == "DELETED", timeout=1)
        assert time.monotonic() - started < 2
