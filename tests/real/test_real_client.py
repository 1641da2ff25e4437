"""The library's client against a real kube-apiserver: CRUD, patch types, apply conflicts, subresources,
optimistic concurrency, and a CRD created at run time informed as a GenericResource."""

from __future__ import annotations

import json
import urllib.request
from typing import Callable

import pytest
from cluster_support import Recorder, names

from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import ResourceConflict, ResourceNotFound, UnprocessableEntity
from cloudcoil_cache.models.kubernetes.apps.v1 import Deployment
from cloudcoil_cache.models.kubernetes.coordination.v1 import Lease, LeaseSpec
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Container, Pod, PodSpec
from cloudcoil_cache.resources import GenericResource
from cloudcoil_cache.testing import RealAPIServer


def pod(name: str, namespace: str) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=PodSpec(
            containers=[Container(name="web", image="nginx:1.27"), Container(name="sidecar", image="envoy:1")]
        ),
    )


def test_create_get_update_delete(namespace: str, live: Config) -> None:
    client = ConfigMap.client(live)
    created = client.create(ConfigMap(metadata=ObjectMeta(name="cm", namespace=namespace), data={"a": "1"}))
    assert created.metadata.uid and created.metadata.resource_version
    with pytest.raises(ResourceConflict) as info:
        client.create(ConfigMap(metadata=ObjectMeta(name="cm", namespace=namespace)))
    assert info.value.reason == "AlreadyExists"
    edited = created.evolve(data={"a": "2"})
    updated = client.update(edited)
    assert updated.data == {"a": "2"} and updated.metadata.resource_version != created.metadata.resource_version
    client.delete("cm", namespace)
    with pytest.raises(ResourceNotFound):
        client.get("cm", namespace)


def test_merge_strategic_and_json_patches(namespace: str, live: Config) -> None:
    client = Pod.client(live)
    client.create(pod("p", namespace))
    merged = client.patch("p", {"metadata": {"labels": {"a": "1"}}}, namespace=namespace)
    assert merged.metadata.labels == {"a": "1"}
    # Strategic merge: containers merge by name (a merge patch would replace the whole list).
    strategic = client.patch(
        "p",
        {"spec": {"containers": [{"name": "web", "image": "nginx:1.28"}]}},
        namespace=namespace,
        patch_type="strategic",
    )
    assert [(c.name, c.image) for c in strategic.spec.containers] == [("web", "nginx:1.28"), ("sidecar", "envoy:1")]
    patched = client.patch(
        "p",
        [
            {"op": "add", "path": "/metadata/labels/b", "value": "2"},
            {"op": "test", "path": "/metadata/labels/a", "value": "1"},
        ],
        namespace=namespace,
        patch_type="json",
    )
    assert patched.metadata.labels == {"a": "1", "b": "2"}
    with pytest.raises(UnprocessableEntity):
        client.patch(
            "p", [{"op": "test", "path": "/metadata/labels/a", "value": "nope"}], namespace=namespace, patch_type="json"
        )
    # A merge patch of the containers list replaces it: the real server refuses the changed pod spec.
    with pytest.raises(UnprocessableEntity):
        client.patch("p", {"spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]}}, namespace=namespace)


def test_server_side_apply_conflict_and_force(namespace: str, live: Config) -> None:
    client = ConfigMap.client(live)
    mine = ConfigMap(metadata=ObjectMeta(name="applied", namespace=namespace), data={"owner": "alice"})
    first = client.apply(mine, field_manager="alice")
    assert first.data == {"owner": "alice"}
    theirs = ConfigMap(metadata=ObjectMeta(name="applied", namespace=namespace), data={"owner": "bob"})
    with pytest.raises(ResourceConflict) as info:
        client.apply(theirs, field_manager="bob")
    assert "alice" in str(info.value) and "data.owner" in str(info.value)
    forced = client.apply(theirs, field_manager="bob", force=True)
    assert forced.data == {"owner": "bob"}
    managers = {m.manager for m in forced.metadata.managed_fields}
    assert "bob" in managers


def test_status_and_scale_subresources(namespace: str, live: Config) -> None:
    client = Deployment.client(live)
    deployment = Deployment.from_dict(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d", "namespace": namespace},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "d"}},
                "template": {
                    "metadata": {"labels": {"app": "d"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                },
            },
        }
    )
    created = client.create(deployment)
    scaled = client.scale("d", 3, namespace)
    assert scaled.spec.replicas == 3
    with_status = scaled.to_dict()
    with_status["status"] = {"replicas": 3, "observedGeneration": scaled.metadata.generation}
    with_status["spec"]["replicas"] = 9  # ignored by the status subresource
    after = client.update_status(Deployment.from_dict(with_status))
    assert after.status.replicas == 3 and after.spec.replicas == 3
    assert created.metadata.generation == 1 and after.metadata.generation == 2


def test_optimistic_concurrency_on_a_lease(namespace: str, live: Config) -> None:
    client = Lease.client(live)
    lease = client.create(
        Lease(
            metadata=ObjectMeta(name="leader", namespace=namespace),
            spec=LeaseSpec(holder_identity="a", lease_duration_seconds=15),
        )
    )
    one, two = client.get("leader", namespace), client.get("leader", namespace)
    client.update(one.evolve(spec=one.spec.evolve(holder_identity="b")))
    with pytest.raises(ResourceConflict) as info:
        client.update(two.evolve(spec=two.spec.evolve(holder_identity="c")))
    assert info.value.reason == "Conflict" and "the object has been modified" in str(info.value)
    assert client.get("leader", namespace).spec.holder_identity == "b"
    with pytest.raises(ResourceConflict):
        client.delete("leader", namespace, preconditions={"resourceVersion": lease.metadata.resource_version})


def _wait_established(real: RealAPIServer, name: str) -> None:
    """Watch the CRD until its Established condition is True (no polling)."""
    request = urllib.request.Request(
        f"{real.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        f"?watch=true&fieldSelector=metadata.name%3D{name}&timeoutSeconds=30",
        headers={"Authorization": f"Bearer {real.tokens['admin']}"},
    )
    with urllib.request.urlopen(request, timeout=35, context=real.ssl_context()) as stream:
        for line in stream:
            conditions = (json.loads(line)["object"].get("status") or {}).get("conditions") or []
            if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                return
    raise AssertionError(f"CRD {name} not established within 30 s")


def test_a_crd_created_at_run_time_is_informed_as_a_generic_resource(
    real: RealAPIServer, namespace: str, make_config: Callable[..., Config], live: Config
) -> None:
    group = "real.cloudcoil.dev"
    status, body = real.request(
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"gadgets.{group}"},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "subresources": {"status": {}},
                        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                    }
                ],
            },
        },
    )
    assert status in (201, 409), body
    _wait_established(real, f"gadgets.{group}")
    Gadget = GenericResource.define(api_version=f"{group}/v1", kind="Gadget", plural="gadgets", namespaced=True)
    client = Gadget.client(live)
    client.create(Gadget(metadata=ObjectMeta(name="g1", namespace=namespace), spec={"size": 1}))
    config = make_config(resources=[Gadget], namespaces=[namespace], mode="strict")
    informer = config.cache.get_informer(Gadget, sync=True)  # type: ignore[union-attr]
    recorder = Recorder()
    recorder.hook(informer)
    with config:
        assert names(Gadget.list(namespace=namespace).items) == {"g1"}
        client.create(Gadget(metadata=ObjectMeta(name="g2", namespace=namespace), spec={"size": 2}))
        client.patch("g1", {"spec": {"size": 10}}, namespace=namespace)
        recorder.wait(lambda ev: "g2" in recorder.names("add") and recorder.count("update") >= 1)
        got = Gadget.get("g1")
        assert got.spec == {"size": 10} and got.metadata.uid
        assert names(Gadget.list(namespace=namespace).items) == {"g1", "g2"}
        # A strategic merge patch is refused for custom resources (415), by the real server too.
        from cloudcoil_cache.errors import APIError

        with pytest.raises(APIError) as info:
            client.patch("g1", {"spec": {"size": 3}}, namespace=namespace, patch_type="strategic")
        assert info.value.code == 415
