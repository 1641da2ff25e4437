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
