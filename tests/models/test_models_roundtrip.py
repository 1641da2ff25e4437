"""Round trips between wire dicts and models: the realistic corpus, unknown fields, hypothesis."""

from __future__ import annotations

import json

import pytest
from _model_corpus import load, names, with_unknown_fields
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cloudcoil_cache import models, resources
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Container, Pod
from cloudcoil_cache.resources import GenericResource

Widget = GenericResource.define(api_version="example.com/v1", kind="Widget", plural="widgets", namespaced=True)


def class_for(obj: dict) -> type[models.Resource]:
    cls = resources.resource_class_for(obj["apiVersion"], obj["kind"])
    assert cls is not None, (obj["apiVersion"], obj["kind"])
    return cls


@pytest.mark.parametrize("name", names())
@pytest.mark.parametrize("sealed", [False, True], ids=["editable", "sealed"])
def test_corpus_objects_round_trip_exactly(name: str, sealed: bool) -> None:
    wire = load(name)
    cls = class_for(wire)
    obj = cls.from_dict_sealed(wire) if sealed else cls.from_dict(wire)
    assert obj.to_dict() == wire
    assert models.unstructure(obj) == wire


@pytest.mark.parametrize("name", names())
def test_fields_unknown_to_the_model_are_kept_and_written_back(name: str) -> None:
    wire = with_unknown_fields(load(name))
    cls = class_for(wire)
    for obj in (cls.from_dict(wire), cls.from_dict_sealed(wire)):
        assert obj.to_dict() == wire
        assert obj.copy().to_dict() == wire


def test_an_update_after_editing_a_copy_keeps_unknown_nested_fields() -> None:
    wire = with_unknown_fields(load("pod"))
    pod = Pod.from_dict_sealed(wire).copy()
    pod.spec.containers[0].image = "nginx:1.26"
    out = pod.to_dict()
    assert out["spec"]["containers"][0]["newField"] == {"enabled": True}
    assert out["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert out["status"]["futureThing"] == wire["status"]["futureThing"]


def test_known_fields_sent_as_null_are_written_back_as_null() -> None:
    wire = load("deployment")
    assert wire["spec"]["template"]["metadata"]["creationTimestamp"] is None
    out = class_for(wire).from_dict(wire).to_dict()
    assert out["spec"]["template"]["metadata"] == wire["spec"]["template"]["metadata"]


def test_none_fields_are_omitted_from_the_wire_form() -> None:
    assert Container(name="web").to_dict() == {"name": "web"}


def test_a_watch_bookmark_with_only_a_resource_version_decodes() -> None:
    wire = {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "12345"}}
    pod = Pod.from_dict_sealed(wire)
    assert pod.resource_version == "12345"
    assert pod.spec is None and pod.name is None
    assert pod.to_dict() == wire


def test_a_wire_kind_or_api_version_that_differs_from_the_class_is_kept() -> None:
    wire = {"kind": "Pod", "apiVersion": "v1beta9", "metadata": {"name": "a"}}
    assert Pod.from_dict(wire).to_dict() == wire


def test_to_dict_output_is_plain_json_that_shares_nothing_with_the_object() -> None:
    wire = with_unknown_fields(load("pod"))
    pod = Pod.from_dict_sealed(wire)
    out = pod.to_dict()
    assert json.loads(json.dumps(out)) == wire
    out["metadata"]["labels"]["app"] = "changed"
    out["metadata"]["managedFields"][0]["fieldsV1"]["f:metadata"].clear()
    out["futureTopLevel"]["a"].append(3)
    assert pod.to_dict() == wire


def test_from_dict_does_not_alias_the_callers_containers() -> None:
    wire = load("configmap")
    cm = ConfigMap.from_dict(wire)
    wire["data"]["LOG_LEVEL"] = "debug"
    assert cm.data["LOG_LEVEL"] == "info"


# -- hypothesis ---------------------------------------------------------------------------------

_json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8)
_json = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
_unknown_key = st.text(min_size=1, max_size=10).map(lambda s: "x" + s)
_quantity = st.sampled_from(["100m", "1", "256Mi", "1.5Gi", "0"])
_int_or_str = st.integers(0, 65535) | st.sampled_from(["http", "25%", "metrics"])
_time = st.datetimes(
    min_value=__import__("datetime").datetime(1970, 1, 2),
    max_value=__import__("datetime").datetime(2100, 1, 1),
).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))


def _optional(d: dict) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries({}, optional=d)


_container = _optional(
    {
        "name": st.text(max_size=10),
        "image": st.text(max_size=10),
        "args": st.lists(st.text(max_size=5), max_size=3),
        "ports": st.lists(
            _optional({"containerPort": st.integers(1, 65535), "name": st.text(max_size=5)}),
            max_size=2,
        ),
        "resources": _optional({"limits": st.dictionaries(st.sampled_from(["cpu", "memory"]), _quantity)}),
        "livenessProbe": _optional({"httpGet": _optional({"port": _int_or_str, "path": st.text(max_size=5)})}),
    }
)
_pod = st.builds(
    lambda meta, spec, status, extra: {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": status,
        **extra,
    },
    _optional(
        {
            "name": st.text(max_size=10),
            "labels": st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
            "creationTimestamp": _time,
            "annotations": st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
        }
    ),
    st.fixed_dictionaries({"containers": st.lists(_container, max_size=2)}),
    _optional(
        {
            "phase": st.sampled_from(["Running", "Pending"]),
            "startTime": _time,
            "conditions": st.lists(_optional({"type": st.text(max_size=5), "lastTransitionTime": _time}), max_size=2),
        }
    ),
    st.dictionaries(_unknown_key, _json, max_size=2),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pod)
def test_generated_pods_round_trip(wire: dict) -> None:
    assert Pod.from_dict(wire).to_dict() == wire
    sealed = Pod.from_dict_sealed(wire)
    assert sealed.to_dict() == wire
    assert sealed.copy() == sealed


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.text(max_size=8), _json, max_size=4),
    st.dictionaries(_unknown_key, _json, max_size=2),
)
def test_generated_custom_resources_round_trip(spec: dict, extra: dict) -> None:
    wire = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": spec,
        **extra,
    }
    assert Widget.from_dict(wire).to_dict() == wire
    assert Widget.from_dict_sealed(wire).to_dict() == wire


def test_equal_canonical_times_decode_to_one_datetime_and_the_rest_keep_their_text() -> None:
    from cloudcoil_cache.models import _time

    pods = [
        Pod.from_dict({"metadata": {"name": f"p{i}", "creationTimestamp": "2024-06-05T00:02:28Z"}}) for i in range(3)
    ]
    assert len({id(p.metadata.creation_timestamp) for p in pods}) == 1
    assert pods[0].metadata.creation_timestamp.isoformat() == "2024-06-05T00:02:28+00:00"  # type: ignore[union-attr]
    odd = Pod.from_dict({"metadata": {"name": "q", "creationTimestamp": "2024-06-05T02:02:28+02:00"}})
    assert odd.to_dict()["metadata"]["creationTimestamp"] == "2024-06-05T02:02:28+02:00"
    with pytest.raises(ValueError, match="not a Kubernetes Time"):
        _time.parse_time("2024-13-45T00:00:00Z")
    for n in range(_time._RECENT_TIMES_MAX + 10):  # bounded: emptied when full
        _time.parse_time(f"2020-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z")
    assert 0 < len(_time._recent_times) <= _time._RECENT_TIMES_MAX
