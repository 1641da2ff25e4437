"""cloudcoil's fluent builders on every model: ``Kind.builder()``, ``with Kind.new()``, list builders, Quantity."""

from __future__ import annotations

import pickle

import pytest

from cloudcoil_cache.apimachinery import APIResource, APIResourceList, ObjectMeta, Quantity
from cloudcoil_cache.models import Model, Resource
from cloudcoil_cache.models.kubernetes.core.v1 import Container, Pod, PodSpec


def _pods_resource(b: APIResource.Builder) -> APIResource.Builder:
    return b.name("pods").kind("Pod").namespaced(True).singular_name("pod").verbs(["get", "list"])


def _services_resource(b: APIResource.Builder) -> APIResource.Builder:
    return b.name("services").kind("Service").namespaced(True).singular_name("service").verbs(["get"])


# -- Quantity -----------------------------------------------------------------------------------


def test_quantity_built_in_a_with_block_has_its_text_as_root() -> None:
    with Quantity.new() as q:
        q.root("250m")
    built = q.build()
    assert isinstance(built, Quantity)
    assert built.root == "250m" and type(built.root) is str
    assert Quantity.builder().root("1Gi").build() == "1Gi"
    assert Quantity.builder()("2").build().root == "2"


def test_quantity_is_a_string_that_checks_the_kubernetes_grammar() -> None:
    for text in ("1", "500m", "1.5", ".5", "-2", "1Gi", "3Ei", "2k", "1e3", "1E-2", "7E"):
        assert Quantity(text) == text and str(Quantity(text)) == text
    assert Quantity(2) == "2" and Quantity(0.5) == "0.5" and Quantity(root="1Mi") == "1Mi"
    assert repr(Quantity("1")) == "Quantity('1')"
    assert Quantity.model_validate("3").model_dump() == "3" and Quantity("3").model_dump_json() == '"3"'
    assert pickle.loads(pickle.dumps(Quantity("4Ki"))) == Quantity("4Ki")
    for bad in ("", "1 Gi", "Gi", "1gi", "1e", "nan", "1.2.3"):
        with pytest.raises(ValueError, match="not a Kubernetes quantity"):
            Quantity(bad)
    with pytest.raises(TypeError, match="got bool"):
        Quantity(True)
    with pytest.raises(TypeError, match="no value set"):
        Quantity.builder().build()


def test_a_quantity_given_to_a_builder_is_written_as_its_plain_text() -> None:
    container = (
        Container.builder()
        .name("web")
        .resources(lambda r: r.limits({"cpu": Quantity("500m"), "memory": "1Gi"}).requests({"cpu": "1"}))
        .build()
    )
    assert container.to_dict()["resources"] == {"limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {"cpu": "1"}}
    assert type(container.resources.limits["cpu"]) is str


# -- the immutable builder ----------------------------------------------------------------------


def test_chained_setters_build_the_model() -> None:
    resource = (
        APIResource.builder()
        .name("pods")
        .kind("Pod")
        .namespaced(True)
        .singular_name("pod")
        .verbs(["get", "list", "watch"])
        .build()
    )
    assert type(resource) is APIResource
    assert (resource.name, resource.kind, resource.namespaced, resource.singular_name) == ("pods", "Pod", True, "pod")
    assert resource.verbs == ["get", "list", "watch"]


def test_every_setter_returns_a_new_builder_and_leaves_the_old_one_alone() -> None:
    named = APIResource.builder().name("pods")
    with_kind = named.kind("Pod")
    renamed = with_kind.name("services")
    assert named._attrs == {"name": "pods"}
    assert with_kind._attrs == {"name": "pods", "kind": "Pod"}
    assert renamed._attrs == {"name": "services", "kind": "Pod"}
    assert named.build().kind is None and with_kind.build().name == "pods"


def test_each_build_is_a_new_editable_object_sharing_nothing() -> None:
    builder = APIResource.builder().name("pods").verbs(["get"])
    first, second = builder.build(), builder.build()
    assert first == second and first is not second
    first.verbs.append("list")
    assert second.verbs == ["get"] and builder.build().verbs == ["get"]
    cached_meta = ObjectMeta.from_dict_sealed({"name": "web", "labels": {"app": "web"}})
    pod = Pod.builder().metadata(cached_meta).build()
    pod.metadata.labels["tier"] = "front"  # a read-only value given to a builder is copied editable
    assert cached_meta.labels == {"app": "web"}


def test_a_model_field_takes_an_object_a_dict_or_a_function_of_its_builder() -> None:
    by_object = Pod.builder().metadata(ObjectMeta(name="a")).build()
    by_dict = Pod.builder().metadata({"name": "a"}).build()
    by_function = Pod.builder().metadata(lambda m: m.name("a")).build()
    assert by_object == by_dict == by_function
    assert type(by_function.metadata) is ObjectMeta


def test_a_pod_with_a_nested_spec_built_by_functions() -> None:
    pod = (
        Pod.builder()
        .metadata(lambda m: m.name("web").namespace("default").labels({"app": "web"}))
        .spec(
            lambda s: s.restart_policy("Never").containers(
                lambda cs: cs.add(lambda c: c.name("web").image("nginx").ports([{"containerPort": 80}])).add(
                    Container(name="sidecar", image="busybox")
                )
            )
        )
        .build()
    )
    assert type(pod) is Pod and type(pod.spec) is PodSpec
    assert [type(c) for c in pod.spec.containers] == [Container, Container]
    assert pod.to_dict() == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"labels": {"app": "web"}, "name": "web", "namespace": "default"},
        "spec": {
            "containers": [
                {"image": "nginx", "name": "web", "ports": [{"containerPort": 80}]},
                {"image": "busybox", "name": "sidecar"},
            ],
            "restartPolicy": "Never",
        },
    }


def test_resources_take_api_version_and_kind_setters() -> None:
    pod = Pod.builder().api_version("v1").kind("Pod").metadata({"name": "a"}).build()
    assert pod.to_dict() == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}


def test_the_builder_of_a_read_only_twin_builds_editable_objects() -> None:
    pod = Pod.__sealed_class__.builder().metadata({"name": "a"}).build()
    assert type(pod) is Pod
    pod.metadata.name = "b"


# -- list builders ------------------------------------------------------------------------------


def test_a_list_builder_adds_functions_objects_and_dicts() -> None:
    empty = APIResource.list_builder()
    one = empty.add(_pods_resource)
    three = one.add(APIResource(name="nodes")).add({"name": "events", "singularName": "event"})
    assert len(empty) == 0 and len(one) == 1
    built = three.build()
    assert [r.name for r in built] == ["pods", "nodes", "events"]
    assert built[2].singular_name == "event"
    assert all(type(r) is APIResource for r in built)


def test_a_list_field_takes_a_function_of_a_list_builder() -> None:
    api_list = (
        APIResourceList.builder()
        .group_version("v1")
        .resources(lambda resources: resources.add(_pods_resource).add(_services_resource))
        .build()
    )
    assert api_list.group_version == "v1"
    assert [r.name for r in api_list.resources] == ["pods", "services"]


def test_a_list_field_takes_a_named_function_annotated_with_the_list_builder_type() -> None:
    def core_resources(resources: APIResource.ListBuilder) -> APIResource.ListBuilder:
        return resources.add(_pods_resource).add(_services_resource)

    api_list = APIResourceList.builder().resources(core_resources).build()
    assert [r.kind for r in api_list.resources] == ["Pod", "Service"]
    assert isinstance(APIResource.list_builder(), APIResource.ListBuilder)
    assert isinstance(APIResource.builder(), APIResource.Builder)


# -- with Kind.new() ----------------------------------------------------------------------------


def test_a_with_block_sets_fields_in_place() -> None:
    with APIResource.new() as resource:
        resource.name("pods")
        resource.kind("Pod").namespaced(True)
        resource.verbs(["get", "list", "watch"])
    built = resource.build()
    assert (built.name, built.kind, built.namespaced) == ("pods", "Pod", True)
    assert resource.singular_name("pod") is not resource  # after the block: immutable again


def test_nested_with_blocks_for_list_and_model_fields() -> None:
    with APIResourceList.new() as api_list:
        api_list.group_version("v1")
        with api_list.resources() as resources:
            with resources.add() as pods:
                pods.name("pods").kind("Pod")
            resources.add(_services_resource)
            with resources.add() as nodes:
                nodes.name("nodes")
    built = api_list.build()
    assert built.group_version == "v1"
    assert [r.name for r in built.resources] == ["pods", "services", "nodes"]

    with Pod.new() as pod:
        with pod.metadata() as meta:
            meta.name("web")
        with pod.spec() as spec:
            with spec.containers() as containers:
                with containers.add() as container:
                    container.name("web").image("nginx")
    assert pod.build().to_dict() == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web"},
        "spec": {"containers": [{"image": "nginx", "name": "web"}]},
    }


def test_a_nested_block_that_raises_sets_nothing() -> None:
    with Pod.new() as pod:
        pod.metadata({"name": "web"})
        with pytest.raises(RuntimeError, match="boom"):
            with pod.spec() as spec:
                spec.restart_policy("Never")
                raise RuntimeError("boom")
    assert pod.build().spec is None and pod.build().name == "web"


# -- bad input ----------------------------------------------------------------------------------


def test_an_unknown_field_is_an_attribute_error_that_suggests_the_name() -> None:
    with pytest.raises(AttributeError, match=r"Pod has no field 'metdata' \(did you mean 'metadata'\?\)"):
        Pod.builder().metdata({"name": "a"})
    assert not hasattr(Pod.builder(), "nothing_like_a_field")


def test_a_setter_without_a_value_outside_a_with_block_says_how_to_use_it() -> None:
    with pytest.raises(TypeError, match=r"Pod.builder\(\).spec\(\) needs a value.*with Pod.new\(\) as b:"):
        Pod.builder().spec()
    with pytest.raises(TypeError, match=r"needs a value$"):
        Pod.builder().metadata(lambda m: m.name())
    with pytest.raises(TypeError, match="add\\(\\) needs a value outside a `with` block"):
        Container.list_builder().add()


def test_functions_must_return_the_builder_they_received() -> None:
    def forgets_to_return(spec: PodSpec.Builder) -> None:
        spec.restart_policy("Never")

    with pytest.raises(TypeError, match=r"the function given to Pod.builder\(\).spec\(\) returned NoneType"):
        Pod.builder().spec(forgets_to_return)
    with pytest.raises(TypeError, match="returned int; expected a ListBuilder of Container"):
        PodSpec.builder().containers(lambda cs: 3)
    with pytest.raises(TypeError, match="add\\(\\) takes a Container, a dict or a function"):
        Container.list_builder().add(3)


def test_a_wrong_value_is_reported_at_build_with_its_field_path() -> None:
    with pytest.raises(TypeError, match="Pod.spec: expected PodSpec or dict, got int"):
        Pod.builder().spec(3).build()
    with pytest.raises(TypeError, match="has no field 'colour'"):
        Container.list_builder().add({"colour": "red"})


# -- classes written by users -------------------------------------------------------------------


class BuilderGadgetPart(Model):
    name: str | None = None
    build: str | None = None


class BuilderGadgetSpec(Model):
    size: int | None = None
    parts: list[BuilderGadgetPart] | None = None


class BuilderGadget(Resource):
    api_version = "builders.example.com/v1"
    kind = "BuilderGadget"
    spec: BuilderGadgetSpec | None = None


def test_a_users_annotated_classes_get_builders_too() -> None:
    gadget = (
        BuilderGadget.builder()
        .metadata(lambda m: m.name("g"))
        .spec(lambda s: s.size(2).parts(lambda ps: ps.add(lambda p: p.name("wheel").build_("v2"))))
        .build()
    )
    assert type(gadget) is BuilderGadget
    assert gadget.to_dict() == {
        "apiVersion": "builders.example.com/v1",
        "kind": "BuilderGadget",
        "metadata": {"name": "g"},
        "spec": {"size": 2, "parts": [{"name": "wheel", "build": "v2"}]},
    }
