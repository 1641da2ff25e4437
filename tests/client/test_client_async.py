"""The async twins over real HTTP: AsyncResourceClient and the resources' ``async_*`` methods."""

from __future__ import annotations

from typing import Any

import pytest
from _client_support import Widget, last, pod

from cloudcoil_cache.client import AsyncResourceClient, Config
from cloudcoil_cache.errors import ResourceConflict, ResourceNotFound, WatchExpired
from cloudcoil_cache.models.kubernetes.apps.v1 import Deployment
from cloudcoil_cache.models.kubernetes.core.v1 import Pod, PodStatus
from cloudcoil_cache.testing import FakeAPIServer, make_deployment, make_pod


@pytest.mark.asyncio
async def test_the_async_client_does_every_operation(any_config: Config) -> None:
    client = await Pod.async_client(any_config)
    assert isinstance(client, AsyncResourceClient) and client.sync.cached is False
    created = await client.create(pod("web"))
    assert (await client.get("web")).metadata.uid == created.metadata.uid
    assert [p.metadata.name for p in (await client.list()).items] == ["web"]
    labelled = created.evolve(metadata=created.metadata.evolve(labels={"a": "1"}))
    updated = await client.update(labelled)
    with pytest.raises(ResourceConflict):
        await client.update(created)
    status = await client.update_status(updated.evolve(status=PodStatus(phase="Running")))
    assert status.status.phase == "Running"
    patched = await client.patch("web", [{"op": "add", "path": "/metadata/labels/b", "value": "2"}], patch_type="json")
    assert patched.metadata.labels == {"a": "1", "b": "2"}
    applied = await client.apply(pod("web", labels={"c": "3"}), field_manager="async-tests")
    # The first entry (Apply sorts before Update); the client's own writes own fields too.
    assert applied.metadata.managed_fields[0].manager == "async-tests"
    with pytest.raises(ResourceConflict):
        await client.delete("web", preconditions={"uid": "wrong"})
    deleted = await client.delete("web", propagation_policy="Foreground")
    assert deleted.metadata.uid == created.metadata.uid
    with pytest.raises(ResourceNotFound) as info:
        await client.get("web")
    assert info.value.message == 'pods "web" not found'


@pytest.mark.asyncio
async def test_async_list_pages_are_walked_by_iteration(server: FakeAPIServer, config: Config) -> None:
    for i in range(5):
        server.create("pods", make_pod(f"p{i}", index=i), "default")
    client = await Pod.async_client(config)
    page = await client.list(limit=2, label_selector="app.kubernetes.io/part-of=shop")
    assert len(page) == 2 and page.continue_
    assert [p.metadata.name for p in page] == [f"p{i}" for i in range(5)]


@pytest.mark.asyncio
async def test_async_watch_yields_events_and_raises_watch_expired(server: FakeAPIServer, config: Config) -> None:
    client = await Pod.async_client(config)
    rv = (await client.list()).resource_version
    server.create("pods", make_pod("w"), "default")
    events = client.watch(resource_version=rv)
    event_type, obj = await events.__anext__()
    await events.aclose()
    assert (event_type, obj.metadata.name) == ("ADDED", "w")
    server.compact()
    expired = client.watch(resource_version=rv, _raise_on_expired=True)
    with pytest.raises(WatchExpired):
        await expired.__anext__()
    await expired.aclose()


@pytest.mark.asyncio
async def test_async_resource_methods_do_a_full_lifecycle_in_an_async_scope(
    any_server: FakeAPIServer, any_config: Config
) -> None:
    async with any_config:
        created = await pod("web").async_create()
        assert (await Pod.async_get("web")).metadata.uid == created.metadata.uid
        assert [p.metadata.name for p in await Pod.async_list()] == ["web"]
        updated = await created.evolve(metadata=created.metadata.evolve(labels={"v": "2"})).async_update()
        status = await updated.evolve(status=PodStatus(phase="Running")).async_update_status()
        patched = await status.async_patch({"metadata": {"labels": {"w": "3"}}})
        assert patched.metadata.labels == {"v": "2", "w": "3"}
        applied = await pod("web", labels={"x": "1"}).async_apply(field_manager="me")
        assert applied.metadata.labels == {"v": "2", "w": "3", "x": "1"}
        events = await Pod.async_watch(resource_version=created.metadata.resource_version)
        kinds = [(await events.__anext__())[0] for _ in range(4)]
        await events.aclose()
        assert kinds == ["MODIFIED"] * 4
        assert (await applied.async_remove()).metadata.name == "web"
        second = await pod("other").async_create()
        assert (await Pod.async_delete("other")).metadata.uid == second.metadata.uid
        deployment = await Deployment.from_dict(make_deployment("api", replicas=1)).async_create()
        assert (await deployment.async_scale(6)).spec.replicas == 6
    assert last(any_server, "patch").path.endswith("/deployments/api/scale")


@pytest.mark.asyncio
async def test_an_async_custom_resource_round_trip(server: FakeAPIServer, config: Config) -> None:
    server.register_resource("example.com", "v1", "Widget", "widgets")
    client: Any = await Widget.async_client(config)
    created = await client.create(
        Widget.from_dict(
            {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1}}
        )
    )
    assert (await client.get("w")).spec == {"size": 1}
    assert (await client.patch("w", {"spec": {"size": 2}})).spec == {"size": 2}
    assert (await client.delete("w")).metadata.uid == created.metadata.uid
