"""Live writes over real HTTP: create, update, update_status, patch (4 types), delete and scale."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _client_support import last, pod

from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import BadRequest, ResourceConflict, UnprocessableEntity
from cloudcoil_cache.models.kubernetes.apps.v1 import Deployment
from cloudcoil_cache.models.kubernetes.core.v1 import Namespace, Pod, PodStatus
from cloudcoil_cache.testing import FakeAPIServer, make_deployment


def test_create_posts_the_object_and_returns_the_servers_copy(server: FakeAPIServer, config: Config) -> None:
    created = Pod.client(config).create(pod("web"))
    assert created.metadata.uid and created.metadata.resource_version == str(server.revision)
    assert created.metadata.namespace == "default"
    request = last(server, "create")
    assert (request.path, request.headers["Content-Type"]) == ("/api/v1/namespaces/default/pods", "application/json")
    assert server.get("pods", "web", "default")["metadata"]["uid"] == created.metadata.uid


def test_create_labels_are_added_to_what_is_sent_never_to_the_callers_object(
    server: FakeAPIServer, config: Config
) -> None:
    asked: list[Any] = []

    def labels(obj: Any) -> dict[str, str]:
        asked.append(obj)
        return {"shard": "r1", "app": "from-the-hook"}

    config.create_labels = labels
    mine = pod("web")
    mine.metadata.labels = {"app": "mine"}
    created = Pod.client(config).create(mine)
    assert asked == [mine]
    assert created.metadata.labels == {"shard": "r1", "app": "mine"}  # the caller's own labels win
    assert server.get("pods", "web", "default")["metadata"]["labels"] == {"shard": "r1", "app": "mine"}
    assert mine.metadata.labels == {"app": "mine"}  # the caller's object is left as it was
    config.create_labels = lambda obj: None
    assert Pod.client(config).create(pod("db")).metadata.labels is None


def test_create_with_generate_name_gets_a_generated_name(config: Config) -> None:
    created = Pod.client(config).create(pod(None, generate_name="web-"))  # type: ignore[arg-type]
    assert created.metadata.name.startswith("web-") and len(created.metadata.name) == 9


def test_the_server_answers_a_create_with_201(config: Config) -> None:
    response = config.transport.request(
        "POST",
        "/api/v1/namespaces/default/pods",
        body=json.dumps(pod("web").to_dict()).encode(),
        content_type="application/json",
    )
    assert response.status_code == 201


def test_create_of_an_existing_name_raises_conflict(config: Config) -> None:
    client = Pod.client(config)
    client.create(pod("web"))
    with pytest.raises(ResourceConflict) as info:
        client.create(pod("web"))
    assert info.value.reason == "AlreadyExists"


def test_create_with_dry_run_and_field_manager_sends_both_parameters(server: FakeAPIServer, config: Config) -> None:
    revision = server.revision
    result = Pod.client(config).create(pod("web"), dry_run=True, field_manager="tests")
    assert last(server, "create").query == {"dryRun": "All", "fieldManager": "tests"}
    assert result.metadata.uid and result.metadata.resource_version is None
    assert (server.list("pods", "default"), server.revision) == ([], revision)


@pytest.mark.parametrize("operation", ["update", "patch", "delete"])
def test_a_dry_run_write_changes_nothing_on_the_server(server: FakeAPIServer, config: Config, operation: str) -> None:
    client = Pod.client(config)
    created = client.create(pod("web"))
    labelled = created.evolve(metadata=created.metadata.evolve(labels={"dry": "run"}))
    if operation == "update":
        result = client.update(labelled, dry_run=True)
    elif operation == "patch":
        result = client.patch("web", {"metadata": {"labels": {"dry": "run"}}}, dry_run=True)
    else:
        result = client.delete("web", dry_run=True)
    assert result.metadata.resource_version == created.metadata.resource_version
    stored = server.get("pods", "web", "default")
    assert stored["metadata"].get("labels") is None
    assert server.revision == int(created.metadata.resource_version)


def test_update_replaces_the_object(server: FakeAPIServer, config: Config) -> None:
    client = Pod.client(config)
    created = client.create(pod("web"))
    changed = created.evolve(metadata=created.metadata.evolve(labels={"v": "2"}))
    updated = client.update(changed)
    assert updated.metadata.labels == {"v": "2"}
    assert int(updated.metadata.resource_version) > int(created.metadata.resource_version)
    assert last(server, "update").method == "PUT"


def test_update_with_a_stale_resource_version_raises_conflict(server: FakeAPIServer, config: Config) -> None:
    client = Pod.client(config)
    created = client.create(pod("web"))
    server.patch("pods", "web", {"metadata": {"labels": {"other": "writer"}}}, "default")
    with pytest.raises(ResourceConflict) as info:
        client.update(created.evolve(metadata=created.metadata.evolve(labels={"v": "2"})))
    assert info.value.reason == "Conflict"
    assert "the object has been modified" in info.value.message


def test_update_status_changes_only_the_status(server: FakeAPIServer, config: Config) -> None:
    client = Pod.client(config)
    created = client.create(pod("web"))
    edited = created.evolve(
        status=PodStatus(phase="Running"), metadata=created.metadata.evolve(labels={"ignored": "yes"})
    )
    result = client.update_status(edited)
    assert result.status.phase == "Running" and result.metadata.labels is None
    assert last(server, "update").path.endswith("/pods/web/status")


def test_update_of_the_main_resource_keeps_the_stored_status(config: Config) -> None:
    client = Pod.client(config)
    created = client.create(pod("web"))
    client.update_status(created.evolve(status=PodStatus(phase="Running")))
    latest = client.get("web")
    result = client.update(latest.evolve(status=PodStatus(phase="Failed")))
    assert result.status.phase == "Running"


@pytest.mark.parametrize(
    "patch_type, patch, content_type",
    [
        ("merge", {"metadata": {"labels": {"a": "1"}}}, "application/merge-patch+json"),
        ("json", [{"op": "add", "path": "/metadata/labels", "value": {"a": "1"}}], "application/json-patch+json"),
        ("strategic", {"metadata": {"labels": {"a": "1"}}}, "application/strategic-merge-patch+json"),
        (
            "apply",
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"a": "1"}}},
            "application/apply-patch+yaml",
        ),
    ],
    ids=["merge", "json", "strategic", "apply"],
)
def test_patch_sends_the_content_type_of_its_patch_type(
    server: FakeAPIServer, config: Config, patch_type: str, patch: Any, content_type: str
) -> None:
    client = Pod.client(config)
    client.create(pod("web"))
    result = client.patch("web", patch, patch_type=patch_type, field_manager="tests")
    assert result.metadata.labels == {"a": "1"}
    request = last(server, "patch")
    assert request.headers["Content-Type"] == content_type
    assert request.json() == patch


def test_a_strategic_patch_merges_containers_by_name(config: Config) -> None:
    client = Pod.client(config)
    client.create(pod("web"))
    result = client.patch(
        "web", {"spec": {"containers": [{"name": "web", "image": "envoy:1"}]}}, patch_type="strategic"
    )
    assert [(c.name, c.image) for c in result.spec.containers] == [("web", "envoy:1")]


def test_a_merge_patch_replacing_a_pods_containers_is_refused(config: Config) -> None:
    client = Pod.client(config)
    client.create(pod("web"))
    # The list is replaced, which a pod's immutable spec refuses (as on a real server).
    with pytest.raises(UnprocessableEntity, match="pod updates may not change fields"):
        client.patch("web", {"spec": {"containers": [{"name": "sidecar", "image": "envoy"}]}})


def test_apply_records_a_managed_fields_entry_for_its_field_manager(server: FakeAPIServer, config: Config) -> None:
    client = Pod.client(config)
    applied = client.apply(pod("web", labels={"app": "web"}), field_manager="deployer")
    entries = applied.metadata.managed_fields
    assert [(e.manager, e.operation, e.api_version, e.fields_type) for e in entries] == [
        ("deployer", "Apply", "v1", "FieldsV1")
    ]
    assert entries[0].fields_v1["f:metadata"] == {"f:labels": {"f:app": {}}}
    assert entries[0].fields_v1["f:spec"]["f:containers"]['k:{"name":"web"}'] == {".": {}, "f:image": {}, "f:name": {}}
    assert last(server, "patch").query == {"fieldManager": "deployer"}


def test_apply_twice_keeps_one_entry_per_manager_and_merges(config: Config) -> None:
    client = Pod.client(config)
    client.apply(pod("web", labels={"app": "web"}), field_manager="one")
    client.apply(pod("web", labels={"team": "a"}), field_manager="two")
    again = client.apply(pod("web", labels={"app": "web2"}), field_manager="one", force=True)
    assert again.metadata.labels == {"app": "web2", "team": "a"}
    assert sorted(e.manager for e in again.metadata.managed_fields) == ["one", "two"]


def test_an_object_read_from_the_server_can_be_applied_again(server: FakeAPIServer, config: Config) -> None:
    client = Pod.client(config)
    client.apply(pod("web", labels={"app": "web"}), field_manager="one")
    fetched = client.get("web")
    assert fetched.metadata.managed_fields
    again = client.apply(fetched.evolve(metadata=fetched.metadata.evolve(labels={"app": "v2"})), field_manager="one")
    assert again.metadata.labels == {"app": "v2"}
    assert "managedFields" not in last(server, "patch").json()["metadata"]


def test_the_server_refuses_an_applied_configuration_with_managed_fields(config: Config) -> None:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "managedFields": [{"manager": "x"}]}}
    with pytest.raises(BadRequest, match="metadata.managedFields must be nil"):
        Pod.client(config).patch("web", body, patch_type="apply", field_manager="tests")


def test_patch_with_an_unknown_type_is_a_value_error(config: Config) -> None:
    with pytest.raises(ValueError, match="patch_type 'yaml'"):
        Pod.client(config).patch("web", {}, patch_type="yaml")


def test_apply_without_a_field_manager_is_refused_by_the_server(config: Config) -> None:
    body = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}}).encode()
    with pytest.raises(UnprocessableEntity) as info:
        config.transport.request(
            "PATCH", "/api/v1/namespaces/default/pods/web", body=body, content_type="application/apply-patch+yaml"
        )
    assert info.value.message == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    )


def test_delete_returns_the_deleted_object(server: FakeAPIServer, config: Config) -> None:
    client = Pod.client(config)
    created = client.create(pod("web"))
    deleted = client.delete("web")
    assert isinstance(deleted, Pod) and deleted.metadata.uid == created.metadata.uid
    assert server.list("pods", "default") == []


@pytest.mark.parametrize("policy", ["Foreground", "Background", "Orphan"])
def test_delete_sends_the_propagation_policy_and_grace_period(
    server: FakeAPIServer, config: Config, policy: str
) -> None:
    client = Pod.client(config)
    client.create(pod("web"))
    client.delete("web", propagation_policy=policy, grace_period_seconds=0)
    assert last(server, "delete").json() == {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "propagationPolicy": policy,
        "gracePeriodSeconds": 0,
    }


def test_delete_with_a_wrong_uid_precondition_raises_conflict_and_keeps_the_object(
    server: FakeAPIServer, config: Config
) -> None:
    client = Pod.client(config)
    created = client.create(pod("web"))
    with pytest.raises(ResourceConflict) as info:
        client.delete("web", preconditions={"uid": "not-the-uid"})
    assert info.value.message == (
        f"Precondition failed: UID in precondition: not-the-uid, UID in object meta: {created.metadata.uid}"
    )
    assert server.get("pods", "web", "default")["metadata"]["uid"] == created.metadata.uid
    exact = {"uid": created.metadata.uid, "resourceVersion": created.metadata.resource_version}
    assert client.delete("web", preconditions=exact)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"propagation_policy": "Sometimes"}, "propagation_policy 'Sometimes'"),
        ({"preconditions": {"name": "x"}}, "preconditions: unknown keys"),
    ],
    ids=["bad-policy", "bad-precondition"],
)
def test_delete_rejects_bad_options_before_any_request(
    server: FakeAPIServer, config: Config, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Pod.client(config).delete("web", **kwargs)
    assert not [r for r in server.requests if r.verb == "delete"]


def test_scale_sets_the_replicas_through_the_scale_subresource(server: FakeAPIServer, config: Config) -> None:
    client = Deployment.client(config)
    client.create(Deployment.from_dict(make_deployment("api", replicas=2)))
    scaled = client.scale("api", 5)
    assert isinstance(scaled, Deployment) and scaled.spec.replicas == 5
    request = last(server, "patch")
    assert request.path == "/apis/apps/v1/namespaces/default/deployments/api/scale"
    assert request.json() == {"spec": {"replicas": 5}}


@pytest.mark.parametrize("replicas", [-1, 1.5, True], ids=["negative", "float", "bool"])
def test_scale_rejects_a_replica_count_that_is_not_a_natural_number(config: Config, replicas: Any) -> None:
    with pytest.raises(ValueError, match="replicas must be an integer >= 0"):
        Deployment.client(config).scale("api", replicas)


def test_writes_of_a_cluster_scoped_kind_use_no_namespace(server: FakeAPIServer, config: Config) -> None:
    client = Namespace.client(config)
    created = client.create(Namespace(metadata=ObjectMeta(name="team-z")))
    assert created.metadata.namespace is None
    assert last(server, "create").path == "/api/v1/namespaces"
    assert client.delete("team-z").metadata.name == "team-z"
