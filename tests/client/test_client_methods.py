"""The resource-class methods (``Pod.get``, ``pod.create()``...) over HTTP, and config choice."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Callable

import pytest
from _client_support import Widget, last, pod

from cloudcoil_cache.client import Config, ResourceClient, _config
from cloudcoil_cache.errors import APIError, ResourceConflict, ResourceNotFound
from cloudcoil_cache.models.kubernetes.apps.v1 import Deployment
from cloudcoil_cache.models.kubernetes.core.v1 import Pod, PodStatus
from cloudcoil_cache.testing import FakeAPIServer, make_deployment, make_pod


def test_class_and_instance_methods_do_a_full_lifecycle_in_a_scope(
    any_server: FakeAPIServer, any_config: Config
) -> None:
    with any_config:
        created = pod("web").create()
        assert Pod.get("web").metadata.uid == created.metadata.uid
        assert [p.metadata.name for p in Pod.list()] == ["web"]
        updated = created.evolve(metadata=created.metadata.evolve(labels={"v": "2"})).update()
        assert updated.metadata.labels == {"v": "2"}
        status = updated.evolve(status=PodStatus(phase="Running")).update_status()
        assert status.status.phase == "Running"
        patched = status.patch({"metadata": {"labels": {"w": "3"}}})
        assert patched.metadata.labels == {"v": "2", "w": "3"}
        # A pod's containers are immutable but for their images (as on a real server).
        strategic = patched.patch(
            {"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}}, patch_type="strategic"
        )
        assert [(c.name, c.image) for c in strategic.spec.containers] == [("web", "nginx:2")]
        applied = pod("web", labels={"x": "4"}, image="nginx:2").apply(field_manager="me")
        assert applied.metadata.managed_fields[0].manager == "me"
        removed = applied.remove()
        assert removed.metadata.uid == created.metadata.uid
        with pytest.raises(ResourceNotFound):
            Pod.get("web")
    verbs = [r.verb for r in any_server.requests]
    assert verbs == ["create", "get", "list", "update", "update", "patch", "patch", "patch", "delete", "get"]


def test_a_stale_instance_update_raises_conflict(server: FakeAPIServer, config: Config) -> None:
    with config:
        created = pod("web").create()
        created.patch({"metadata": {"labels": {"a": "1"}}})
        with pytest.raises(ResourceConflict):
            created.evolve(metadata=created.metadata.evolve(labels={"b": "2"})).update()


def test_class_delete_passes_its_options(server: FakeAPIServer, config: Config) -> None:
    with config:
        created = pod("web").create()
        with pytest.raises(ResourceConflict):
            Pod.delete("web", preconditions={"uid": "wrong"})
        deleted = Pod.delete("web", propagation_policy="Background", preconditions={"uid": created.metadata.uid})
    assert deleted.metadata.name == "web"
    assert last(server, "delete").json()["propagationPolicy"] == "Background"


def test_class_watch_yields_events(server: FakeAPIServer, config: Config) -> None:
    with config:
        rv = Pod.list().resource_version
        server.create("pods", make_pod("w"), "default")
        events = Pod.watch(resource_version=rv)
        try:
            first = [(t, o.metadata.name) for t, o in itertools.islice(events, 1)]
            assert first == [("ADDED", "w")]
        finally:
            events.close()


def test_deployment_scale_sets_the_replicas(server: FakeAPIServer, config: Config) -> None:
    with config:
        deployment = Deployment.from_dict(make_deployment("api", replicas=1)).create()
        assert deployment.scale(4).spec.replicas == 4
    assert server.get("deployments", "api", "default")["spec"]["replicas"] == 4


def test_an_explicit_client_uses_its_config_not_the_active_one(
    server: FakeAPIServer, config: Config, make_config: Callable[..., Config], tmp_path: Path
) -> None:
    with FakeAPIServer() as other:
        other.create("pods", make_pod("elsewhere"), "default")
        other_config = make_config(kubeconfig=other.write_kubeconfig(tmp_path / "other"))
        with config:
            client = Pod.client(other_config, cached=False)
            assert isinstance(client, ResourceClient) and client.cached is False
            assert [p.metadata.name for p in client.list()] == ["elsewhere"]
            assert Pod.list().items == []


def test_pod_list_without_any_config_uses_kubeconfig_from_the_environment(
    server: FakeAPIServer, kubeconfig: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.create("pods", make_pod("from-env"), "default")
    monkeypatch.setenv("KUBECONFIG", kubeconfig)
    monkeypatch.setattr(_config, "_implicit", None)  # forget a Config discovered by another test
    try:
        assert [p.metadata.name for p in Pod.list()] == ["from-env"]
        assert _config._implicit is not None and _config._implicit.server == server.url
    finally:
        if _config._implicit is not None:
            _config._implicit.close()


def test_pod_list_without_a_scope_uses_the_process_default(server: FakeAPIServer, config: Config) -> None:
    server.create("pods", make_pod("default-config"), "default")
    config.set_default()
    try:
        assert [p.metadata.name for p in Pod.list()] == ["default-config"]
    finally:
        config.close()


def test_a_custom_resource_supports_every_operation(any_server: FakeAPIServer, any_config: Config) -> None:
    any_server.register_resource("example.com", "v1", "Widget", "widgets")
    with any_config:
        created = Widget.from_dict(
            {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 1}}
        ).create()
        assert (created.kind, created.metadata.generation) == ("Widget", 1)
        assert created.spec == {"size": 1}
        assert Widget.get("w1").spec == {"size": 1}
        assert [w.kind for w in Widget.list()] == ["Widget"]
        updated = created.evolve(spec={"size": 2}).update()
        assert (updated.spec, updated.metadata.generation) == ({"size": 2}, 2)
        status = updated.evolve(status={"ready": True}).update_status()
        assert status.status == {"ready": True}
        patched = status.patch({"spec": {"color": "red"}})
        assert patched.spec == {"size": 2, "color": "red"}
        applied = Widget.from_dict(
            {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 3}}
        ).apply(field_manager="me", force=True)  # size is the client's
        assert applied.spec == {"size": 3, "color": "red"}
        assert applied.metadata.managed_fields[0].fields_v1 == {"f:spec": {"f:size": {}}}
        with pytest.raises(APIError) as info:
            applied.patch({"spec": {"size": 4}}, patch_type="strategic")
        assert (info.value.code, info.value.reason) == (415, "UnsupportedMediaType")
        assert Widget.delete("w1").metadata.name == "w1"
        assert Widget.list().items == []
    assert last(any_server, "create").path == "/apis/example.com/v1/namespaces/default/widgets"
