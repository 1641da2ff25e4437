"""Predicates, unit by unit: each ready-made predicate, their combinations, the checks of what is passed,
and the event mapping that applies them (resyncs, deletion marks and finalizer changes always pass)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

import cloudcoil_cache.controller as controller_pkg
from cloudcoil_cache.apimachinery import ObjectMeta, OwnerReference
from cloudcoil_cache.controller import (
    AnnotationsChanged,
    Controller,
    Funcs,
    GenerationChanged,
    LabelsChanged,
    Predicate,
    ResourceVersionChanged,
    all_of,
    any_of,
    default_predicates,
)
from cloudcoil_cache.controller._mapping import EventMapping
from cloudcoil_cache.controller._predicates import as_predicates, event_passes
from cloudcoil_cache.models.kubernetes.apps.v1 import Deployment
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Secret
from cloudcoil_cache.resources import GenericResource

LOG = logging.getLogger("test.predicates")


def deploy(rv: str = "1", generation: int | None = 1, **meta: Any) -> Deployment:
    return Deployment(
        metadata=ObjectMeta(name="d", namespace="default", resource_version=rv, generation=generation, **meta)
    )


def cm(rv: str = "1", **meta: Any) -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name="c", namespace="default", resource_version=rv, **meta), data={})


def test_the_predicates_are_exported() -> None:
    for name in (
        "Predicate",
        "GenerationChanged",
        "LabelsChanged",
        "AnnotationsChanged",
        "ResourceVersionChanged",
        "Funcs",
        "AnyOf",
        "AllOf",
        "any_of",
        "all_of",
        "default_predicates",
    ):
        assert name in controller_pkg.__all__
        assert hasattr(controller_pkg, name)


def test_generation_changed() -> None:
    p = GenerationChanged()
    assert p.update(deploy("1", 1), deploy("2", 2))
    assert not p.update(deploy("1", 1), deploy("2", 1))  # a status write: same generation
    # a kind without a generation: every change passes
    assert p.update(cm("1"), cm("2"))
    assert p.update(deploy("1", None), deploy("2", None))
    assert p.create(deploy()) and p.delete(deploy())


def test_labels_changed() -> None:
    p = LabelsChanged()
    assert p.update(deploy("1", labels={"a": "1"}), deploy("2", labels={"a": "2"}))
    assert p.update(deploy("1"), deploy("2", labels={"a": "1"}))
    assert not p.update(deploy("1", labels={"a": "1"}), deploy("2", 2, labels={"a": "1"}))
    assert not p.update(deploy("1", labels={}), deploy("2"))  # none and empty are the same
    assert p.create(deploy()) and p.delete(deploy())


def test_annotations_changed() -> None:
    p = AnnotationsChanged()
    assert p.update(deploy("1", annotations={"a": "1"}), deploy("2", annotations={"a": "2"}))
    assert not p.update(deploy("1", annotations={"a": "1"}), deploy("2", 2, annotations={"a": "1"}))
    assert p.create(deploy()) and p.delete(deploy())


def test_resource_version_changed() -> None:
    p = ResourceVersionChanged()
    assert p.update(deploy("1"), deploy("2"))
    assert not p.update(deploy("1"), deploy("1"))


def test_funcs_call_the_functions_with_copies() -> None:
    seen: list[Any] = []

    def changed_replicas(old: Any, new: Any) -> bool:
        seen.append((old, new))
        old.metadata.labels = {"changed": "by the predicate"}  # a copy: the cached object is untouched
        return False

    original = deploy("1")
    p = Funcs(changed_replicas, create=lambda obj: obj.metadata.name == "other")
    assert not p.update(original, deploy("2"))
    assert seen and seen[0][0] is not original and original.metadata.labels is None
    assert not p.create(deploy())  # named "d"
    assert p.delete(deploy())  # not given: passes
    assert "changed_replicas" in repr(p)
    with pytest.raises(TypeError, match="Funcs\\(delete=...\\) expects a callable"):
        Funcs(delete=3)  # type: ignore[arg-type]


def test_combinations() -> None:
    either = GenerationChanged() | LabelsChanged()
    both = GenerationChanged() & LabelsChanged()
    spec, labels, status = deploy("2", 2), deploy("2", labels={"a": "1"}), deploy("2")
    assert either.update(deploy(), spec) and either.update(deploy(), labels) and not either.update(deploy(), status)
    assert not both.update(deploy(), spec) and both.update(deploy(), deploy("2", 2, labels={"a": "1"}))
    assert any_of(GenerationChanged(), lambda o, n: n.metadata.name == "d").update(deploy(), status)
    assert not all_of(GenerationChanged(), lambda o, n: True).update(deploy(), status)
    assert "GenerationChanged() | LabelsChanged()" == repr(either)


def test_the_default_passes_spec_labels_and_annotations_changes_not_a_status_write() -> None:
    (default,) = default_predicates()
    assert default.update(deploy("1", 1), deploy("2", 2))
    assert default.update(deploy("1"), deploy("2", labels={"a": "b"}))
    assert default.update(deploy("1"), deploy("2", annotations={"a": "b"}))
    assert not default.update(deploy("1", 1), deploy("2", 1))
    assert default.update(cm("1"), cm("2"))  # no generation: any change


def test_resyncs_deletion_marks_and_finalizers_pass_whatever_the_predicates() -> None:
    never = (Funcs(lambda o, n: False),)
    assert not event_passes(never, "update", (deploy("1"), deploy("2")), LOG, "t")
    assert event_passes(never, "update", (deploy("1"), deploy("1")), LOG, "t")  # a resync re-delivery
    marked = deploy("2", deletion_timestamp="2026-01-01T00:00:00Z")
    assert event_passes(never, "update", (deploy("1"), marked), LOG, "t")
    assert event_passes(never, "update", (deploy("1"), deploy("2", finalizers=["example.com/x"])), LOG, "t")
    # the ready-made predicates never filter creations and deletions
    assert event_passes((GenerationChanged(),), "add", (deploy(),), LOG, "t")
    assert event_passes((GenerationChanged(),), "delete", (deploy(),), LOG, "t")
    assert not event_passes((Funcs(delete=lambda o: False),), "delete", (deploy(),), LOG, "t")
    assert event_passes((), "update", (deploy("1"), deploy("2")), LOG, "t")


def test_a_failing_predicate_is_logged_and_the_event_passes(caplog: pytest.LogCaptureFixture) -> None:
    def broken(old: Any, new: Any) -> bool:
        raise RuntimeError("boom")

    with caplog.at_level(logging.ERROR, logger="test.predicates"):
        assert event_passes((Funcs(broken),), "update", (deploy("1"), deploy("2")), LOG, "controller x")
    assert "controller x: predicate Funcs(update=" in caplog.text and "boom" in caplog.text


def test_bad_predicates_are_typed_errors_naming_the_argument() -> None:
    with pytest.raises(TypeError, match="Controller\\(predicates=...\\).*got str"):
        Controller(ConfigMap, predicates="generation")
    with pytest.raises(TypeError, match="GenerationChanged is a class: pass an instance, GenerationChanged\\(\\)"):
        Controller(ConfigMap, predicates=[GenerationChanged])
    with pytest.raises(TypeError, match="owns\\(predicates=...\\).*got int"):
        Controller(ConfigMap).owns(Secret, predicates=3)
    with pytest.raises(TypeError, match="watch\\(predicates=...\\).*got int"):
        Controller(ConfigMap).watch(Secret, lambda s: None, predicates=[3])
    assert as_predicates(lambda o, n: True, "x")[0].update(deploy(), deploy())  # a function is an update predicate
    assert isinstance(as_predicates(LabelsChanged(), "x")[0], LabelsChanged)


def test_the_declarations_keep_their_predicates() -> None:
    assert Controller(ConfigMap).predicates == ()  # a built-in kind: every change queues (others write status)
    widget = GenericResource.define(api_version="preds.example.com/v1", kind="Pred", plural="preds", namespaced=True)
    default = Controller(widget).predicates  # a custom resource: its status is the controller's own
    assert len(default) == 1 and repr(default[0]) == repr(default_predicates()[0])
    assert repr(default_predicates(widget)[0]) == repr(default_predicates()[0])
    assert Controller(widget, predicates=[]).predicates == ()
    labels = LabelsChanged()
    assert Controller(ConfigMap, predicates=labels).predicates == (labels,)


class Sources(dict[Any, Any]):
    """No informers: owner lookups find nothing (the mapping tests below use mappers)."""


def mapping(primary: tuple[Predicate, ...], watch: tuple[Predicate, ...]) -> EventMapping:
    return EventMapping(
        "t",
        ConfigMap,
        [],
        [(Secret, lambda s: f"default/{s.metadata.name}-cm")],
        in_scope=lambda obj: True,
        normalize=lambda key: str(key),
        outside_scope=lambda key: None,
        namespace=lambda: "default",
        sources=Sources,
        logger=LOG,
        primary_predicates=primary,
        watch_predicates=[watch],
    )


def secret(rv: str, **meta: Any) -> Secret:
    return Secret(metadata=ObjectMeta(name="s", namespace="default", resource_version=rv, **meta))


def test_the_mapping_filters_each_path_by_its_predicates() -> None:
    m = mapping((LabelsChanged(),), (AnnotationsChanged(),))
    assert m.keys_for_event("update", (cm("1"), cm("2"))) == []
    assert m.keys_for_event("update", (cm("1"), cm("2", labels={"a": "b"}))) == ["default/c"]
    assert m.keys_for_event("update", (cm("1"), cm("1"))) == ["default/c"]  # a resync
    assert m.keys_for_event("add", (cm("1"),)) == ["default/c"]
    assert m.keys_for_event("delete", (cm("1"),)) == ["default/c"]
    assert m.keys_for_event("update", (secret("1"), secret("2", labels={"a": "b"}))) == []
    assert m.keys_for_event("update", (secret("1"), secret("2", annotations={"a": "b"}))) == ["default/s-cm"]
    # unfiltered: every path
    unfiltered = mapping((), ())
    assert unfiltered.keys_for_event("update", (cm("1"), cm("2"))) == ["default/c"]
    assert unfiltered.keys_for_event("update", (secret("1"), secret("2"))) == ["default/s-cm"]


def test_an_update_queues_the_keys_of_both_sides() -> None:
    m = EventMapping(
        "t",
        ConfigMap,
        [],
        [(Secret, lambda s: f"default/{(s.metadata.labels or {}).get('for', 'none')}")],
        in_scope=lambda obj: True,
        normalize=lambda key: str(key),
        outside_scope=lambda key: None,
        namespace=lambda: "default",
        sources=Sources,
        logger=LOG,
        watch_predicates=[(LabelsChanged(),)],
    )
    old, new = secret("1", labels={"for": "a"}), secret("2", labels={"for": "b"})
    assert m.keys_for_event("update", (old, new)) == ["default/a", "default/b"]


def test_a_filtered_owned_event_does_not_even_look_up_its_owner() -> None:
    looked: list[int] = []

    def sources() -> dict[Any, Any]:
        looked.append(1)
        return {}

    m = EventMapping(
        "t",
        ConfigMap,
        [Deployment],
        [],
        in_scope=lambda obj: True,
        normalize=lambda key: str(key),
        outside_scope=lambda key: None,
        namespace=lambda: "default",
        sources=sources,
        logger=LOG,
        owned_predicates={Deployment: (GenerationChanged(),)},
    )
    ref = OwnerReference(api_version="v1", kind="ConfigMap", name="c", uid="u", controller=True)
    status_write = (deploy("1", 1, owner_references=[ref]), deploy("2", 1, owner_references=[ref]))
    assert m.keys_for_event("update", status_write) == [] and looked == []
    spec_change = (deploy("1", 1, owner_references=[ref]), deploy("2", 2, owner_references=[ref]))
    assert m.keys_for_event("update", spec_change) == [] and looked == [1, 1]  # old and new: no primary cached
