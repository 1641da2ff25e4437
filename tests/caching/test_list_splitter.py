"""``_listwatch._split.ListSplitter``: a LIST body cut into batches of items while it arrives, fed in
pieces of every size; whatever the shape, the items and metadata equal one parse of the whole body."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cloudcoil_cache import _json
from cloudcoil_cache._listwatch import _split as _split_module
from cloudcoil_cache._listwatch._split import ListSplitter
from cloudcoil_cache.errors import BodyTooLarge, DecodeError


def _pod(i: int, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": f"p{i}", "namespace": "default", "annotations": {"note": 'he said "},{"metadata":'}},
        "spec": {"containers": [{"name": "a", "env": [{"name": "X", "value": "1"}, {"name": "Y"}]}], **(extra or {})},
    }


def _body(items: list[Any], *, metadata_first: bool = True, rv: str = "42") -> bytes:
    metadata = {"resourceVersion": rv, "continue": ""}
    doc: dict[str, Any] = {"kind": "PodList", "apiVersion": "v1"}
    if metadata_first:
        doc["metadata"] = metadata
    doc["items"] = items
    if not metadata_first:
        doc["metadata"] = metadata
    return json.dumps(doc, separators=(",", ":")).encode()


def _split(body: bytes, piece: int, batch_bytes: int, **kw: Any) -> tuple[list[Any], list[Any], dict[str, Any]]:
    """(batches cut while fed, all items, the list's other keys)."""
    splitter = ListSplitter("LIST /api/v1/pods", batch_bytes=batch_bytes, **kw)
    batches: list[Any] = []
    for at in range(0, len(body), piece):
        if splitter.feed(memoryview(body)[at : at + piece]):
            batches.append(splitter.take())
    rest, head = splitter.finish()
    items = [item for batch in batches for item in batch] + rest
    return batches, items, head


@pytest.mark.parametrize("piece", [1, 7, 64, 1000, 10**9])
@pytest.mark.parametrize("metadata_first", [True, False])
def test_items_and_metadata_equal_one_parse_of_the_body(piece: int, metadata_first: bool) -> None:
    items = [_pod(i) for i in range(60)]
    body = _body(items, metadata_first=metadata_first)
    batches, got, head = _split(body, piece, batch_bytes=2_000)
    assert got == items
    assert head["metadata"]["resourceVersion"] == "42" and head["kind"] == "PodList"
    if piece < len(body):
        assert len(batches) > 3  # cut while it arrived, not parsed at the end
        item_bytes = len(json.dumps(items[0], separators=(",", ":")))
        # a batch is cut once 2,000 bytes are buffered: at most a piece and an item more
        assert all(len(json.dumps(b, separators=(",", ":"))) <= 2_000 + piece + item_bytes for b in batches)


def test_nested_arrays_with_the_same_first_key_are_never_cut_inside() -> None:
    # a StatefulSet-like item: an array of objects whose first key is the items' first key
    templates = [{"metadata": {"name": f"t{k}"}, "spec": {"size": k}} for k in range(30)]
    items = [{"metadata": {"name": f"s{i}"}, "spec": {"volumeClaimTemplates": templates}} for i in range(40)]
    _batches, got, _head = _split(_body(items), 333, batch_bytes=3_000)
    assert got == items


def test_a_body_whose_items_cannot_be_cut_is_parsed_whole_at_the_end() -> None:
    items = [_pod(i) for i in range(30)]
    pretty = json.dumps({"kind": "PodList", "metadata": {"resourceVersion": "7"}, "items": items}, indent=1).encode()
    batches, got, head = _split(pretty, 100, batch_bytes=500)
    assert batches == [] and got == items and head["metadata"] == {"resourceVersion": "7"}


@pytest.mark.parametrize(
    "body",
    [
        b'{"kind":"PodList","metadata":{"resourceVersion":"3"},"items":[]}',
        b'{"kind":"PodList","metadata":{"resourceVersion":"3"},"items":null}',
        b'{"kind":"PodList","metadata":{"resourceVersion":"3"}}',
        b'{"metadata":{"resourceVersion":"3","x":{"items":[1,2]}},"items":[]}',
    ],
)
def test_empty_and_odd_lists(body: bytes) -> None:
    _batches, got, head = _split(body, 5, batch_bytes=10)
    assert got == [] and head["metadata"]["resourceVersion"] == "3"


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (b"not json", "not valid JSON"),
        (b'{"kind":"PodList","items":[{"metadata":{}},', "not valid JSON"),
        (b"[1,2]", "not a list object"),
        (b'{"items":{"a":1}}', "items are not an array"),
    ],
)
def test_malformed_bodies_are_a_decode_error_naming_the_request(body: bytes, what: str) -> None:
    with pytest.raises(DecodeError, match=f"LIST /api/v1/pods: .*{what}"):
        _split(body, 3, batch_bytes=4)


def test_a_cut_item_is_malformed_not_silently_dropped() -> None:
    body = _body([_pod(i) for i in range(40)])
    truncated = body[: len(body) * 2 // 3]
    with pytest.raises(DecodeError):
        _split(truncated, 100, batch_bytes=1_000)


def test_bytes_that_cannot_be_cut_past_max_buffer_are_refused() -> None:
    huge = [_pod(0, {"blob": "x" * 50_000})]
    with pytest.raises(BodyTooLarge, match="max_list_bytes"):
        _split(_body(huge), 1_000, batch_bytes=1_000, max_buffer=20_000)
    # cut in time, the same bound is never reached
    _batches, got, _head = _split(_body([_pod(i) for i in range(200)]), 1_000, batch_bytes=5_000, max_buffer=20_000)
    assert len(got) == 200


def test_items_longer_than_a_batch_do_not_stop_the_cutting() -> None:
    items = [_pod(i, {"blob": "x" * 3_000}) for i in range(40)]
    batches, got, _head = _split(_body(items), 500, batch_bytes=1_000)
    assert got == items
    assert len(batches) > 30  # every boundary cut, though each item is three batches long


@pytest.mark.skipif(_json.PARSE_BUFFER_FACTOR is None, reason="batches are parsed in pieces with orjson only")
@pytest.mark.parametrize("nested", [False, True], ids=["pods", "nested-same-first-key"])
def test_a_batch_parsed_in_pieces_gives_the_same_items(monkeypatch: pytest.MonkeyPatch, nested: bool) -> None:
    # pieces of ~600 bytes within batches of 8 KB; with nested objects whose first key is the items'
    # own, some piece boundaries fall inside an item: that batch is parsed whole
    monkeypatch.setattr(_split_module, "PARSE_PIECE", 600)
    extra = {"volumeClaimTemplates": [{"metadata": {"name": f"v{k}"}} for k in range(3)]} if nested else None
    items = [_pod(i, extra) for i in range(200)]
    batches, got, _head = _split(_body(items), 4096, batch_bytes=8_000)
    assert got == items
    assert len(batches) > 3
