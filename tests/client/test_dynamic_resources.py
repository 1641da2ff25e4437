"""Dynamic resources and Unstructured objects over HTTP: discovery at first use, CRUD, lists, watch, scale."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import ConfigError, ReadOnlyError, ResourceNotFound
from cloudcoil_cache.models.kubernetes.apps.v1 import Deployment
from cloudcoil_cache.resources import Resource, ResourceList, Unstructured, get_dynamic_resource, parse_file
from cloudcoil_cache.testing import FakeAPIServer, make_deployment


def discovery_requests(server: FakeAPIServer) -> list[str]:
    return [r.path for r in server.requests if r.path.startswith(("/api/", "/apis/")) and r.path.count("/") <= 3]


def test_a_dynamic_class_is_made_without_a_request_and_discovers_its_kind_at_first_use(
    server: FakeAPIServer, config: Config
) -> None:
    server.register_resource("dyn-first.example.com", "v1", "Gadget", "gadgets")
    server.clear_requests()
    Gadget = get_dynamic_resource("Gadget", "dyn-first.example.com/v1")
    assert Gadget is get_dynamic_resource("Gadget", "dyn-first.example.com/v1")
    assert (Gadget.plural, server.requests) == (None, [])
    with config:
        Gadget(metadata={"name": "g", "namespace": "default"}, spec={"size": 1}).create()
        Gadget.get("g", "default")
    assert (Gadget.plural, Gadget.namespaced) == ("gadgets", True)
    assert Gadget.subresources == {"status"}
    assert discovery_requests(server) == ["/apis/dyn-first.example.com/v1"]  # once, not per call


def test_dynamic_objects_are_created_read_updated_and_deleted_as_dicts(config: Config) -> None:
    DynamicConfigMap = get_dynamic_resource("ConfigMap", "v1")
    with config:
        created = DynamicConfigMap(metadata={"name": "cm", "namespace": "default"}, data={"key": "value"}).create()
        assert isinstance(created, Unstructured) and created["data"]["key"] == "value"
        assert created.metadata.uid and created.name == "cm" and created.namespace == "default"
        fetched = DynamicConfigMap.get("cm", "default")
        assert fetched.raw["data"] == {"key": "value"} and fetched.raw["kind"] == "ConfigMap"
        fetched["data"]["new_key"] = "new_value"
        updated = fetched.update()
        assert updated.raw.get("data", {}).get("new_key") == "new_value"
        assert updated.model_dump(mode="json", by_alias=True)["data"]["new_key"] == "new_value"
        DynamicConfigMap.delete("cm", "default")
        with pytest.raises(ResourceNotFound):
            DynamicConfigMap.get("cm", "default")


def test_save_creates_then_updates_a_dynamic_object(config: Config) -> None:
    DynamicConfigMap = get_dynamic_resource("ConfigMap", "v1")
    with config:
        saved = DynamicConfigMap(metadata={"name": "s", "namespace": "default"}, data={"k": "v"}).save()
        saved["data"]["k"] = "updated"
        assert saved.save().raw["data"]["k"] == "updated"


def test_custom_resources_get_status_writes_lists_and_a_watch(server: FakeAPIServer, config: Config) -> None:
    server.register_resource("dyn-crud.example.com", "v1", "Gizmo", "gizmos")
    Gizmo = get_dynamic_resource("Gizmo", "dyn-crud.example.com/v1")
    with config:
        first = Gizmo(metadata={"name": "a", "namespace": "default"}, spec={"size": 1}).create()
        for name in ("b", "c"):
            Gizmo(metadata={"name": name, "namespace": "default"}, spec={"size": 2}).create()
        first["status"] = {"phase": "Ready"}
        assert "status" in first
        with_status = first.update_status()
        assert with_status["status"] == {"phase": "Ready"}
        assert with_status["spec"] == {"size": 1}
        listed = Gizmo.list(namespace="default", limit=2)
        assert isinstance(listed, ResourceList) and listed.resource_class is Gizmo
        assert len(listed.items) == 2 and listed.has_next_page()
        assert [g.name for g in listed] == ["a", "b", "c"]  # iteration fetches the next page
        assert all(isinstance(g, Gizmo) for g in listed)
        with Gizmo.client(config).open_watch(namespace="default", resource_version=first.resource_version) as events:
            with_status.remove()
            seen = []
            for event_type, obj in events:
                seen.append((event_type, obj.name))
                if event_type == "DELETED":
                    break
    assert ("DELETED", "a") in seen and isinstance(obj, Gizmo) and obj["status"] == {"phase": "Ready"}


def test_a_dynamic_deployment_scales_through_the_scale_subresource(config: Config) -> None:
    with config:
        Deployment.from_dict(make_deployment("web", replicas=1)).create()
        DynamicDeployment = get_dynamic_resource("Deployment", "apps/v1")
        current = DynamicDeployment.get("web", "default")
        scaled = current.scale(replicas=3)
        assert scaled["spec"]["replicas"] == 3
        assert Deployment.get("web", "default").spec.replicas == 3
    assert {"status", "scale"} <= DynamicDeployment.subresources


def test_a_kind_the_server_does_not_serve_is_a_typed_error_naming_kind_and_api_version(
    server: FakeAPIServer, config: Config
) -> None:
    Missing = get_dynamic_resource("Nothing", "dyn-missing.example.com/v1")
    with config, pytest.raises(ConfigError, match=r"Nothing \(dyn-missing\.example\.com/v1\) is not registered"):
        Missing.get("x", "default")
    assert isinstance(ConfigError("x"), ValueError)
    server.register_resource("dyn-missing.example.com", "v1", "Nothing", "nothings")  # served now
    with config, pytest.raises(ResourceNotFound):
        Missing.get("x", "default")  # discovery is tried again, and finds it


def test_an_unstructured_object_from_a_file_is_written_to_its_own_kind(
    server: FakeAPIServer, config: Config, tmp_path: Path
) -> None:
    server.register_resource("dyn-file.example.com", "v1", "Doohickey", "doohickeys")
    manifest = tmp_path / "doohickey.yaml"
    manifest.write_text(
        "apiVersion: dyn-file.example.com/v1\nkind: Doohickey\n"
        "metadata:\n  name: d\n  namespace: default\nspec:\n  colour: red\n"
    )
    obj = parse_file(manifest)
    assert type(obj) is Unstructured and obj.kind == "Doohickey"
    with config:
        created = obj.create()
        assert created["spec"] == {"colour": "red"} and created.metadata.uid
        assert type(created) is get_dynamic_resource("Doohickey", "dyn-file.example.com/v1")
        created.remove()
    assert server.list("doohickeys", "default") == []


def test_class_methods_of_plain_unstructured_name_what_to_use_instead(config: Config) -> None:
    with config, pytest.raises(TypeError, match="get_dynamic_resource"):
        Unstructured.get("x", "default")
    with config, pytest.raises(ValueError, match="apiVersion and kind are required"):
        Unstructured(metadata={"name": "x"}).create()


@pytest.mark.asyncio
async def test_async_methods_and_async_iteration_of_dynamic_lists(server: FakeAPIServer, config: Config) -> None:
    server.register_resource("dyn-async.example.com", "v1", "Thingamajig", "thingamajigs")
    Thing = get_dynamic_resource("Thingamajig", "dyn-async.example.com/v1")
    async with config:
        for name in ("a", "b", "c"):
            await Thing(metadata={"name": name, "namespace": "default"}, spec={"n": name}).async_create()
        listed = await Thing.async_list(namespace="default", limit=2)
        assert [t["spec"]["n"] async for t in listed] == ["a", "b", "c"]
        fetched = await Thing.async_get("b", "default")
        fetched["spec"]["n"] = "B"
        assert (await fetched.async_update())["spec"]["n"] == "B"
        await asyncio.gather(*(Thing.async_delete(n, "default") for n in ("a", "b", "c")))
    assert server.list("thingamajigs", "default") == []


def spy_on_discovery(config: Config, path: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads that GET ``path`` through ``config`` (the real request still runs)."""
    transport = config.transport
    request = transport.request
    threads: list[str] = []

    def spied(method: str, url: str, **kwargs: Any) -> Any:
        if url == path:
            threads.append(threading.current_thread().name)
        return request(method, url, **kwargs)

    monkeypatch.setattr(transport, "request", spied)
    return threads


@pytest.mark.asyncio
@pytest.mark.parametrize("made_by", ["get_dynamic_resource", "a class without plural"])
async def test_async_calls_of_an_unbound_kind_run_its_discovery_off_the_event_loop(
    server: FakeAPIServer, config: Config, monkeypatch: pytest.MonkeyPatch, made_by: str
) -> None:
    group = f"dyn-offloop-{made_by[0]}.example.com"
    server.register_resource(group, "v1", "Flywheel", "flywheels")
    if made_by == "get_dynamic_resource":
        Flywheel: Any = get_dynamic_resource("Flywheel", f"{group}/v1")
    else:

        class Flywheel(Resource):  # type: ignore[no-redef]  # a cloudcoil user's model: no plural
            api_version: str = f"{group}/v1"
            kind: str = "Flywheel"
            spec: dict[str, Any] | None = None

    discovered_on = spy_on_discovery(config, f"/apis/{group}/v1", monkeypatch)
    Flywheel.client(config)  # making a client sends nothing: the binding waits for a use
    assert (discovered_on, Flywheel.plural) == ([], None)
    async with config:
        assert (await Flywheel.async_list(namespace="default")).items == []
        await Flywheel(metadata={"name": "s", "namespace": "default"}, spec={}).async_create()
    loop_thread = threading.current_thread().name
    assert discovered_on and loop_thread not in discovered_on, (loop_thread, discovered_on)
    assert (Flywheel.plural, len(discovered_on)) == ("flywheels", 1)
    assert server.get("flywheels", "s", "default")["spec"] == {}


def test_a_cached_config_serves_dynamic_objects_from_its_informer(
    server: FakeAPIServer, kubeconfig: str, make_config
) -> None:
    server.register_resource("dyn-cache.example.com", "v1", "Whatsit", "whatsits")
    Whatsit = get_dynamic_resource("Whatsit", "dyn-cache.example.com/v1")
    config = make_config(kubeconfig=kubeconfig, cache=True)
    with config:
        created = Whatsit(metadata={"name": "w", "namespace": "default"}, spec={"a": 1}).create()
        cached = Whatsit.get("w", "default")  # read-your-writes through the cache
        assert cached["spec"] == {"a": 1} and cached.metadata.uid == created.metadata.uid
        assert [w.name for w in Whatsit.list(namespace="default")] == ["w"]
        with pytest.raises(ReadOnlyError):
            cached["spec"]["a"] = 2
        editable = cached.copy()
        editable["spec"]["a"] = 2
        assert editable.update()["spec"] == {"a": 2}
