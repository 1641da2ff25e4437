"""LIST bodies of shapes the streamed (unpaginated) LIST cannot cut into items: parsed whole, and
over ``max_list_bytes`` the informer falls back to pages; a bad body is a typed error either way."""

from __future__ import annotations

import json
import logging
from typing import Any

import attrs
import pytest
from _servers import Exchange, TinyServer

from cloudcoil_cache._http import Transport
from cloudcoil_cache._listwatch import ListWatch
from cloudcoil_cache.caching import Cache, Tuning
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import DecodeError
from cloudcoil_cache.models.kubernetes.core.v1 import Pod

UNPAGINATED = Tuning(page_size=0, read_timeout=5.0, min_watch_duration=0.0)


def _pod(i: int) -> dict[str, Any]:
    return {"metadata": {"name": f"p{i}", "namespace": "default", "resourceVersion": "5", "uid": f"u{i}"}}


def _pretty_then_paged(pods: list[dict[str, Any]]) -> Any:
    """A server whose unpaginated LIST is pretty-printed (no item boundary the client can cut
    without a tokenizer) and whose paginated one is compact; its watches stay silent."""

    def handle(ex: Exchange) -> None:
        if ex.query.get("watch") in ("1", "true"):
            ex.start_chunked()
            ex.hold()
            return
        if "limit" not in ex.query:
            body = {"kind": "PodList", "metadata": {"resourceVersion": "5"}, "items": pods}
            ex.reply(200, json.dumps(body, indent=2).encode())
            return
        start = int(ex.query.get("continue") or 0)
        end = start + int(ex.query["limit"])
        metadata = {"resourceVersion": "5", **({"continue": str(end)} if end < len(pods) else {})}
        ex.reply(200, json.dumps({"kind": "PodList", "metadata": metadata, "items": pods[start:end]}).encode())

    return handle


def test_a_body_that_cannot_be_cut_over_max_list_bytes_falls_back_to_pages_of_200(caplog):
    pods = [_pod(i) for i in range(250)]
    with TinyServer(_pretty_then_paged(pods)) as server:
        whole = len(json.dumps({"items": pods}, indent=2))
        page = len(json.dumps({"items": pods[:200]}))
        assert page < whole
        # pages of 200 exactly
        tuning = attrs.evolve(UNPAGINATED, max_list_bytes=(whole + page) // 2, page_bytes=None)
        config = Config(server=server.url, cache=Cache(resources=[Pod], tuning=tuning, sync_timeout=10))
        with caplog.at_level(logging.WARNING, logger="cloudcoil_cache.caching._reflector"), config:
            assert len(config.cache.get_informer(Pod).list()) == 250  # type: ignore[union-attr]
            refused, *pages = [ex.query for ex in server.requests if "watch" not in ex.query]
            assert "limit" not in refused
            assert [p.get("limit") for p in pages] == ["200", "200"] and pages[1]["continue"] == "200"
        config.close()
    assert "over max_list_bytes" in caplog.text and "pages of 200" in caplog.text


def _stream(url: str) -> list[Any]:
    """Every item of one streamed LIST, structured."""
    with Transport(url, read_timeout=5, max_retries=0) as transport:
        lw: ListWatch[Any] = ListWatch(transport, Pod)
        return [
            item
            for parsed in lw.stream_list(resource_version=None, batch_bytes=50)
            for item in lw.structure_page(parsed).items
        ]


def test_a_pretty_printed_list_is_parsed_whole() -> None:
    pods = [_pod(i) for i in range(20)]
    with TinyServer(_pretty_then_paged(pods)) as server:
        assert [p.metadata.name for p in _stream(server.url)] == [f"p{i}" for i in range(20)]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"<html>hello</html>", "not valid JSON"),
        (b"", "not valid JSON"),
        (b"[1, 2]", "not a list object"),
        (b'{"metadata":{},"items":[' + b'{"metadata":{"name":"a"}},' * 20 + b'{"metadata": ', "not valid JSON"),
        (b'{"metadata":{},"items":[1]}', "cannot structure an item"),
        (b'{"metadata":[1],"items":[]}', "metadata is not an object"),
    ],
)
def test_a_bad_streamed_list_is_a_decode_error_naming_the_request(body: bytes, words: str) -> None:
    with (
        TinyServer(lambda ex: ex.reply(200, body)) as server,
        pytest.raises(DecodeError, match=f"LIST /api/v1/pods: .*{words}"),
    ):
        _stream(server.url)
