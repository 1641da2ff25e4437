"""cloudcoil_cache._json: the same behaviour with orjson and with the stdlib fallback."""

from __future__ import annotations

import importlib.util
import sys

import pytest

import cloudcoil_cache._json as fast
from cloudcoil_cache import errors


@pytest.fixture(scope="module")
def stdlib_only():
    """A second copy of the module imported while orjson is unavailable."""
    saved = sys.modules.get("orjson")
    sys.modules["orjson"] = None  # type: ignore[assignment]  # makes `import orjson` fail
    try:
        spec = importlib.util.spec_from_file_location("cloudcoil_cache._json_stdlib", fast.__file__)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            del sys.modules["orjson"]
        else:
            sys.modules["orjson"] = saved
    assert module.HAVE_ORJSON is False
    return module


@pytest.fixture(params=["default", "stdlib"])
def json_module(request, stdlib_only):
    return fast if request.param == "default" else stdlib_only


@pytest.mark.parametrize(
    "data",
    [b'{"a":[1,2,{"b":"\xc3\xa9"}]}', '{"a":[1,2,{"b":"é"}]}', memoryview(b'{"a":[1,2,{"b":"\xc3\xa9"}]}')],
    ids=["bytes", "str", "memoryview"],
)
def test_loads_accepts_bytes_str_and_memoryview(json_module, data):
    assert json_module.loads(data) == {"a": [1, 2, {"b": "é"}]}


def test_invalid_json_raises_decode_error_naming_the_size_never_the_content(json_module):
    with pytest.raises(errors.DecodeError, match=r"invalid JSON .*<512 bytes>") as caught:
        json_module.loads(b'{"type":"ADD' + b"s3cr3t" * 83 + b"xx")
    assert "s3cr3t" not in str(caught.value)


def test_dumps_gives_compact_utf8_bytes_that_round_trip(json_module):
    obj = {"name": "pod-é", "n": [1, None, True]}
    out = json_module.dumps(obj)
    assert isinstance(out, bytes) and b" " not in out
    assert json_module.loads(out) == obj


def test_key_is_equal_exactly_for_equal_json_values_of_equal_types(json_module):
    key = json_module.key
    pod = {"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"n": [1, 2.5, True, None, "é"]}}
    same = {"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"n": [1, 2.5, True, None, "é"]}}
    assert isinstance(key(pod), bytes) and key(pod) == key(same)
    # 1, 1.0 and True are equal in Python, never as JSON values: their keys differ
    assert len({key({"v": 1}), key({"v": 1.0}), key({"v": True}), key({"v": "1"}), key({"v": None})}) == 5
    assert key({"a": 1, "b": 2}) != key({"b": 2, "a": 1})  # order kept: a key is never a wrong match
    assert key([]) != key({}) and key([[]]) != key([{}])


class _Str(str):
    pass


class _Int(int):
    pass


@pytest.mark.parametrize(
    "value",
    [{"t": __import__("datetime").datetime(2024, 1, 1)}, {"s": _Str("x")}, [_Str("x")], {"d": {"n": _Int(1)}}],
    ids=["datetime", "str-subclass-value", "str-subclass-in-list", "int-subclass-nested"],
)
def test_key_refuses_what_json_only_represents_by_conversion(json_module, value):
    with pytest.raises(TypeError):
        json_module.key(value)


def test_stdlib_key_refuses_a_value_too_deep_with_a_type_error(stdlib_only):
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(TypeError):
        stdlib_only.key(deep)
