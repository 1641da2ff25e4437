"""Keyword construction converts dicts (and lists/dicts of dicts) to the nested models (issue 9, gap 2)."""

from __future__ import annotations

import datetime

import pytest

from cloudcoil_cache.errors import ReadOnlyError
from cloudcoil_cache.models.apimachinery import ObjectMeta, OwnerReference
from cloudcoil_cache.models.kubernetes.apiextensions.v1 import CustomResourceDefinitionSpec, JSONSchemaProps
from cloudcoil_cache.models.kubernetes.core.v1 import (
    ConfigMap,
    ConfigMapList,
    Container,
    ContainerPort,
    Pod,
    PodSpec,
)
from cloudcoil_cache.resources import GenericResource


def test_configmap_metadata_given_as_a_dict_is_an_object_meta() -> None:
    cm = ConfigMap(metadata=dict(name="a", namespace="b"), data={"k": "v"})
    assert type(cm.metadata) is ObjectMeta
    assert (cm.name, cm.namespace) == ("a", "b")
    assert cm.data == {"k": "v"}
    assert cm.to_dict() == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a", "namespace": "b"},
        "data": {"k": "v"},
    }


def test_nested_models_and_lists_of_models_from_dicts_equal_typed_construction() -> None:
    from_dicts = Pod(
        metadata=dict(name="web", labels={"app": "web"}),
        spec=dict(containers=[dict(name="web", image="nginx", ports=[dict(container_port=80)])]),
    )
    typed = Pod(
        metadata=ObjectMeta(name="web", labels={"app": "web"}),
        spec=PodSpec(containers=[Container(name="web", image="nginx", ports=[ContainerPort(container_port=80)])]),
    )
    assert type(from_dicts.spec) is PodSpec
    assert [type(c) for c in from_dicts.spec.containers] == [Container]
    assert type(from_dicts.spec.containers[0].ports[0]) is ContainerPort
    assert from_dicts == typed
    assert from_dicts.to_dict() == typed.to_dict()


def test_dict_keys_may_be_wire_names() -> None:
    pod = Pod(
        metadata={"name": "a", "generateName": "a-", "resourceVersion": "7"},
        spec={"restartPolicy": "Never", "containers": [{"name": "c", "imagePullPolicy": "Always"}]},
    )
    assert pod.metadata.generate_name == "a-"
    assert pod.resource_version == "7"
    assert pod.spec.restart_policy == "Never"
    assert pod.spec.containers[0].image_pull_policy == "Always"
    # A special wire name ("$ref") and a dict of models.
    props = JSONSchemaProps(type="object", properties={"size": {"type": "integer"}, "ref": {"$ref": "#/x"}})
    assert type(props.properties["size"]) is JSONSchemaProps
    assert props.properties["size"].type == "integer"
    assert props.properties["ref"].to_dict() == {"$ref": "#/x"}


def test_deeply_nested_dicts_of_models() -> None:
    spec = CustomResourceDefinitionSpec(
        versions=[
            dict(
                name="v1",
                schema=dict(
                    open_apiv3_schema=dict(
                        type="object",
                        properties=dict(spec=dict(type="object", properties=dict(size=dict(type="integer")))),
                    )
                ),
            )
        ]
    )
    inner = spec.versions[0].schema.open_apiv3_schema.properties["spec"].properties["size"]
    assert type(inner) is JSONSchemaProps and inner.type == "integer"


def test_times_given_as_strings_are_parsed() -> None:
    meta = ObjectMeta(creation_timestamp="2024-05-01T10:00:00Z")
    assert meta.creation_timestamp == datetime.datetime(2024, 5, 1, 10, tzinfo=datetime.timezone.utc)
    pod = Pod(metadata=dict(creationTimestamp="2024-05-01T10:00:00Z"))
    assert pod.to_dict()["metadata"] == {"creationTimestamp": "2024-05-01T10:00:00Z"}


def test_nested_resources_take_api_version_and_kind_keys() -> None:
    lst = ConfigMapList(
        items=[dict(apiVersion="v1", kind="ConfigMap", metadata=dict(name="a"))], metadata=dict(resource_version="5")
    )
    assert type(lst.items[0]) is ConfigMap and lst.items[0].name == "a"
    assert lst.items[0].to_dict() == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
    # A non-resource model with an api_version field keeps it as a field.
    owner = Pod(metadata=dict(owner_references=[dict(apiVersion="apps/v1", kind="ReplicaSet", name="rs", uid="u1")]))
    assert type(owner.metadata.owner_references[0]) is OwnerReference
    assert owner.metadata.owner_references[0].api_version == "apps/v1"


def test_models_given_as_models_are_kept_as_they_are() -> None:
    meta = ObjectMeta(name="a")
    containers = [Container(name="c")]
    pod = Pod(metadata=meta, spec=PodSpec(containers=containers))
    assert pod.metadata is meta
    assert pod.spec.containers is containers  # nothing to convert: the caller's list is kept
    mixed = [Container(name="c"), dict(name="d")]
    spec = PodSpec(containers=mixed)
    assert spec.containers is not mixed and spec.containers[0] is mixed[0]
    assert type(spec.containers[1]) is Container


def test_tuples_become_lists_and_none_stays_none() -> None:
    spec = PodSpec(containers=(dict(name="a"),), init_containers=None)
    assert spec.containers == [Container(name="a")] and type(spec.containers) is list
    assert spec.init_containers is None
    assert Pod(metadata=None).metadata is None


def test_sealed_objects_are_accepted_as_nested_models() -> None:
    sealed = Pod.from_dict_sealed({"metadata": {"name": "a"}})
    pod = Pod(metadata=sealed.metadata)
    assert pod.metadata is sealed.metadata
    with pytest.raises(ReadOnlyError):
        pod.metadata.name = "b"


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(spec=dict(containers=[5])), TypeError, "Pod.spec.containers[0]: expected Container or dict, got int"),
        (
            dict(spec=dict(containers=5)),
            TypeError,
            "Pod.spec.containers: expected a list of Container or dict, got int",
        ),
        (dict(spec=7), TypeError, "Pod.spec: expected PodSpec or dict, got int"),
        (dict(spec=ObjectMeta()), TypeError, "Pod.spec: expected PodSpec or dict, got ObjectMeta"),
        (dict(metadata=dict(nmae="x")), TypeError, "Pod.metadata: ObjectMeta has no field 'nmae'"),
        (
            dict(metadata=dict(name="a", creation_timestamp="yesterday")),
            ValueError,
            "Pod.metadata.creation_timestamp: not a Kubernetes Time",
        ),
        (
            dict(metadata=dict(creation_timestamp=5)),
            TypeError,
            "Pod.metadata.creation_timestamp: expected a datetime or an RFC 3339 string, got int",
        ),
        (
            dict(spec=dict(containers=[dict(name="c", resources=dict(claims=[dict(name="x"), "y"]))])),
            TypeError,
            "Pod.spec.containers[0].resources.claims[1]: expected ResourceClaim or dict, got str",
        ),
        (
            dict(metadata=dict(name="a", generateName="b", generate_name="c")),
            TypeError,
            "Pod.metadata: field 'generate_name' given twice",
        ),
    ],
)
def test_a_value_that_does_not_fit_names_the_field_path(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        Pod(**kwargs)
    assert str(info.value).startswith(message), str(info.value)


def test_dict_of_models_errors_name_the_key() -> None:
    with pytest.raises(
        TypeError,
        match=r"JSONSchemaProps\.properties\['size'\]: expected JSONSchemaProps or dict, "
        r"got int",
    ):
        JSONSchemaProps(properties={"size": 3})
    with pytest.raises(TypeError, match=r"JSONSchemaProps\.properties: expected a dict of JSONSchemaProps"):
        JSONSchemaProps(properties=[1])


def test_secret_values_are_never_shown_in_errors() -> None:
    with pytest.raises(TypeError) as info:
        Pod(spec=dict(containers=["s3cr3t-value"]))
    assert "s3cr3t" not in str(info.value)


def test_evolve_converts_dicts_too() -> None:
    pod = Pod(metadata=dict(name="a"))
    changed = pod.evolve(metadata=dict(name="b"), spec=dict(containers=[dict(name="c")]))
    assert type(changed.metadata) is ObjectMeta and changed.name == "b"
    assert type(changed.spec.containers[0]) is Container
    assert pod.name == "a"
    with pytest.raises(TypeError, match="Pod.spec: expected PodSpec or dict, got int"):
        pod.evolve(spec=1)


def test_resources_still_take_api_version_and_kind_keywords() -> None:
    assert ConfigMap(api_version="v1", kind="ConfigMap").to_dict() == {"apiVersion": "v1", "kind": "ConfigMap"}
    odd = ConfigMap(api_version="v2", metadata=dict(name="a"))
    assert odd.to_dict()["apiVersion"] == "v2"


def test_generic_resources_convert_metadata_and_keep_spec_free_form() -> None:
    widget_cls = GenericResource.define(
        api_version="example.com/v1", kind="FromDictWidget", plural="fromdictwidgets", namespaced=True
    )
    w = widget_cls(metadata=dict(name="w", namespace="ns"), spec={"size": 3, "nested": {"a": [1]}})
    assert type(w.metadata) is ObjectMeta and (w.name, w.namespace) == ("w", "ns")
    assert w.spec == {"size": 3, "nested": {"a": [1]}}
    assert w.to_dict() == {
        "apiVersion": "example.com/v1",
        "kind": "FromDictWidget",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"size": 3, "nested": {"a": [1]}},
    }
    with pytest.raises(TypeError, match="FromDictWidget.metadata: expected ObjectMeta or dict, got list"):
        widget_cls(metadata=["w"])

    class Gadget(
        GenericResource, api_version="example.com/v1", kind="FromDictGadget", plural="fromdictgadgets", namespaced=False
    ):
        pass

    assert type(Gadget(metadata=dict(name="g")).metadata) is ObjectMeta


def test_construction_signature_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        ObjectMeta("a")  # type: ignore[misc]
    with pytest.raises(TypeError, match="unexpected keyword"):
        ObjectMeta(nmae="a")  # type: ignore[call-arg]
