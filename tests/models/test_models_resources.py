"""Resources: keyword construction, metadata shortcuts, GenericResource, ResourceList, errors."""

from __future__ import annotations

import pytest
from _model_corpus import load

from cloudcoil_cache import models, resources
from cloudcoil_cache.apimachinery import ListMeta, ObjectMeta
from cloudcoil_cache.errors import DecodeError, ReadOnlyError
from cloudcoil_cache.models import ResourceList
from cloudcoil_cache.models.kubernetes.coordination.v1 import Lease
from cloudcoil_cache.models.kubernetes.core.v1 import Container, Pod, PodSpec
from cloudcoil_cache.resources import GenericResource


def test_resources_are_built_with_keywords_as_in_the_docs() -> None:
    pod = Pod(
        metadata=ObjectMeta(name="web", namespace="default"),
        spec=PodSpec(containers=[Container(name="web", image="nginx")]),
    )
    assert pod.to_dict() == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [{"name": "web", "image": "nginx"}]},
    }
    assert (pod.api_version, pod.kind) == ("v1", "Pod")
    assert Pod.from_dict(pod.to_dict()) == pod


def test_api_version_and_kind_keywords_are_accepted_as_in_cloudcoil() -> None:
    pod = Pod(api_version="v1", kind="Pod", metadata=ObjectMeta(name="web"))
    assert pod == Pod(metadata=ObjectMeta(name="web"))
    assert pod.to_dict() == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}}
    assert GenericResource(spec={"a": 1}).to_dict() == {"spec": {"a": 1}}
    odd = GenericResource(api_version="example.com/v2", kind="Thing", spec={"a": 1})
    assert odd.to_dict() == {"apiVersion": "example.com/v2", "kind": "Thing", "spec": {"a": 1}}


def test_positional_arguments_are_refused() -> None:
    with pytest.raises(TypeError):
        Container("web")  # type: ignore[misc]


def test_metadata_shortcuts_read_through_metadata() -> None:
    pod = Pod.from_dict(load("pod"))
    assert (pod.name, pod.namespace, pod.resource_version, pod.uid) == (
        "web-7d4b9c8f6-x2k9p",
        "default",
        "184467",
        "5f1c2a3e-8d4b-4c1a-9e2f-7a6b5c4d3e21",
    )
    empty = Pod()
    assert (empty.name, empty.namespace, empty.resource_version, empty.uid) == (
        None,
        None,
        None,
        None,
    )


def test_lease_lives_in_coordination_v1() -> None:
    lease = Lease.from_dict_sealed(load("lease"))
    assert lease.spec.lease_duration_seconds == 15
    assert Lease.plural == "leases" and Lease.api_version == "coordination.k8s.io/v1"


BAD_INPUT = [
    ("not an object", "pods", "Pod expects a JSON object"),
    ("model field given a string", {"spec": "oops"}, "Pod.spec expects an object, got str"),
    (
        "list field given a dict",
        {"spec": {"containers": {"name": "x"}}},
        "PodSpec.containers expects a list",
    ),
    ("list item not an object", {"spec": {"containers": ["x"]}}, "Container expects a JSON object"),
    (
        "map of models given a list",
        {"spec": {"overhead": ["x"]}},
        "PodSpec.overhead expects an object",
    ),
    ("bad time", {"metadata": {"creationTimestamp": "yesterday"}}, "not a Kubernetes Time"),
    (
        "time not a string",
        {"metadata": {"creationTimestamp": 5}},
        "creation_timestamp expects a date-time",
    ),
]


@pytest.mark.parametrize(("data", "message"), [b[1:] for b in BAD_INPUT], ids=[b[0] for b in BAD_INPUT])
@pytest.mark.parametrize("sealed", [False, True], ids=["editable", "sealed"])
def test_malformed_wire_data_raises_decode_error_naming_the_problem(data, message, sealed) -> None:
    with pytest.raises(DecodeError, match=message) as info:
        Pod.from_dict_sealed(data) if sealed else Pod.from_dict(data)
    assert info.value.__cause__ is not None
    assert "cannot decode Pod" in str(info.value)


def test_decode_errors_never_show_the_offending_value() -> None:
    from cloudcoil_cache.models.kubernetes.core.v1 import Secret

    with pytest.raises(DecodeError) as info:
        Secret.from_dict({"data": "c3VwZXItc2VjcmV0LXBhc3N3b3Jk"})
    assert "c3VwZXItc2VjcmV0" not in str(info.value)
    assert "Secret.data expects an object, got str" in str(info.value)


def test_to_dict_of_a_badly_built_object_raises_type_error() -> None:
    with pytest.raises(TypeError, match=r"Pod\.spec: expected PodSpec or dict, got str"):
        Pod(spec="oops")  # type: ignore[arg-type]
    pod = Pod()
    pod.spec = "oops"  # type: ignore[assignment]  # attribute assignment is not checked
    with pytest.raises(TypeError, match="cannot convert Pod to its wire form"):
        pod.to_dict()


# -- GenericResource ----------------------------------------------------------------------------


def test_generic_resource_define_makes_a_registered_resource_class() -> None:
    widget_cls = GenericResource.define(api_version="example.com/v1", kind="Widget", plural="widgets", namespaced=True)
    assert issubclass(widget_cls, models.Resource) and issubclass(widget_cls, GenericResource)
    assert (
        widget_cls.api_version,
        widget_cls.kind,
        widget_cls.plural,
        widget_cls.namespaced,
        widget_cls.group,
        widget_cls.version,
    ) == ("example.com/v1", "Widget", "widgets", True, "example.com", "v1")
    assert resources.resource_class_for("example.com/v1", "Widget") is widget_cls
    assert (
        GenericResource.define(api_version="example.com/v1", kind="Widget", plural="widgets", namespaced=True)
        is widget_cls
    )
    wire = load("widget")
    widget = widget_cls.from_dict_sealed(wire)
    assert widget.name == "blue" and widget.spec["nested"]["deep"]["list"][0] == {"a": 1}
    assert widget.to_dict() == wire
    with pytest.raises(ReadOnlyError):
        widget.spec["size"] = 4
    with pytest.raises(ReadOnlyError):
        widget.spec["nested"]["deep"]["list"].append(1)


def test_the_undeclared_generic_resource_keeps_any_object_whole() -> None:
    wire = {"apiVersion": "a.example.com/v1", "kind": "K", "metadata": {"name": "x"}, "data": {"y": 1}}
    obj = GenericResource.from_dict_sealed(wire)
    assert obj.name == "x" and obj.to_dict() == wire


def test_generic_resource_define_refuses_a_conflicting_redefinition() -> None:
    GenericResource.define(api_version="example.com/v1", kind="Gizmo", plural="gizmos", namespaced=True)
    with pytest.raises(ValueError, match="already defined with plural='gizmos'"):
        GenericResource.define(api_version="example.com/v1", kind="Gizmo", plural="gizmoes", namespaced=True)


def test_generic_resource_can_be_subclassed_with_class_keywords() -> None:
    class Gadget(
        GenericResource,
        api_version="tools.example.com/v1alpha1",
        kind="Gadget",
        plural="gadgets",
        namespaced=False,
    ):
        pass

    gadget = Gadget(metadata=ObjectMeta(name="g1"), spec={"level": 3})
    assert gadget.to_dict() == {
        "apiVersion": "tools.example.com/v1alpha1",
        "kind": "Gadget",
        "metadata": {"name": "g1"},
        "spec": {"level": 3},
    }
    assert Gadget.namespaced is False and Gadget.group == "tools.example.com"
    assert resources.resource_class_for("tools.example.com/v1alpha1", "Gadget") is Gadget
    with pytest.raises(AttributeError):
        gadget.sepc = {}  # type: ignore[attr-defined]
    sealed = Gadget.from_dict_sealed(gadget.to_dict())
    assert models.is_sealed(sealed) and isinstance(sealed, Gadget) and sealed == gadget
    with pytest.raises(ReadOnlyError):
        sealed.spec = None


BAD_DEFINITIONS = [
    (
        "empty kind",
        dict(api_version="example.com/v1", kind="", plural="xs", namespaced=True),
        ValueError,
    ),
    (
        "spaces",
        dict(api_version="example.com/v1", kind="X", plural="x s", namespaced=True),
        ValueError,
    ),
    (
        "namespaced not bool",
        dict(api_version="example.com/v1", kind="X", plural="xs", namespaced="yes"),
        TypeError,
    ),
]


@pytest.mark.parametrize(("kwargs", "error"), [b[1:] for b in BAD_DEFINITIONS], ids=[b[0] for b in BAD_DEFINITIONS])
def test_generic_resource_define_rejects_bad_metadata(kwargs, error) -> None:
    with pytest.raises(error):
        GenericResource.define(**kwargs)


def test_subclassing_with_only_some_metadata_is_an_error() -> None:
    with pytest.raises(TypeError, match="needs api_version, kind, plural and namespaced"):

        class Half(GenericResource, api_version="example.com/v1", kind="Half"):  # type: ignore[call-arg]
            pass


def test_a_defined_custom_class_takes_precedence_over_a_generated_one() -> None:
    custom = GenericResource.define(
        api_version="node.k8s.io/v1", kind="RuntimeClass", plural="runtimeclasses", namespaced=False
    )
    from cloudcoil_cache.models.kubernetes.node import v1 as node_v1

    assert node_v1.RuntimeClass is not custom
    assert resources.resource_class_for("node.k8s.io/v1", "RuntimeClass") is custom


def test_resources_module_exports() -> None:
    assert sorted(resources.__all__) == [
        "GVK",
        "GenericResource",
        "Model",
        "Resource",
        "ResourceList",
        "Unstructured",
        "get_dynamic_resource",
        "get_model",
        "parse",
        "parse_file",
        "resource_class_for",
    ]


# -- ResourceList -------------------------------------------------------------------------------


@pytest.mark.parametrize("sealed", [False, True], ids=["editable", "sealed"])
def test_resource_list_structures_items_that_lack_kind_and_api_version(sealed: bool) -> None:
    body = load("pod_list")
    assert all("kind" not in item for item in body["items"])
    pods = ResourceList.from_response(body, Pod, sealed=sealed)
    assert len(pods.items) == 2 and [p.name for p in pods] == ["a", "b"]
    assert len(pods) == 5  # cloudcoil's len(): this page plus remainingItemCount
    assert all(type(p).__name__ == "Pod" and isinstance(p, Pod) for p in pods)
    assert all(models.is_sealed(p) is sealed for p in pods)
    assert pods.resource_version == "184500" and pods.continue_ == body["metadata"]["continue"]
    assert pods.metadata == ListMeta(
        resource_version="184500", continue_=body["metadata"]["continue"], remaining_item_count=3
    )
    out = pods.to_dict()
    assert out["items"][0] == {"apiVersion": "v1", "kind": "Pod", **body["items"][0]}
    assert (out["kind"], out["apiVersion"], out["metadata"]) == ("PodList", "v1", body["metadata"])


def test_sealed_resource_list_items_cannot_be_replaced() -> None:
    pods = ResourceList.from_response(load("pod_list"), Pod, sealed=True)
    with pytest.raises(ReadOnlyError):
        pods.items.append(Pod())


def test_an_empty_list_response_gives_an_empty_list() -> None:
    pods = ResourceList.from_response(
        {
            "kind": "PodList",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": "5"},
            "items": None,
        },
        Pod,
    )
    assert len(pods) == 0 and list(pods) == [] and pods.resource_version == "5"


@pytest.mark.parametrize("body", ["[]", {"items": "x"}], ids=["not an object", "items not a list"])
def test_a_malformed_list_response_raises_decode_error(body) -> None:
    with pytest.raises(DecodeError):
        ResourceList.from_response(body, Pod)


def test_models_package_exports() -> None:
    assert set(models.__all__) >= {
        "Model",
        "Resource",
        "ResourceList",
        "structure",
        "unstructure",
        "structure_sealed",
        "is_sealed",
        "converter",
    }
    for name in models.__all__:
        assert getattr(models, name) is not None
    # the models are data: the verbs come with the kinds' base above the client
    assert not hasattr(models.Resource, "get") and not hasattr(models.Resource, "save")
    assert issubclass(resources.Resource, models.Resource) and hasattr(resources.Resource, "get")


def test_a_data_only_kind_is_not_registered_and_shadows_no_kind(tmp_path) -> None:
    class DataOnlyConfigMap(models.Resource):  # the models' base: data, no verbs
        api_version = "v1"
        kind = "ConfigMap"

    from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap

    assert resources.resource_class_for("v1", "ConfigMap") is ConfigMap
    assert type(resources.parse({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})) is ConfigMap
    assert DataOnlyConfigMap.kind == "ConfigMap" and not hasattr(DataOnlyConfigMap, "save")


def test_from_file_on_a_class_of_no_kind_says_what_to_call(tmp_path) -> None:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n")
    for cls in (resources.Resource, GenericResource):
        with pytest.raises(TypeError, match=r"stands for no kind; call from_file on the class .*parse_file"):
            cls.from_file(manifest)
    unstructured = resources.Unstructured.from_file(manifest)  # any kind, as plain content
    assert type(unstructured) is resources.Unstructured and unstructured["kind"] == "Pod"
