"""Issue 5: async writes: `async_create`, `async_update`, `async_patch`, `async_remove`, `async_delete`."""

from __future__ import annotations

import pytest
from _aio_support import Calls

from cloudcoil_cache.errors import ReadOnlyError, ResourceConflict, ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import make_pod


@pytest.fixture
def cfg(server, seeded, make_config):
    return make_config(resources=[Pod], namespaces=["default"], mode="strict")


def watch_cache(cfg) -> Calls:
    """Record what the cache hears, so a test can wait until a write came back through the watch."""
    calls = Calls()
    pods = cfg.cache.get_informer(Pod, sync=False)
    pods.on_add(lambda pod: calls.record("add", pod))
    pods.on_update(lambda old, new: calls.record("update", (old, new)))
    pods.on_delete(lambda pod: calls.record("delete", pod))
    return calls


@pytest.mark.asyncio
async def test_async_create_returns_the_servers_object_and_the_watch_brings_it_into_the_cache(server, cfg):
    calls = watch_cache(cfg)
    async with cfg:
        created = await Pod.from_dict(make_pod("new", "default")).async_create()
        assert created.name == "new"
        assert created.resource_version == server.get("pods", "new", "default")["metadata"]["resourceVersion"]
        await calls.until_names("add", ["new"])
        assert (await Pod.async_get("new")).resource_version == created.resource_version


@pytest.mark.asyncio
async def test_async_create_of_an_existing_name_raises_resource_conflict(server, cfg):
    async with cfg:
        with pytest.raises(ResourceConflict, match="web-0"):
            await Pod.from_dict(make_pod("web-0", "default")).async_create()


@pytest.mark.asyncio
async def test_async_update_of_an_edited_copy_replaces_the_object_and_a_stale_copy_conflicts(server, cfg):
    calls = watch_cache(cfg)
    async with cfg:
        cached = await Pod.async_get("web-0")
        with pytest.raises(ReadOnlyError, match="copy"):
            cached.metadata.labels["edited"] = "yes"
        edited = cached.copy()
        edited.metadata.labels["edited"] = "yes"
        updated = await edited.async_update()
        assert updated.metadata.labels["edited"] == "yes"
        assert updated.resource_version != cached.resource_version
        assert server.get("pods", "web-0", "default")["metadata"]["labels"]["edited"] == "yes"
        await calls.until(lambda cs: any(c.event == "update" and c.name == "web-0" for c in cs))
        assert (await Pod.async_get("web-0")).metadata.labels["edited"] == "yes"
        stale = cached.copy()
        stale.metadata.labels["edited"] = "again"
        with pytest.raises(ResourceConflict):
            await stale.async_update()


@pytest.mark.asyncio
async def test_async_patch_merges_into_the_servers_object(server, cfg):
    async with cfg:
        pod = await Pod.async_get("web-1")
        patched = await pod.async_patch({"metadata": {"labels": {"patched": "true"}}})
        assert patched.metadata.labels["patched"] == "true"
        assert patched.metadata.labels["app"] == "web"
        assert server.get("pods", "web-1", "default")["metadata"]["labels"]["patched"] == "true"


@pytest.mark.asyncio
async def test_async_remove_and_async_delete_delete_on_the_server_and_the_cache_reports_it(server, cfg):
    calls = watch_cache(cfg)
    async with cfg:
        await (await Pod.async_get("web-0")).async_remove()
        await Pod.async_delete("web-1", namespace="default")
        assert {p["metadata"]["name"] for p in server.list("pods", "default")} == {"web-2"}
        await calls.until_names("delete", ["web-0", "web-1"])
        assert sorted(p.name for p in await Pod.async_list()) == ["web-2"]
        with pytest.raises(ResourceNotFound):
            await Pod.async_delete("web-1", namespace="default")


@pytest.mark.asyncio
async def test_async_writes_go_to_the_api_server_even_in_strict_mode(server, cfg):
    async with cfg:
        server.clear_requests()
        await Pod.from_dict(make_pod("direct", "default")).async_create()
        assert [(r.verb, r.path) for r in server.requests if r.verb != "watch"] == [
            ("create", "/api/v1/namespaces/default/pods")
        ]
