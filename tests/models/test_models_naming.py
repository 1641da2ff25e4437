"""Wire names and value types: snake_case attributes, camelCase keys, IntOrString, times."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cloudcoil_cache.apimachinery import ListMeta, ManagedFieldsEntry, ObjectMeta
from cloudcoil_cache.models.kubernetes.apiextensions.v1 import JSONSchemaProps
from cloudcoil_cache.models.kubernetes.apps.v1 import RollingUpdateDeployment
from cloudcoil_cache.models.kubernetes.coordination.v1 import LeaseSpec
from cloudcoil_cache.models.kubernetes.core.v1 import (
    ConfigMap,
    DaemonEndpoint,
    NodeSpec,
    PodStatus,
    ServicePort,
    ServiceSpec,
)
from cloudcoil_cache.models.kubernetes.networking.v1 import NetworkPolicyIngressRule

UTC = datetime.timezone.utc

NAMES = [
    # (class, attribute, wire key, value)
    (ObjectMeta, "resource_version", "resourceVersion", "7"),
    (ObjectMeta, "deletion_grace_period_seconds", "deletionGracePeriodSeconds", 30),
    (ServiceSpec, "cluster_ips", "clusterIPs", ["10.0.0.1"]),
    (NodeSpec, "pod_cidrs", "podCIDRs", ["10.244.0.0/24"]),
    (PodStatus, "pod_ip", "podIP", "10.0.0.2"),
    (DaemonEndpoint, "port", "Port", 10250),
    (ManagedFieldsEntry, "fields_v1", "fieldsV1", {"f:metadata": {}}),
    (ListMeta, "continue_", "continue", "token"),
    (NetworkPolicyIngressRule, "from_", "from", [{"ipBlock": {"cidr": "10.0.0.0/8"}}]),
    (JSONSchemaProps, "not_", "not", {"type": "string"}),
    (JSONSchemaProps, "ref", "$ref", "#/definitions/x"),
    (JSONSchemaProps, "schema", "$schema", "http://json-schema.org/draft-04/schema#"),
    (JSONSchemaProps, "x_kubernetes_list_type", "x-kubernetes-list-type", "map"),
    (
        JSONSchemaProps,
        "x_kubernetes_preserve_unknown_fields",
        "x-kubernetes-preserve-unknown-fields",
        True,
    ),
    (ConfigMap, "binary_data", "binaryData", {"a": "aGVsbG8="}),
]


@pytest.mark.parametrize(("cls", "attr", "wire", "value"), NAMES, ids=[f"{c.__name__}.{a}" for c, a, _, _ in NAMES])
def test_attributes_are_snake_case_and_wire_keys_are_the_specs_names(cls, attr, wire, value) -> None:
    obj = cls.from_dict({wire: value})
    assert getattr(obj, attr) is not None
    assert obj.to_dict() == {
        **({"apiVersion": cls.api_version, "kind": cls.kind} if hasattr(cls, "plural") else {}),
        wire: value,
    }
    assert cls(**{attr: obj.copy().__getattribute__(attr)}).to_dict() == obj.to_dict()


@pytest.mark.parametrize("value", [8080, "http", "25%"], ids=["int", "name", "percent"])
def test_int_or_string_fields_keep_the_type_they_were_sent_with(value) -> None:
    port = ServicePort.from_dict({"port": 80, "targetPort": value})
    assert port.target_port == value and type(port.target_port) is type(value)
    assert RollingUpdateDeployment(max_surge=value).to_dict() == {"maxSurge": value}


def test_quantities_stay_strings() -> None:
    spec = NodeSpec.from_dict({})
    assert spec.pod_cidr is None
    from cloudcoil_cache.models.kubernetes.core.v1 import ResourceRequirements

    req = ResourceRequirements.from_dict({"limits": {"cpu": "500m", "memory": "1.5Gi"}})
    assert req.limits == {"cpu": "500m", "memory": "1.5Gi"}


TIMES = [
    ("Time", "2024-05-01T10:00:00Z", datetime.datetime(2024, 5, 1, 10, 0, tzinfo=UTC)),
    (
        "Time with fraction",
        "2024-05-01T10:00:00.5Z",
        datetime.datetime(2024, 5, 1, 10, 0, 0, 500000, tzinfo=UTC),
    ),
    (
        "Time with offset",
        "2024-05-01T12:00:00+02:00",
        datetime.datetime(2024, 5, 1, 10, 0, tzinfo=UTC),
    ),
    (
        "Time with +00:00",
        "2024-05-01T10:00:00+00:00",
        datetime.datetime(2024, 5, 1, 10, 0, tzinfo=UTC),
    ),
]


@pytest.mark.parametrize(("text", "expected"), [(t, e) for _, t, e in TIMES], ids=[n for n, _, _ in TIMES])
def test_times_become_aware_datetimes_and_round_trip_exactly(text: str, expected: datetime.datetime) -> None:
    meta = ObjectMeta.from_dict({"creationTimestamp": text})
    assert meta.creation_timestamp == expected
    assert isinstance(meta.creation_timestamp, datetime.datetime)
    assert meta.to_dict() == {"creationTimestamp": text}
    assert ObjectMeta.from_dict_sealed({"creationTimestamp": text}).copy().to_dict() == {"creationTimestamp": text}


@pytest.mark.parametrize(
    "text",
    ["2024-05-01T10:00:00.123456Z", "2024-05-01T10:00:00.000000Z", "2024-05-01T10:00:00.1Z"],
    ids=["micros", "zero-micros", "short"],
)
def test_micro_times_round_trip_exactly(text: str) -> None:
    spec = LeaseSpec.from_dict({"renewTime": text})
    assert isinstance(spec.renew_time, datetime.datetime)
    assert spec.to_dict() == {"renewTime": text}


def test_micro_time_keeps_microseconds() -> None:
    spec = LeaseSpec.from_dict({"renewTime": "2024-05-01T10:00:00.123456Z"})
    assert spec.renew_time == datetime.datetime(2024, 5, 1, 10, 0, 0, 123456, tzinfo=UTC)


WRITE_TIMES = [
    (
        "aware UTC",
        datetime.datetime(2024, 5, 1, 10, 0, 7, tzinfo=UTC),
        "2024-05-01T10:00:07Z",
        "2024-05-01T10:00:07.000000Z",
    ),
    (
        "other offset",
        datetime.datetime(2024, 5, 1, 12, 0, 7, 250, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
        "2024-05-01T10:00:07Z",
        "2024-05-01T10:00:07.000250Z",
    ),
    (
        "naive is UTC",
        datetime.datetime(2024, 5, 1, 10, 0, 7),
        "2024-05-01T10:00:07Z",
        "2024-05-01T10:00:07.000000Z",
    ),
]


@pytest.mark.parametrize(
    ("value", "as_time", "as_micro"), [w[1:] for w in WRITE_TIMES], ids=[w[0] for w in WRITE_TIMES]
)
def test_datetimes_set_by_users_are_written_in_the_servers_format(value, as_time, as_micro) -> None:
    assert ObjectMeta(creation_timestamp=value).to_dict() == {"creationTimestamp": as_time}
    assert LeaseSpec(renew_time=value).to_dict() == {"renewTime": as_micro}


def test_a_derived_datetime_is_written_canonically_not_with_the_old_text() -> None:
    meta = ObjectMeta.from_dict({"creationTimestamp": "2024-05-01T12:00:00+02:00"})
    meta.creation_timestamp = meta.creation_timestamp.replace(hour=13)
    assert meta.to_dict() == {"creationTimestamp": "2024-05-01T11:00:00Z"}


@settings(max_examples=100, deadline=None)
@given(st.datetimes(min_value=datetime.datetime(1000, 1, 2), max_value=datetime.datetime(9999, 12, 30)))
def test_canonical_times_round_trip_for_any_instant(value: datetime.datetime) -> None:
    time_text = value.strftime("%Y-%m-%dT%H:%M:%SZ")
    micro_text = value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert ObjectMeta.from_dict({"creationTimestamp": time_text}).to_dict() == {"creationTimestamp": time_text}
    assert LeaseSpec.from_dict({"renewTime": micro_text}).to_dict() == {"renewTime": micro_text}


def test_base64_bytes_stay_base64_text() -> None:
    cm = ConfigMap.from_dict({"binaryData": {"a": "aGVsbG8="}})
    assert cm.binary_data == {"a": "aGVsbG8="}
