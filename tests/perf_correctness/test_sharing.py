"""Sharing of equal read-only values between sealed objects: same content, same answers, never aliased wrongly."""

from __future__ import annotations

import datetime
import gc
from typing import Any

import pytest

from cloudcoil_cache.errors import ReadOnlyError
from cloudcoil_cache.models import _frozen
from cloudcoil_cache.models._convert import make_converter
from cloudcoil_cache.models._frozen import FrozenDict, freeze_json, sharing
from cloudcoil_cache.models.apimachinery import OwnerReference
from cloudcoil_cache.models.kubernetes.core.v1 import Container, Pod
from cloudcoil_cache.testing import make_pod


def _pods(n: int, **kwargs: Any) -> list[dict[str, Any]]:
    return [make_pod(f"p-{i}", index=0, **kwargs) for i in range(n)]


def test_equal_nested_values_are_one_object_and_decode_unchanged() -> None:
    raws = _pods(3)
    pods = [Pod.from_dict_sealed(raw) for raw in raws]
    first, second = pods[0].spec.containers[0], pods[1].spec.containers[0]
    assert first is second
    assert pods[0].metadata.managed_fields[0].fields_v1 is pods[2].metadata.managed_fields[0].fields_v1
    assert pods[0].metadata is not pods[1].metadata  # top-level objects are never shared
    for raw, pod in zip(raws, pods):
        assert pod.to_dict() == {"apiVersion": "v1", "kind": "Pod", **raw}
        assert pod == Pod.from_dict(raw)


def test_different_values_are_never_shared() -> None:
    base = make_pod("a", index=0)["spec"]["containers"][0]
    other = {**base, "image": base["image"] + "-other"}
    a, b = Container.from_dict_sealed(base), Container.from_dict_sealed(other)
    assert a is not b
    assert b.image == other["image"]
    assert a.image == base["image"]


def test_json_types_that_print_alike_are_kept_apart() -> None:
    as_int = freeze_json({"x": 1})
    as_float = freeze_json({"x": 1.0})
    as_bool = freeze_json({"x": True})
    assert type(as_int["x"]) is int and type(as_float["x"]) is float and type(as_bool["x"]) is bool
    text = freeze_json({"t": "2024-01-01T00:00:00"})
    when = freeze_json({"t": datetime.datetime(2024, 1, 1)})  # not JSON: built, never shared
    assert isinstance(when["t"], datetime.datetime) and isinstance(text["t"], str)
    assert isinstance(when, FrozenDict)


class _Tagged(str):
    pass


def test_a_str_subclass_value_is_not_shared_with_the_plain_string() -> None:
    base = {"name": "c", "image": "img"}
    plain = Container.from_dict_sealed(base)
    tagged = Container.from_dict_sealed({"name": "c", "image": _Tagged("img")})
    assert tagged is not plain
    assert type(tagged.image) is _Tagged and type(plain.image) is str


def test_shared_values_stay_read_only_and_copies_are_independent() -> None:
    pods = [Pod.from_dict_sealed(raw) for raw in _pods(2)]
    shared = pods[0].spec.containers[0]
    with pytest.raises(ReadOnlyError):
        shared.image = "evil"  # type: ignore[misc]
    with pytest.raises(ReadOnlyError):
        shared.args.append("--x")
    editable = pods[0].copy()
    editable.spec.containers[0].image = "changed"
    editable.spec.containers[0].args.append("--x")
    assert pods[1].spec.containers[0].image != "changed"
    assert "--x" not in pods[1].spec.containers[0].args


def test_mostly_unique_values_switch_sharing_off() -> None:
    conv = make_converter()
    sealed = OwnerReference.__sealed_class__
    for i in range(_frozen.SHARE_SAMPLE + 10):
        conv.structure({"apiVersion": "v1", "kind": "X", "name": f"n-{i}", "uid": f"u-{i}"}, sealed)
    stats = [s for s in _frozen.sharing_stats() if s.name == "OwnerReference"][-1]
    assert not stats.enabled
    assert stats.entries == 0
    again = [conv.structure({"apiVersion": "v1", "kind": "X", "name": "same", "uid": "u"}, sealed) for _ in range(2)]
    assert again[0] is not again[1] and again[0] == again[1]


def test_the_table_lets_go_of_values_nobody_uses() -> None:
    built: list[int] = []

    def build(data: dict[str, Any]) -> FrozenDict:
        built.append(1)
        return FrozenDict(data)

    shared = sharing(build, "test-table")
    stats = _frozen.sharing_stats()[-1]
    kept = [shared({"k": i}) for i in range(10)]
    assert all(shared({"k": i}) is kept[i] for i in range(10))  # repeats: the table stays on
    for i in range(_frozen._SWEEP_AT + 50):
        shared({"k": 1000 + i})  # dropped at once by the caller
    gc.collect()
    assert stats.entries < _frozen._SWEEP_AT
    assert all(shared({"k": i}) is kept[i] for i in range(10))  # still shared while in use
    assert stats.enabled
    assert len(built) == 10 + _frozen._SWEEP_AT + 50


def test_a_list_of_sealed_pods_survives_the_table_sweep() -> None:
    raws = [make_pod(f"p-{i}", index=i) for i in range(40)]
    pods = [Pod.from_dict_sealed(raw) for raw in raws]
    for stats in _frozen.sharing_stats():
        stats.next_sweep = 0
        stats.sweep()
    for raw, pod in zip(raws, pods):
        assert pod.to_dict() == {"apiVersion": "v1", "kind": "Pod", **raw}


def test_evolve_sealed_replaces_a_field_and_shares_the_rest() -> None:
    from cloudcoil_cache.models._convert import evolve_sealed

    raw = make_pod("p", index=0)
    pod = Pod.from_dict_sealed(raw)
    stripped = evolve_sealed(pod, metadata=evolve_sealed(pod.metadata, managed_fields=None))
    assert stripped.metadata.managed_fields is None
    assert pod.metadata.managed_fields  # the original is untouched
    assert stripped.spec is pod.spec and stripped.status is pod.status
    assert stripped.metadata.labels is pod.metadata.labels
    expected = {"apiVersion": "v1", "kind": "Pod", **raw}
    expected["metadata"] = {k: v for k, v in raw["metadata"].items() if k != "managedFields"}
    assert stripped.to_dict() == expected
    with pytest.raises(ReadOnlyError):
        stripped.metadata.name = "x"  # type: ignore[misc]
    relabelled = evolve_sealed(pod.metadata, labels={"a": "b"}, owner_references=[])
    assert isinstance(relabelled.labels, FrozenDict) and relabelled.owner_references == []
    with pytest.raises(ReadOnlyError):
        relabelled.labels["c"] = "d"
    with pytest.raises(TypeError):
        evolve_sealed(pod.copy(), spec=None)
    with pytest.raises(TypeError):
        evolve_sealed(pod, no_such_field=1)


def test_repeated_strings_become_one_object_and_values_are_unchanged() -> None:
    conv = make_converter()
    from cloudcoil_cache.models.kubernetes.core.v1 import PodCondition

    sealed = PodCondition.__sealed_class__
    built = [
        conv.structure(
            {
                "type": "Ready",
                "status": "True",
                "reason": f"r-{i}",
                "message": "m",
                "lastTransitionTime": f"2024-01-01T00:00:{i % 60:02d}Z",
            },
            sealed,
        )
        for i in range(_frozen.INTERN_SAMPLE + 10)
    ]
    assert built[0].type == "Ready" and built[0].reason == "r-0"
    assert built[-1].type is built[-2].type and built[-1].status is built[-2].status
    assert built[5].reason == "r-5" and built[5].to_dict()["reason"] == "r-5"
    with pytest.raises(ReadOnlyError):
        built[0].type = "x"  # type: ignore[misc]


def test_a_table_without_a_repeat_in_its_first_look_switches_off() -> None:
    shared = sharing(lambda data: FrozenDict(data), "test-unique")
    stats = _frozen.sharing_stats()[-1]
    for i in range(_frozen.SHARE_FIRST_LOOK):
        shared({"k": i})
    assert not stats.enabled and stats.entries == 0
    assert shared({"k": 1}) == {"k": 1}


def test_a_table_of_many_big_values_keys_them_by_a_keyed_digest_and_still_shares_exactly() -> None:
    shared = sharing(lambda data: FrozenDict(data), "test-big")
    stats = _frozen.sharing_stats()[-1]
    filler = "x" * (2 * _frozen.DIGEST_ABOVE)
    first = shared({"text": filler, "n": 0})
    assert shared({"text": filler, "n": 0}) is first
    assert not stats.digests and max(len(k) for k in stats.table) > _frozen.DIGEST_ABOVE  # few: JSON keys
    kept = [shared({"text": filler, "n": i}) for i in range(1, _frozen.DIGEST_FROM + 1)]
    assert stats.digests and stats.entries == _frozen.DIGEST_FROM + 1
    assert {len(k) for k in stats.table} == {16}  # rekeyed: digests, not JSON
    assert shared({"text": filler, "n": 0}) is first  # an entry from before the switch is found
    assert shared({"text": filler, "n": 7}) is kept[6]
    new = shared({"text": filler, "n": -1})
    assert new == {"text": filler, "n": -1} and all(new is not k for k in kept) and new is not first
    small = shared({"n": 1})
    assert shared({"n": 1}) is small and b'{"n":1}' in stats.table  # small keys stay JSON
    assert _frozen._digest(b"same") == _frozen._digest(b"same") != _frozen._digest(b"Same")


@pytest.mark.parametrize("size", [0, 1, 2046, 2047, 2048, 4095, 10_000])
def test_a_keyed_digest_fed_in_pieces_is_the_digest_of_the_whole(size: int) -> None:
    import hashlib
    import os

    data = os.urandom(size)
    whole = hashlib.blake2b(data, digest_size=16, key=_frozen._SECRET).digest()
    assert _frozen.keyed_digest(data, 16) == whole
    assert _frozen.keyed_digest(data + b"x", 16) != whole


def test_a_sampling_table_does_not_hold_what_a_few_dozen_deleted_objects_left() -> None:
    shared = sharing(FrozenDict, "test-sampling")
    stats = _frozen.sharing_stats()[-1]
    for i in range(_frozen.SHARE_FIRST_LOOK - 6):  # unique values, dropped at once: still sampling
        shared({"uid": f"u-{i}"})
    gc.collect()
    assert stats.enabled
    assert stats.entries <= 2 * _frozen._SWEEP_AT


def _share_owner_references(repeat: Any) -> Any:
    conv = make_converter()
    sealed = OwnerReference.__sealed_class__
    for i in range(_frozen.SHARE_SAMPLE + 10):
        name = "shared" if repeat(i) else f"n-{i}"
        conv.structure({"apiVersion": "v1", "kind": "X", "name": name, "uid": f"u-{name}"}, sealed)
    return conv, [s for s in _frozen.sharing_stats() if s.name == "OwnerReference"][-1]


def test_a_table_with_a_quarter_or_more_repeats_stays_on() -> None:
    """kube-apiserver's fresh pods: one managedFields entry repeats across a ReplicaSet, the other
    names the pod's IP, so just under half the values repeat: the table must stay on."""
    conv, stats = _share_owner_references(lambda i: i % 5 in (1, 3))  # 40%; the 4,096th a miss
    assert stats.enabled and not stats.sampling
    sealed = OwnerReference.__sealed_class__
    again = [
        conv.structure({"apiVersion": "v1", "kind": "X", "name": "shared", "uid": "u-shared"}, sealed) for _ in range(2)
    ]
    assert again[0] is again[1]


def test_the_sample_is_judged_even_when_its_last_input_is_a_repeat() -> None:
    _conv, stats = _share_owner_references(lambda i: i % 10 == 5)  # 10%; the 4,096th (i=4095) a repeat
    assert not stats.enabled and stats.entries == 0


def _fresh(text: str) -> str:
    """An equal string that is a new object (a literal would be one constant object everywhere)."""
    return "".join(list(text))


def test_generated_code_interns_kept_attributes_of_nested_objects_after_the_sample() -> None:
    conv = make_converter()
    from cloudcoil_cache.models.kubernetes.core.v1 import PodStatus

    sealed = PodStatus.__sealed_class__
    statuses = [
        conv.structure(
            {
                "phase": _fresh("Running"),
                "conditions": [
                    {"type": _fresh("Ready"), "status": _fresh("True"), "reason": f"r-{i}", "lastProbeTime": None}
                ],
            },
            sealed,
        )
        for i in range(_frozen.INTERN_SAMPLE + 50)
    ]
    late, later = statuses[-2].conditions[0], statuses[-1].conditions[0]
    assert late.type is later.type and late.status is later.status  # interned by the regenerated builder
    assert late.reason == f"r-{_frozen.INTERN_SAMPLE + 48}" and later.reason == f"r-{_frozen.INTERN_SAMPLE + 49}"
    assert statuses[-1].phase is statuses[-2].phase
    assert later.to_dict() == {"type": "Ready", "status": "True", "reason": later.reason, "lastProbeTime": None}
    with pytest.raises(ReadOnlyError):
        later.type = "x"  # type: ignore[misc]


def test_a_table_switched_off_still_builds_exactly_through_the_generated_code() -> None:
    conv = make_converter()
    from cloudcoil_cache.models.kubernetes.core.v1 import PodStatus

    sealed = PodStatus.__sealed_class__
    raws = [
        {"podIP": f"10.0.{i // 250}.{i % 250}", "podIPs": [{"ip": f"10.0.{i // 250}.{i % 250}"}]} for i in range(600)
    ]
    built = [conv.structure(raw, sealed) for raw in raws]
    stats = [s for s in _frozen.sharing_stats() if s.name == "PodIP"][-1]
    assert not stats.enabled  # unique IPs: off, and the PodStatus code calls the builder itself
    assert [b.to_dict() for b in built] == raws
    assert built[-1].pod_ips[0].ip == raws[-1]["podIP"]


def test_a_pods_spec_built_from_its_fingerprint_bytes_is_the_shared_one() -> None:
    from cloudcoil_cache.models._reuse import reusing

    raws = _pods(3)
    reuse = reusing(Pod)
    pods = [reuse(raw, None) for raw in raws]
    assert pods[0].spec is pods[1].spec is Pod.from_dict_sealed(raws[2]).spec
    for raw, pod in zip(raws, pods):
        assert pod == Pod.from_dict(raw) and pod.to_dict() == {"apiVersion": "v1", "kind": "Pod", **raw}
