"""Decoding of Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``) to JSON.

A body is ``k8s\\x00`` then a ``runtime.Unknown`` whose ``raw`` is the object's message; the
field numbers come from ``_data/protobuf.json.gz`` (generated from Kubernetes' ``generated.proto``
by ``tools/generate_fake_protobuf.py``). Go's protobuf encoder writes every non-pointer field, so
empty strings, zeros, ``false`` and empty messages are dropped as Go's JSON ``omitempty`` would
(``replicas`` is kept: it is a pointer whose 0 matters).
"""

from __future__ import annotations

import base64
import gzip
import json
import struct
import threading
from datetime import datetime, timezone
from importlib import resources
from typing import Any

__all__ = ["ProtobufError", "decode_body", "message_for"]

MAGIC = b"k8s\x00"
_META = "k8s.io.apimachinery.pkg.apis.meta.v1."
_lock = threading.Lock()
_table: dict[str, dict[str, list[str]]] | None = None
_KEEP_ZERO = frozenset(
    {"replicas", "minAvailable", "maxUnavailable", "value", "port", "containerPort", "allowed", "denied"}
)


class ProtobufError(ValueError):
    """The body is not a Kubernetes protobuf message the fake can decode."""


def _messages() -> dict[str, dict[str, list[str]]]:
    global _table
    if _table is None:
        with _lock:
            if _table is None:
                raw = (
                    resources.files("cloudcoil_cache.testing")
                    .joinpath("_data")
                    .joinpath("protobuf.json.gz")
                    .read_bytes()
                )
                _table = json.loads(gzip.decompress(raw))
    return _table


def message_for(definition: str) -> str:
    """The protobuf message of an OpenAPI definition (``io.k8s.api.apps.v1.Deployment``)."""
    if definition.startswith("io.k8s."):
        return "k8s.io." + definition[len("io.k8s.") :].replace("-", "_")
    return definition


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    out = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _scalar(kind: str, wire: int, value: Any) -> Any:
    if kind == "string":
        return bytes(value).decode("utf-8")
    if kind == "bytes":
        return base64.b64encode(bytes(value)).decode()
    if kind == "bool":
        return bool(value)
    if kind in ("int32", "int64"):
        return value - (1 << 64) if value >= 1 << 63 else value
    if kind in ("uint32", "uint64"):
        return value
    if kind in ("sint32", "sint64"):
        return (value >> 1) ^ -(value & 1)
    if kind == "double":
        return struct.unpack("<d", value)[0]
    if kind == "float":
        return struct.unpack("<f", value)[0]
    raise ProtobufError(f"unsupported scalar {kind}")


def _repeated_scalars(kind: str, wire: int, value: Any) -> list[Any]:
    if wire == 2 and kind not in ("string", "bytes"):  # packed
        items = []
        pos = 0
        while pos < len(value):
            if kind in ("double",):
                items.append(_scalar(kind, 1, value[pos : pos + 8]))
                pos += 8
            elif kind == "float":
                items.append(_scalar(kind, 5, value[pos : pos + 4]))
                pos += 4
            else:
                raw, pos = _varint(value, pos)
                items.append(_scalar(kind, 0, raw))
        return items
    return [_scalar(kind, wire, value)]


def _special(name: str, fields: list[tuple[int, int, Any]]) -> tuple[bool, Any]:
    """Messages JSON shows as scalars: times, quantities, int-or-strings, raw JSON."""
    by_number = {n: v for n, _, v in fields}
    if name in (_META + "Time", _META + "MicroTime"):
        seconds = _scalar("int64", 0, by_number.get(1, 0))
        if not seconds and not by_number.get(2):
            return True, None  # Go's zero time
        stamp = datetime.fromtimestamp(seconds, timezone.utc)
        if name.endswith("MicroTime"):
            nanos = by_number.get(2, 0)
            return True, stamp.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"
        return True, stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
    if name == "k8s.io.apimachinery.pkg.util.intstr.IntOrString":
        if by_number.get(1, 0) == 1:
            return True, bytes(by_number.get(3, b"")).decode()
        return True, _scalar("int32", 0, by_number.get(2, 0))
    if name == "k8s.io.apimachinery.pkg.api.resource.Quantity":
        return True, bytes(by_number.get(1, b"")).decode()
    if name in (
        "k8s.io.apimachinery.pkg.runtime.RawExtension",
        _META + "FieldsV1",
        "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON",
    ):
        raw = bytes(by_number.get(1, b""))
        return True, json.loads(raw) if raw else None
    if name == _META + "Duration":
        return True, f"{_scalar('int64', 0, by_number.get(1, 0)) / 1e9:g}s"
    return False, None


def _empty(value: Any, key: str) -> bool:
    if key in _KEEP_ZERO:
        return value is None
    return value is None or value == "" or value is False or value == 0 or value == {} or value == []


def _message(name: str, data: bytes) -> Any:
    fields = _fields(data)
    special, value = _special(name, fields)
    if special:
        return value
    spec = _messages().get(name)
    if spec is None:
        raise ProtobufError(f"unknown protobuf message {name}")
    out: dict[str, Any] = {}
    for number, wire, raw in fields:
        field = spec.get(str(number))
        if field is None:
            continue  # an unknown field: dropped, as the real decoder does
        key, kind, label = field
        if kind.startswith("map<"):
            key_kind, value_kind = kind[4:-1].split(",")
            entry = {n: (w, v) for n, w, v in _fields(bytes(raw))}
            map_key = _decode_one(key_kind, *entry.get(1, (2, b"")))
            map_value = _decode_one(value_kind, *entry.get(2, (2, b"")))
            out.setdefault(key, {})[map_key] = map_value
        elif label == "repeated":
            if kind in _SCALAR_KINDS:
                out.setdefault(key, []).extend(_repeated_scalars(kind, wire, raw))
            else:
                out.setdefault(key, []).append(_message(kind, bytes(raw)))
        else:
            out[key] = _decode_one(kind, wire, raw)
    return {k: v for k, v in out.items() if not _empty(v, k)}


_SCALAR_KINDS = frozenset(
    {"string", "bytes", "bool", "int32", "int64", "uint32", "uint64", "sint32", "sint64", "double", "float"}
)


def _decode_one(kind: str, wire: int, raw: Any) -> Any:
    if kind in _SCALAR_KINDS:
        return _scalar(kind, wire, raw)
    return _message(kind, bytes(raw))


def decode_body(body: bytes, definition_of: Any) -> dict[str, Any]:
    """A protobuf request body as the JSON object it stands for.

    ``definition_of(api_version, kind)`` names the OpenAPI definition of a kind (None: unknown).
    Raises ``ProtobufError``.
    """
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf magic number")
    unknown = {n: v for n, _, v in _fields(body[len(MAGIC) :])}
    type_meta = {n: bytes(v).decode() for n, _, v in _fields(bytes(unknown.get(1, b"")))}
    api_version, kind = type_meta.get(1, ""), type_meta.get(2, "")
    definition = definition_of(api_version, kind)
    if definition is None:
        raise ProtobufError(f"no protobuf message for {api_version}/{kind}")
    obj = _message(message_for(definition), bytes(unknown.get(2, b"")))
    if not isinstance(obj, dict):
        raise ProtobufError("the body is not an object")
    return {"apiVersion": api_version, "kind": kind, **obj}
