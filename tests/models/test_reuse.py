"""models._reuse: a new version shares its previous version's unchanged top-level values, and is
exactly what a full decode builds."""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
from typing import Any

import pytest

from cloudcoil_cache.caching import strip_managed_fields
from cloudcoil_cache.models import is_sealed
from cloudcoil_cache.models._convert import evolve_sealed
from cloudcoil_cache.models._reuse import reusing
from cloudcoil_cache.models.kubernetes.apps.v1 import Deployment
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod
from cloudcoil_cache.testing import make_pod

decode = reusing(Pod)


def _next(raw: dict[str, Any], rv: int, **changes: Any) -> dict[str, Any]:
    new = copy.deepcopy(raw)
    new["metadata"]["resourceVersion"] = str(rv)
    new.update(copy.deepcopy(changes))
    return new


def test_a_status_update_shares_the_spec_and_builds_exactly_the_full_decode(without_content_sharing):
    old_raw = make_pod("a", "default")
    old = decode(copy.deepcopy(old_raw), None)
    new_raw = _next(old_raw, 99, status={**old_raw["status"], "phase": "Failed"})
    new = decode(copy.deepcopy(new_raw), old)
    assert new.spec is old.spec
    assert new.status is not old.status and new.status.phase == "Failed"
    assert new.metadata is not old.metadata and new.metadata.resource_version == "99"
    full = Pod.from_dict_sealed(new_raw)
    assert new == full and new.to_dict() == full.to_dict() == Pod.from_dict(new_raw).to_dict()
    assert is_sealed(new) and is_sealed(new.spec)


def test_a_spec_change_anywhere_inside_is_decoded_again(without_content_sharing):
    old_raw = make_pod("a", "default")
    old = decode(copy.deepcopy(old_raw), None)
    spec = copy.deepcopy(old_raw["spec"])
    spec["containers"][-1]["image"] = "registry.example/other:2"
    new = decode(_next(old_raw, 5, spec=spec), old)
    assert new.spec is not old.spec
    assert new.spec.containers[-1].image == "registry.example/other:2"
    assert new.status is old.status
    assert new == Pod.from_dict_sealed(_next(old_raw, 5, spec=spec))


def test_equal_json_with_another_type_is_not_the_same_value():
    old_raw = {"metadata": {"name": "c"}, "data": {"n": "1"}}
    cm = reusing(ConfigMap)
    old = cm(copy.deepcopy(old_raw), None)
    new = cm({"metadata": {"name": "c"}, "data": {"n": "1", "m": "2"}}, old)
    assert new.data == {"n": "1", "m": "2"} and new.data is not old.data
    same = cm({"metadata": {"name": "c"}, "data": {"n": "1"}}, new)
    assert same.data == {"n": "1"} and same.data is not new.data


def test_a_previous_version_changed_by_a_transform_never_lends_its_values():
    raw = make_pod("a", "default")
    full = Pod.from_dict_sealed(copy.deepcopy(raw))
    decoded = decode(copy.deepcopy(raw), None)
    changed_spec = decoded.spec.evolve(node_name="changed-by-a-transform")
    for previous in (
        evolve_sealed(decoded, spec=changed_spec),  # what a transform returns: a new object
        strip_managed_fields(evolve_sealed(decoded, spec=changed_spec)),
        Pod.from_dict_sealed({**copy.deepcopy(raw), "spec": changed_spec.to_dict()}),  # no fingerprints
        Pod.from_dict({**copy.deepcopy(raw), "spec": changed_spec.to_dict()}),  # editable
    ):
        again = decode(copy.deepcopy(raw), previous)
        assert again.spec.node_name == full.spec.node_name != "changed-by-a-transform"
        assert again == full
    deployment = reusing(Deployment)({"metadata": {"name": "a"}, "spec": {"replicas": 1}}, None)
    assert decode(copy.deepcopy(raw), deployment) == full  # another kind: ignored


def test_the_fingerprints_are_invisible():
    raw = make_pod("a", "default")
    pod = decode(copy.deepcopy(raw), None)
    assert pod._cc_digest  # what the next version is compared with
    assert "_cc_digest" not in repr(pod) and "digest" not in str(pod.to_dict())
    assert pod == Pod.from_dict_sealed(raw)
    for other in (pod.copy(), pickle.loads(pickle.dumps(pod)), copy.deepcopy(pod)):
        assert other == pod and not hasattr(other, "_cc_digest")


def test_absent_and_null_values_and_bad_input():
    bare = decode({"metadata": {"name": "a"}}, None)
    assert bare.spec is None and bare.status is None
    null = decode({"metadata": {"name": "a"}, "spec": None}, bare)
    assert null == Pod.from_dict_sealed({"metadata": {"name": "a"}, "spec": None})
    with pytest.raises(TypeError, match="Pod.spec expects an object"):
        decode({"metadata": {"name": "a"}, "spec": ["not", "an", "object"]}, bare)
    with pytest.raises(Exception, match="expects a JSON object"):
        decode(["not a pod"], None)


def test_without_fingerprinting_a_first_version_gets_none_and_its_next_is_decoded_in_full(without_content_sharing):
    raw = make_pod("a", "default")
    bulk = decode(copy.deepcopy(raw), None, False)  # a first list's object
    assert not hasattr(bulk, "_cc_digest") and bulk == Pod.from_dict_sealed(raw)
    update = decode(_next(raw, 7), bulk, False)  # an update always fingerprints
    assert update.spec is not bulk.spec and update == Pod.from_dict_sealed(_next(raw, 7))
    assert decode(_next(raw, 8), update, False).spec is update.spec


def test_with_a_fixed_hash_seed_fingerprints_use_a_keyed_hash_and_sharing_still_works():
    script = (
        "import copy\n"
        "from cloudcoil_cache.models import _reuse\n"
        "from cloudcoil_cache.models.kubernetes.core.v1 import Pod\n"
        "from cloudcoil_cache.testing import make_pod\n"
        "assert _reuse._fingerprint is _reuse._seeded_hash\n"
        "decode = _reuse.reusing(Pod)\n"
        "raw = make_pod('a', 'default')\n"
        "old = decode(copy.deepcopy(raw), None)\n"
        "new_raw = copy.deepcopy(raw); new_raw['status']['phase'] = 'Failed'\n"
        "new = decode(new_raw, old)\n"
        "assert new.spec is old.spec and new.status.phase == 'Failed' and new == Pod.from_dict_sealed(new_raw)\n"
        "print('ok')\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr[-2000:]


def _entries(raw: dict[str, Any]) -> list[dict[str, Any]]:
    return raw["metadata"]["managedFields"]  # type: ignore[no-any-return]


def test_unchanged_managed_fields_entries_are_shared_wherever_they_moved(without_content_sharing):
    old_raw = make_pod("a", "default")
    old = decode(copy.deepcopy(old_raw), None)
    assert len(_entries(old_raw)) == 2
    new_raw = _next(old_raw, 8)
    entry = next(e for e in _entries(new_raw) if e["manager"] == "kubelet")
    entry["time"] = "2030-01-01T00:00:00Z"  # the kubelet's entry changed: it moves to the end
    moved = [e for e in _entries(new_raw) if e is not entry]
    new_raw["metadata"]["managedFields"] = [*moved, entry, {"manager": "kubectl", "operation": "Update"}]
    new = decode(copy.deepcopy(new_raw), old)
    full = Pod.from_dict_sealed(new_raw)
    assert new == full and new.to_dict() == full.to_dict() and is_sealed(new.metadata)
    assert new.metadata is not old.metadata and new.metadata.resource_version == "8"
    (controller,) = (e for e in old.metadata.managed_fields if e.manager != "kubelet")
    assert new.metadata.managed_fields[0] is controller  # shared, from index 1 to index 0
    assert new.metadata.managed_fields[1] not in old.metadata.managed_fields
    assert new.metadata.managed_fields[1].time == full.metadata.managed_fields[1].time
    assert new.metadata.managed_fields[2].manager == "kubectl"
    again = decode(_next(new_raw, 9), new)  # everything unchanged but the resourceVersion
    assert all(a is b for a, b in zip(again.metadata.managed_fields, new.metadata.managed_fields))
    assert again == Pod.from_dict_sealed(_next(new_raw, 9))


def test_managed_fields_entries_share_only_equal_json_and_nothing_leaks_into_other_metadata():
    old_raw = make_pod("a", "default")
    old = decode(copy.deepcopy(old_raw), None)
    changes: list[Any] = [
        lambda entries: entries[0].__setitem__("apiVersion", "v2"),  # one value inside
        lambda entries: entries[1]["fieldsV1"].__setitem__("f:extra", {}),  # deep inside
        lambda entries: entries.reverse(),  # only the order: every entry shared
        lambda entries: entries.clear(),  # none left
        lambda entries: entries.__setitem__(0, {**entries[0], "time": None}),  # a null
    ]
    shared = []
    for change in changes:
        new_raw = _next(old_raw, 3)
        change(_entries(new_raw))
        new = decode(copy.deepcopy(new_raw), old)
        full = Pod.from_dict_sealed(new_raw)
        assert new == full and new.to_dict() == full.to_dict()
        olds = {id(e) for e in old.metadata.managed_fields}
        shared.append(sum(id(e) in olds for e in new.metadata.managed_fields or ()))
    assert shared == [1, 1, 2, 0, 1]
    # the metadata built around shared entries is filed in no sharing table under its other values
    bare = copy.deepcopy(old_raw)
    del bare["metadata"]["managedFields"]
    assert Pod.from_dict_sealed(bare).metadata.managed_fields is None
    assert decode(copy.deepcopy(bare), old).metadata.managed_fields is None


def test_managed_fields_that_are_not_plain_json_or_not_objects_are_decoded_as_usual():
    old_raw = make_pod("a", "default")
    old = decode(copy.deepcopy(old_raw), None)
    new_raw = _next(old_raw, 4)
    _entries(new_raw).append("not an entry")
    with pytest.raises(TypeError, match="expects a JSON object"):
        decode(new_raw, old)
    many = _next(old_raw, 5)
    many["metadata"]["managedFields"] = [{"manager": f"m{i}", "operation": "Update"} for i in range(40)]
    big = decode(copy.deepcopy(many), old)  # more entries than fingerprinted: decoded in full
    assert big == Pod.from_dict_sealed(many) and decode(copy.deepcopy(many), big) == big


def test_a_bulk_first_version_without_entry_fingerprints_shares_its_entries_from_its_next_version(
    without_content_sharing,
):
    raw = make_pod("a", "default")
    bulk = decode(copy.deepcopy(raw), None, True, False)  # a first list's object
    assert bulk == Pod.from_dict_sealed(raw)
    first = decode(_next(raw, 7), bulk, True, False)  # an update fingerprints its entries
    assert first.spec is bulk.spec and first == Pod.from_dict_sealed(_next(raw, 7))
    assert not any(a is b for a, b in zip(first.metadata.managed_fields, bulk.metadata.managed_fields))
    second = decode(_next(raw, 8), first, True, False)
    assert all(a is b for a, b in zip(second.metadata.managed_fields, first.metadata.managed_fields))
    assert second == Pod.from_dict_sealed(_next(raw, 8))


def test_whole_hands_back_a_version_served_unchanged_but_not_one_served_differently():
    """What a relist uses to hand back the stored object: every top-level value but metadata as the
    stored version was decoded from (a CRD's new default or a conversion can change what is served
    under one resourceVersion), with its uid and resourceVersion."""
    raw = make_pod("a", "default")
    raw["metadata"].update(uid="uid-a", resourceVersion="7")  # as listed: a version of one object
    stored = decode(copy.deepcopy(raw), None)
    assert decode(copy.deepcopy(raw), stored, whole=True) is stored
    assert decode(copy.deepcopy(raw), stored) is not stored  # only when asked
    defaulted = copy.deepcopy(raw)
    defaulted["spec"]["containers"][0]["imagePullPolicy"] = "Always"  # same resourceVersion
    assert decode(defaulted, stored, whole=True).spec.containers[0].image_pull_policy == "Always"
    without_status = {k: v for k, v in copy.deepcopy(raw).items() if k != "status"}
    assert decode(without_status, stored, whole=True) is not stored
    assert decode(_next(raw, 99), stored, whole=True) is not stored  # another version
    built_otherwise = Pod.from_dict_sealed(raw)  # no fingerprints
    assert decode(copy.deepcopy(raw), built_otherwise, whole=True) is not built_otherwise
    cm = reusing(ConfigMap)
    data = {"metadata": {"name": "c", "uid": "u", "resourceVersion": "1"}, "data": {"n": "1"}}
    stored_cm = cm(copy.deepcopy(data), None)
    assert cm(copy.deepcopy(data), stored_cm, whole=True) is stored_cm
