"""cloudcoil's pydantic-style model calls: camelCase keywords, model_validate/dump/copy, and a user's
annotated ``Resource`` subclass becoming a full model (decoded, sealed, cached, written over HTTP)."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any, Iterator

import pytest

from cloudcoil_cache.apimachinery import ListMeta, ObjectMeta
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import DecodeError, ReadOnlyError
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod
from cloudcoil_cache.resources import GenericResource, Model, Resource, resource_class_for
from cloudcoil_cache.testing import FakeAPIServer


class GizmoSpec(Model):
    size: int = 1
    color: str | None = None
    tags: list[str] = []


class Gizmo(Resource):
    """How a cloudcoil user writes a CRD model: annotated fields, constants as class values."""

    api_version: str = "toys.example.com/v1"
    kind: str = "Gizmo"
    plural = "gizmos"
    namespaced = True
    spec: GizmoSpec | None = None
    status: dict[str, Any] | None = None


# ------------------------------------------------------------------ keyword construction
def test_keywords_may_be_wire_names_at_every_level() -> None:
    pod = Pod(
        apiVersion="v1",
        kind="Pod",
        metadata={"name": "a", "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "u"}]},
        spec={"containers": [{"name": "c", "imagePullPolicy": "Always"}]},
    )
    assert pod.metadata is not None and pod.metadata.owner_references is not None
    assert pod.metadata.owner_references[0].api_version == "v1"
    assert pod.to_dict()["spec"]["containers"][0]["imagePullPolicy"] == "Always"
    meta = ListMeta(continue_="token", remainingItemCount=2)
    assert (meta.continue_, meta.remaining_item_count) == ("token", 2)


def test_unknown_or_doubled_keywords_are_type_errors_naming_them() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        ConfigMap(bogus=1)
    with pytest.raises(TypeError, match="'resource_version' twice"):
        ObjectMeta(resource_version="1", resourceVersion="2")


def test_plain_resource_takes_any_kind_with_typed_metadata() -> None:
    r = Resource(apiVersion="v1", kind="Pod")
    assert isinstance(r, Resource) and r.name is None and r.namespace is None
    r = Resource(apiVersion="v1", kind="Pod", metadata=ObjectMeta(name="test", namespace="default"))
    assert (r.name, r.namespace) == ("test", "default")
    assert r.to_dict() == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test", "namespace": "default"}}


# ------------------------------------------------------------------ pydantic's methods
def test_model_validate_takes_the_wire_form_or_an_instance() -> None:
    cm = ConfigMap.model_validate(
        {"metadata": {"name": "x", "creationTimestamp": "2024-01-02T03:04:05Z"}, "data": {"a": "b"}}
    )
    assert cm.metadata is not None and cm.metadata.creation_timestamp == datetime.datetime(
        2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc
    )
    assert ConfigMap.model_validate(cm) is cm
    assert ConfigMap.model_validate_json(b'{"metadata": {"name": "y"}}').metadata.name == "y"  # type: ignore[union-attr]


def test_model_validate_errors_are_value_errors_naming_the_field() -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        ConfigMap.model_validate_json("{bad")
    with pytest.raises(DecodeError, match="data"):
        ConfigMap.model_validate({"data": "not-a-dict"})


def test_model_dump_by_alias_exclude_none_and_mode() -> None:
    cm = ConfigMap.from_dict(
        {"metadata": {"name": "x", "creationTimestamp": "2024-01-02T03:04:05Z", "futureField": 1}, "data": {"a": "b"}}
    )
    python = cm.model_dump()
    assert python["api_version"] == "v1" and python["kind"] == "ConfigMap"
    assert python["metadata"]["name"] == "x" and python["metadata"]["generate_name"] is None
    assert python["metadata"]["creation_timestamp"] == datetime.datetime(
        2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc
    )
    assert python["metadata"]["futureField"] == 1  # unknown fields keep their wire name
    json_alias = cm.model_dump(mode="json", by_alias=True)
    assert json_alias["metadata"]["creationTimestamp"] == "2024-01-02T03:04:05Z"
    assert json_alias["metadata"]["generateName"] is None and json_alias["binaryData"] is None
    assert cm.model_dump(mode="json", by_alias=True, exclude_none=True) == cm.to_dict()
    assert '"creationTimestamp": "2024-01-02T03:04:05Z"' in cm.model_dump_json(by_alias=True)
    with pytest.raises(ValueError, match="mode"):
        cm.model_dump(mode="yaml")


def test_model_copy_is_editable_shallow_unless_deep_and_takes_updates() -> None:
    sealed = ConfigMap.from_dict_sealed({"metadata": {"name": "x", "labels": {"a": "1"}}, "data": {"k": "v"}})
    shallow = sealed.model_copy(update={"data": {"k": "new"}})
    assert shallow.data == {"k": "new"} and sealed.data == {"k": "v"}
    shallow.immutable = True  # the copy itself is editable
    with pytest.raises(ReadOnlyError):
        shallow.metadata.name = "y"  # type: ignore[union-attr]  # ...its nested values are shared
    deep = sealed.model_copy(deep=True, update={"binaryData": None})
    deep.metadata.labels["b"] = "2"  # type: ignore[union-attr, index]
    assert sealed.metadata.labels == {"a": "1"}  # type: ignore[union-attr]


# ------------------------------------------------------------------ a user's annotated classes
def test_annotated_subclass_is_a_registered_model_with_constants_kept_as_class_values() -> None:
    assert resource_class_for("toys.example.com/v1", "Gizmo") is Gizmo
    assert (Gizmo.api_version, Gizmo.kind, Gizmo.group, Gizmo.version) == (
        "toys.example.com/v1",
        "Gizmo",
        "toys.example.com",
        "v1",
    )
    g = Gizmo(metadata={"name": "g"}, spec={"size": 3})
    assert isinstance(g.spec, GizmoSpec) and g.spec.size == 3
    assert g.to_dict() == {
        "apiVersion": "toys.example.com/v1",
        "kind": "Gizmo",
        "metadata": {"name": "g"},
        "spec": {"size": 3, "tags": []},
    }


def test_mutable_defaults_are_per_object() -> None:
    a, b = GizmoSpec(), GizmoSpec()
    a.tags.append("x")
    assert b.tags == []


def test_annotated_subclass_decodes_sealed_and_keeps_unknown_fields() -> None:
    g = Gizmo.from_dict_sealed(
        {
            "apiVersion": "toys.example.com/v1",
            "kind": "Gizmo",
            "metadata": {"name": "g"},
            "spec": {"size": 2, "future": True},
            "extra": 1,
        }
    )
    assert isinstance(g.spec, GizmoSpec) and g.spec.size == 2
    with pytest.raises(ReadOnlyError):
        g.spec.size = 3
    assert g.to_dict()["spec"]["future"] is True and g.to_dict()["extra"] == 1


def test_annotated_generic_resource_subclass_with_class_keywords() -> None:
    class Doohickey(
        GenericResource, api_version="toys.example.com/v1", kind="Doohickey", plural="doohickeys", namespaced=False
    ):
        spec: GizmoSpec | None = None  # type: ignore[assignment]

    d = Doohickey(metadata={"name": "d"}, spec={"size": 5})
    assert isinstance(d.spec, GizmoSpec)
    assert resource_class_for("toys.example.com/v1", "Doohickey") is Doohickey
    assert (Doohickey.plural, Doohickey.namespaced) == ("doohickeys", False)


def test_a_later_class_of_the_same_kind_is_the_one_found() -> None:
    class Thing(Resource):
        api_version: str = "toys.example.com/v1"
        kind: str = "Thing"

    first = Thing

    class Thing(Resource):  # type: ignore[no-redef]
        api_version: str = "toys.example.com/v1"
        kind: str = "Thing"

    assert resource_class_for("toys.example.com/v1", "Thing") is Thing is not first


# ------------------------------------------------------------------ over HTTP
@pytest.fixture
def toy_server() -> Iterator[FakeAPIServer]:
    with FakeAPIServer(bookmark_interval=0.5) as srv:
        srv.register_resource("toys.example.com", "v1", "Gizmo", "gizmos")
        yield srv


def test_annotated_subclass_writes_reads_lists_and_caches(toy_server: FakeAPIServer, tmp_path: Path) -> None:
    kubeconfig = toy_server.write_kubeconfig(tmp_path / "kubeconfig")
    config = Config(kubeconfig=kubeconfig, namespace="default", cache=Cache(resources=[Gizmo]))
    try:
        with config:
            created = Gizmo(metadata={"name": "g1"}, spec={"size": 2, "color": "red"}).create()
            assert isinstance(created, Gizmo) and created.spec.size == 2  # type: ignore[union-attr]
            edited = created.model_copy(deep=True)
            edited.spec.size = 4  # type: ignore[union-attr]
            updated = edited.update()
            cached = Gizmo.get("g1")  # read-your-writes: the cache has seen the update
            assert cached.spec.size == 4 and cached.metadata.resource_version == updated.metadata.resource_version  # type: ignore[union-attr]
            with pytest.raises(ReadOnlyError):
                cached.spec.size = 5  # type: ignore[union-attr]
            assert [g.name for g in Gizmo.list()] == ["g1"]
            informer = config.cache.get_informer(Gizmo)  # type: ignore[union-attr]
            assert isinstance(informer.get("g1", "default"), Gizmo)
            created.remove()
    finally:
        config.close()


class Cog(Resource):
    """No plural and no scope: both come from the server's discovery at first use."""

    api_version: str = "toys.example.com/v1"
    kind: str = "Cog"
    spec: dict[str, Any] | None = None


def test_annotated_subclass_without_a_plural_learns_it_from_discovery(
    toy_server: FakeAPIServer, tmp_path: Path
) -> None:
    toy_server.register_resource("toys.example.com", "v1", "Cog", "cogs")
    kubeconfig = toy_server.write_kubeconfig(tmp_path / "kubeconfig")
    with pytest.raises(ValueError, match="does not know its plural yet"):
        Cache().get_informer(Cog)  # (Cache(resources=[Cog]) learns it when the cache starts)
    config = Config(kubeconfig=kubeconfig, namespace="default", cache=Cache())  # informers on first use
    try:
        with config:
            Cog(metadata={"name": "s1"}, spec={"teeth": 12}).create()
            assert (Cog.plural, Cog.namespaced) == ("cogs", True)
            assert Cog.get("s1").spec == {"teeth": 12}
            assert [s.name for s in Cog.list()] == ["s1"]
            assert config.cache.informer_for(Cog) is not None  # type: ignore[union-attr]
    finally:
        config.close()


def test_a_users_plain_typed_fields_are_checked_at_construction_as_pydantic_does() -> None:
    class Knob(Resource):
        api_version: str = "toys.example.com/v1"
        kind: str = "Knob"
        spec: dict[str, Any] = {}
        turns: int | None = None

    assert Knob(spec={"key": "value"}, turns=3).spec == {"key": "value"}
    with pytest.raises(ValueError, match=r"Knob\.spec: expected dict, got str"):
        Knob(spec="invalid")
    with pytest.raises(DecodeError, match=r"Knob\.turns: expected int, got str"):
        Knob(turns="3")
    # generated models leave plain values to the API server's validation, as before
    assert ConfigMap(immutable="yes").immutable == "yes"  # type: ignore[arg-type]


def test_classes_defined_in_a_function_resolve_each_others_names() -> None:
    class Inner(Model):
        x: int = 1

    class Outer(Resource):
        api_version = "toys.example.com/v1"
        kind = "Outer"
        spec: Inner | None = None

    assert Outer(spec={"x": 5}).spec == Inner(x=5)
    assert Outer.from_dict({"spec": {"x": 2}}).spec == Inner(x=2)


def test_a_model_default_is_copied_per_object() -> None:
    class Dial(Resource):
        api_version = "toys.example.com/v1"
        kind = "Dial"
        spec: GizmoSpec = GizmoSpec(size=2)

    a, b = Dial(), Dial()
    a.spec.size = 99
    assert b.spec.size == 2


def test_a_subclass_of_a_generated_kind_adding_a_field_does_not_take_its_kind_over() -> None:
    from cloudcoil_cache.resources import parse

    class NotedConfigMap(ConfigMap):
        note: str | None = None

    assert NotedConfigMap(note="n").note == "n"
    assert resource_class_for("v1", "ConfigMap") is ConfigMap
    assert type(parse({"apiVersion": "v1", "kind": "ConfigMap"})) is ConfigMap


def test_model_validate_takes_attribute_names_at_any_depth_as_populate_by_name_does() -> None:
    snake = {
        "metadata": {"name": "p", "resource_version": "5", "labels": {"a_b": "c"}},
        "spec": {"containers": [{"name": "c", "image_pull_policy": "Always"}], "restartPolicy": "Never"},
    }
    pod = Pod.model_validate(snake)
    assert pod.metadata.resource_version == "5" and pod.metadata.labels == {"a_b": "c"}
    assert pod.spec.containers[0].image_pull_policy == "Always" and pod.spec.restart_policy == "Never"
    assert "resource_version" not in pod.to_dict()["metadata"]  # nothing kept as an unknown field
    assert pod == Pod(**snake)
    wire = Pod.model_validate({"metadata": {"name": "p"}, "futureField": {"x": 1}})
    assert wire.to_dict()["futureField"] == {"x": 1}  # wire names alone: unknown fields kept
    nulls = ConfigMap.model_validate({"metadata": {"name": "c"}, "data": None, "futureField": 1})
    assert nulls.to_dict() == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c"},
        "data": None,
        "futureField": 1,
    }
    with pytest.raises(DecodeError, match="futureField"):  # mixed with attribute names: refused, not lost
        Pod.model_validate({"metadata": {"resource_version": "5"}, "futureField": 1})


def test_an_annotated_generic_resource_still_needs_all_four_declarations() -> None:
    with pytest.raises(TypeError, match="all four"):

        class Half(GenericResource, api_version="toys.example.com/v1", kind="Half"):
            extra: str | None = None


def test_a_plain_resource_pickles_and_comes_back_in_another_process() -> None:
    import pickle
    import subprocess
    import sys

    r = Resource(apiVersion="v1", kind="Pod", metadata={"name": "x"})
    data = pickle.dumps(r)
    assert pickle.loads(data) == r
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import pickle, sys; print(pickle.loads(sys.stdin.buffer.read()).to_dict()['metadata'])",
        ],
        input=data,
        capture_output=True,
        timeout=60,
    )
    assert out.stdout.strip() == b"{'name': 'x'}", out.stderr
