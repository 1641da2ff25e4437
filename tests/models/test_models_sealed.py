"""Sealed (read-only, shared) objects: every mutation raises ReadOnlyError; reads copy nothing."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any, Callable

import orjson
import pytest
from _model_corpus import load, with_unknown_fields

from cloudcoil_cache import models
from cloudcoil_cache.errors import ReadOnlyError
from cloudcoil_cache.models.kubernetes.apps.v1 import Deployment
from cloudcoil_cache.models.kubernetes.core.v1 import Container, Pod


@pytest.fixture
def pod() -> Pod:
    return Pod.from_dict_sealed(with_unknown_fields(load("pod")))


def _set_attr(p: Pod) -> None:
    p.spec = None


def _del_attr(p: Pod) -> None:
    del p.metadata


def _set_nested_attr(p: Pod) -> None:
    p.spec.containers[0].image = "evil"


def _set_class(p: Pod) -> None:
    p.__class__ = Pod


def _set_new_attr(p: Pod) -> None:
    p.something = 1  # type: ignore[attr-defined]


MUTATIONS: list[tuple[str, Callable[[Pod], Any]]] = [
    ("attribute set", _set_attr),
    ("attribute delete", _del_attr),
    ("nested model attribute", _set_nested_attr),
    ("class swap", _set_class),
    ("new attribute", _set_new_attr),
    ("list append", lambda p: p.spec.containers.append(Container(name="x"))),
    ("list extend", lambda p: p.spec.containers.extend([])),
    ("list insert", lambda p: p.spec.containers.insert(0, None)),
    ("list pop", lambda p: p.spec.containers.pop()),
    ("list remove", lambda p: p.spec.containers.remove(p.spec.containers[0])),
    ("list clear", lambda p: p.spec.containers.clear()),
    (
        "list sort",
        lambda p: p.spec.containers[0].args.sort() if p.spec.containers[0].args else p.spec.tolerations.sort(),
    ),
    ("list reverse", lambda p: p.spec.tolerations.reverse()),
    ("list setitem", lambda p: p.spec.tolerations.__setitem__(0, None)),
    ("list slice assignment", lambda p: p.spec.tolerations.__setitem__(slice(0, 1), [])),
    ("list delitem", lambda p: p.spec.tolerations.__delitem__(0)),
    ("list +=", lambda p: p.spec.tolerations.__iadd__([1])),
    ("list *=", lambda p: p.spec.tolerations.__imul__(2)),
    ("dict setitem", lambda p: p.metadata.labels.__setitem__("app", "evil")),
    ("dict delitem", lambda p: p.metadata.labels.__delitem__("app")),
    ("dict update", lambda p: p.metadata.labels.update(app="evil")),
    ("dict setdefault", lambda p: p.metadata.labels.setdefault("new", "x")),
    ("dict pop", lambda p: p.metadata.labels.pop("app")),
    ("dict popitem", lambda p: p.metadata.labels.popitem()),
    ("dict clear", lambda p: p.metadata.labels.clear()),
    ("dict |=", lambda p: p.metadata.labels.__ior__({"a": "b"})),
    ("quantity map", lambda p: p.spec.containers[0].resources.limits.__setitem__("cpu", "9")),
    ("free-form JSON, nested", lambda p: p.metadata.managed_fields[0].fields_v1["f:spec"].clear()),
    ("free-form JSON, nested list", lambda p: p.metadata.managed_fields[0].fields_v1.update({})),
    ("list of scalars", lambda p: p.spec.containers[1].command.append("rm")),
]


@pytest.mark.parametrize("mutate", [m for _, m in MUTATIONS], ids=[n for n, _ in MUTATIONS])
def test_every_mutation_of_a_sealed_object_raises_read_only_error_with_a_copy_hint(
    pod: Pod, mutate: Callable[[Pod], Any]
) -> None:
    before = pod.to_dict()
    with pytest.raises(ReadOnlyError, match=r"\.copy\(\)"):
        mutate(pod)
    assert pod.to_dict() == before


def test_read_only_error_is_also_a_type_error(pod: Pod) -> None:
    with pytest.raises(TypeError):
        pod.spec = None


def test_unknown_fields_of_a_sealed_object_are_read_only_too(pod: Pod) -> None:
    with pytest.raises(ReadOnlyError):
        pod._extra["futureTopLevel"]["a"].append(1)  # type: ignore[index]


def test_copy_of_a_sealed_object_is_editable_equal_and_plain(pod: Pod) -> None:
    editable = pod.copy()
    assert editable == pod and pod == editable
    assert not models.is_sealed(editable) and models.is_sealed(pod)
    assert type(editable.spec.containers) is list
    assert type(editable.metadata.labels) is dict
    assert type(editable.metadata.managed_fields[0].fields_v1) is dict
    editable.spec.containers[0].image = "nginx:2"
    editable.metadata.labels["new"] = "yes"
    editable.spec.containers.append(Container(name="extra"))
    assert pod.spec.containers[0].image == "nginx:1.25.4"
    assert "new" not in pod.metadata.labels
    assert editable != pod


def test_evolve_returns_an_editable_copy_with_changes(pod: Pod) -> None:
    changed = pod.evolve(status=None)
    assert changed.status is None and pod.status is not None
    assert changed.spec == pod.spec and changed.spec is not pod.spec
    changed.metadata.name = "other"
    assert pod.metadata.name == "web-7d4b9c8f6-x2k9p"


def test_evolve_rejects_unknown_field_names(pod: Pod) -> None:
    with pytest.raises(TypeError, match="unknown field 'spce'"):
        pod.evolve(spce=None)


def test_reading_a_sealed_object_returns_the_same_nested_objects_every_time(pod: Pod) -> None:
    assert pod.spec is pod.spec
    assert pod.spec.containers is pod.spec.containers
    assert pod.spec.containers[0] is pod.spec.containers[0]
    assert pod.metadata.labels is pod.metadata.labels
    assert pod.metadata.managed_fields[0].fields_v1 is pod.metadata.managed_fields[0].fields_v1


def test_sealed_containers_are_lists_and_dicts_that_compare_and_serialise_normally(
    pod: Pod,
) -> None:
    assert isinstance(pod.spec.containers, list)
    assert isinstance(pod.metadata.labels, dict)
    assert pod.metadata.labels == {
        "app": "web",
        "pod-template-hash": "7d4b9c8f6",
        "tier": "frontend",
    }
    assert pod.spec.containers[1].command == ["sh", "-c"]
    assert json.loads(json.dumps(pod.metadata.labels)) == pod.metadata.labels
    assert (
        orjson.loads(orjson.dumps(pod.metadata.managed_fields[0].fields_v1)) == pod.metadata.managed_fields[0].fields_v1
    )
    assert repr(pod.spec.containers[1].command) == "['sh', '-c']"


def test_a_sealed_object_is_an_instance_of_its_class_and_looks_like_it(pod: Pod) -> None:
    assert isinstance(pod, Pod) and isinstance(pod, models.Resource)
    assert type(pod).__name__ == "Pod"
    assert repr(pod).startswith("Pod(metadata=ObjectMeta(")
    assert repr(pod) == repr(pod.copy())


def test_sealed_and_editable_objects_with_the_same_content_are_equal() -> None:
    wire = load("deployment")
    assert Deployment.from_dict(wire) == Deployment.from_dict_sealed(wire)
    assert Deployment.from_dict(wire) != Pod.from_dict({})


def test_objects_users_build_are_editable() -> None:
    built = Container(name="web")
    built.image = "nginx"
    assert not models.is_sealed(built)
    assert not models.is_sealed(Pod.from_dict(load("pod")))


def test_sealed_objects_pickle_and_copy_to_sealed_objects(pod: Pod) -> None:
    for clone in (pickle.loads(pickle.dumps(pod)), copy.deepcopy(pod), copy.copy(pod)):
        assert clone == pod and models.is_sealed(clone)
    plain = pod.copy()
    assert not models.is_sealed(pickle.loads(pickle.dumps(plain)))


def test_structure_sealed_is_the_module_level_form(pod: Pod) -> None:
    wire = load("pod")
    sealed = models.structure_sealed(wire, Pod)
    assert models.is_sealed(sealed) and sealed.to_dict() == wire


def test_is_sealed_is_false_for_non_models() -> None:
    assert not models.is_sealed({"a": 1})


def test_explicit_nulls_are_kept_and_one_extras_dict_serves_every_sealed_object_that_has_them() -> None:
    def condition(kind: str, second: int = 0) -> dict[str, Any]:  # distinct JSON: no whole-object sharing
        return {
            "type": kind,
            "status": "True",
            "lastProbeTime": None,
            "lastTransitionTime": f"2024-06-05T00:02:{second:02d}Z",
        }

    pods = [
        Pod.from_dict_sealed(
            {
                "metadata": {"name": f"p{i}"},
                "status": {"conditions": [condition("Ready", i), condition("Initialized", i)]},
            }
        )
        for i in range(3)
    ]
    conditions = [c for p in pods for c in p.status.conditions]  # type: ignore[union-attr]
    assert len({id(c) for c in conditions}) == 6
    assert len({id(c._extra) for c in conditions}) == 1
    assert pods[2].to_dict()["status"]["conditions"][1] == condition("Initialized", 2)
    with pytest.raises(ReadOnlyError):
        pods[0].status.conditions[0]._extra["lastProbeTime"] = "x"  # type: ignore[union-attr,index]
    editable = pods[0].copy()
    editable.status.conditions[0].last_probe_time = None  # type: ignore[union-attr]
    assert editable.to_dict()["status"]["conditions"][0] == condition("Ready")
    # an unknown field with a null, or any other unknown value, still gets a dict of its own
    odd = [
        Pod.from_dict_sealed(
            {"metadata": {"name": "q"}, "status": {"conditions": [{**condition("Ready", i), "futureField": None}]}}
        )
        for i in range(2)
    ]
    assert odd[0].status.conditions[0]._extra is not odd[1].status.conditions[0]._extra  # type: ignore[union-attr]
    assert odd[1].to_dict()["status"]["conditions"][0]["futureField"] is None
