"""Server answers that are not JSON, not the expected shape, or endless: a typed error naming the
problem, a bounded watch line (a 100 MB line never reaches memory), and no thread left behind."""

from __future__ import annotations

import json
import threading
import tracemalloc
from typing import Any, Callable

import pytest
from _clean import fails_cleanly
from _servers import Exchange, TinyServer

from cloudcoil_cache._http import MAX_LINE_BYTES, Transport
from cloudcoil_cache._listwatch import ListWatch
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import (
    APIError,
    DecodeError,
    LineTooLong,
    ProtocolError,
    ServerError,
)
from cloudcoil_cache.models.kubernetes.core.v1 import Pod

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "resourceVersion": "5", "uid": "u1"},
}


def reply(status: int, body: bytes, content_type: str = "application/json") -> Callable[[Exchange], None]:
    return lambda ex: ex.reply(status, body, content_type=content_type)


def watch_lines(*lines: bytes) -> Callable[[Exchange], None]:
    """A LIST that works, then a watch that sends ``lines`` and ends."""

    def handle(ex: Exchange) -> None:
        if ex.query.get("watch") not in ("1", "true"):
            ex.reply(
                200,
                json.dumps(
                    {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "5"}, "items": [POD]}
                ).encode(),
            )
            return
        ex.start_chunked()
        for line in lines:
            ex.chunk(line + b"\n")
        ex.end_chunks()

    return handle


# (id, handler, action on a ListWatch, error type, words)
LIST = "list"
WATCH = "watch"
ROWS: list[Any] = [
    ("list-html", reply(200, b"<html>hello</html>", "text/html"), LIST, DecodeError, r"JSON|decode"),
    ("list-empty-body", reply(200, b""), LIST, DecodeError, r"JSON|decode|empty"),
    ("list-array", reply(200, b"[1, 2]"), LIST, DecodeError, r"not a list object"),
    ("list-string", reply(200, b'"PodList"'), LIST, DecodeError, r"not a list object"),
    (
        "list-items-not-objects",
        reply(200, b'{"metadata": {}, "items": [1]}'),
        LIST,
        DecodeError,
        r"cannot structure an item",
    ),
    ("list-truncated-json", reply(200, b'{"items": [{"metadata": '), LIST, DecodeError, r"JSON|decode"),
    (
        "error-status-html",
        reply(500, b"<html><body>Internal error</body></html>", "text/html"),
        LIST,
        ServerError,
        r"^500: <html><body>Internal error",
    ),
    ("error-status-not-a-status", reply(400, b'{"hello": 1}'), LIST, APIError, r"400"),
    (
        "watch-not-json",
        watch_lines(b"this is not json"),
        WATCH,
        DecodeError,
        r"unable to decode an event from the watch stream: <16 bytes>",
    ),
    ("watch-array", watch_lines(b"[1]"), WATCH, DecodeError, r"unable to decode an event"),
    ("watch-no-object", watch_lines(b'{"type": "ADDED"}'), WATCH, DecodeError, r"unable to decode an event"),
    (
        "watch-object-not-a-mapping",
        watch_lines(b'{"type": "ADDED", "object": 7}'),
        WATCH,
        DecodeError,
        r"carries no object",
    ),
    (
        "watch-unknown-type",
        watch_lines(json.dumps({"type": "RENAMED", "object": POD}).encode()),
        WATCH,
        DecodeError,
        r"unknown watch event type 'RENAMED'",
    ),
    (
        "watch-no-resource-version",
        watch_lines(b'{"type": "ADDED", "object": {"metadata": {}}}'),
        WATCH,
        DecodeError,
        r"has no metadata.resourceVersion",
    ),
    pytest.param(
        "watch-error-event-garbage-code",
        watch_lines(b'{"type": "ERROR", "object": {"code": "x"}}'),
        WATCH,
        DecodeError,
        r"code",
    ),
]


def run_listwatch(url: str, action: str) -> None:
    with Transport(url, read_timeout=5, max_retries=0) as transport:
        lw: ListWatch[Any] = ListWatch(transport, Pod)
        if action == LIST:
            lw.list_page(resource_version=None, limit=None, continue_=None)
        else:
            with lw.watch(resource_version="5", timeout_seconds=30, read_timeout=5) as stream:
                for _ in stream:
                    pass


def _row(r: Any) -> Any:
    if hasattr(r, "marks"):  # a pytest.param row (a NamedTuple itself)
        return pytest.param(*r.values[1:], id=r.values[0], marks=r.marks)
    return pytest.param(*r[1:], id=r[0])


@pytest.mark.parametrize("handler,action,error,words", [_row(r) for r in ROWS])
def test_a_bad_answer_is_a_typed_error_naming_the_problem(handler, action, error, words):
    with TinyServer(handler) as server:
        fails_cleanly(lambda: run_listwatch(server.url, action), error, words)


@pytest.mark.parametrize("body", [b"<html>nope</html>", b"[]", b'{"items": [1]}'], ids=["html", "array", "items"])
def test_a_strict_cache_whose_list_answer_is_garbage_fails_its_scope_and_starts_nothing(body):
    with TinyServer(reply(200, body)) as server:
        # every LIST is refused the same way, so the scope fails at sync_timeout whatever its length
        cache = Cache(resources=[Pod], mode="strict", sync_timeout=1)
        config = Config(server=server.url, cache=cache)
        try:

            def enter() -> None:
                with config:
                    pass

            fails_cleanly(enter, Exception, r".")
            assert not cache.status().started
        finally:
            config.close()


# -- oversized and endless watch lines ------------------------------------------------------------


def endless_line(total: int, chunk: int = 64 * 1024) -> Callable[[Exchange], None]:
    """A watch that streams ``total`` bytes without a newline (until the client hangs up)."""
    data = b"x" * chunk

    def handle(ex: Exchange) -> None:
        ex.start_chunked()
        sent = 0
        try:
            while sent < total:
                ex.chunk(data)
                sent += chunk
            ex.end_chunks()
        except OSError:
            pass  # the client closed the stream: that is the point
        with ex.server.lock:
            ex.server.sent = sent  # type: ignore[attr-defined]

    return handle


def test_the_default_line_limit_is_64_mib_and_configurable():
    assert MAX_LINE_BYTES == 64 * 1024 * 1024
    with Transport("http://127.0.0.1:1") as t:
        assert t.max_line_bytes == MAX_LINE_BYTES
    with Transport("http://127.0.0.1:1", max_line_bytes=1024) as t:
        assert t.max_line_bytes == 1024
    for bad in (0, -1, 1.5, True, "1"):
        with pytest.raises(ValueError, match="max_line_bytes must be a positive int"):
            Transport("http://127.0.0.1:1", max_line_bytes=bad)


def test_a_100_mb_line_without_newline_fails_after_the_limit_with_bounded_memory():
    limit = 1024 * 1024
    with TinyServer(endless_line(100 * 1024 * 1024)) as server:
        with Transport(server.url, read_timeout=10, max_line_bytes=limit) as transport:
            stream = transport.stream("/api/v1/pods", params={"watch": "true"})
            tracemalloc.start()
            try:
                before, _ = tracemalloc.get_traced_memory()
                with pytest.raises(LineTooLong, match=r"longer than the limit of 1048576 bytes") as info:
                    for _ in stream:
                        pass
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
        assert isinstance(info.value, ProtocolError) and info.value.limit == limit
        assert stream.closed
        # The line is dropped once past the limit: memory holds about the limit plus a read
        # chunk, never the 100 MB the server offered.
        assert peak - before < 4 * limit
    assert getattr(server, "sent", 0) < 100 * 1024 * 1024  # the client hung up early


def test_lines_up_to_the_limit_pass_and_one_byte_more_fails():
    limit = 1000
    ok = json.dumps(
        {"type": "ADDED", "object": {**POD, "metadata": {**POD["metadata"], "annotations": {"a": "y" * 100}}}}
    ).encode()
    exact = b"z" * limit
    with TinyServer(watch_lines(ok, exact, b"z" * (limit + 1))) as server:
        with Transport(server.url, read_timeout=5, max_line_bytes=limit) as transport:
            stream = transport.stream("/api/v1/pods", params={"watch": "true"})
            seen: list[int] = []
            with pytest.raises(LineTooLong):
                for line in stream:
                    seen.append(len(line))
            assert seen == [len(ok), limit]


def test_a_cache_whose_watch_sends_an_endless_line_reports_it_and_stops_cleanly(caplog):
    limit = 256 * 1024
    watches = threading.Condition()
    count = [0]
    endless = endless_line(8 * 1024 * 1024)

    def handle(ex: Exchange) -> None:
        if ex.query.get("watch") in ("1", "true"):
            with watches:
                count[0] += 1
                watches.notify_all()
            endless(ex)
            return
        ex.reply(
            200,
            json.dumps(
                {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "5"}, "items": [POD]}
            ).encode(),
        )

    with TinyServer(handle) as server:
        config = Config(server=server.url, cache=Cache(resources=[Pod], mode="strict"))
        config.initialize()
        config.transport.max_line_bytes = limit  # what Transport(max_line_bytes=...) sets
        before = set(threading.enumerate())
        try:
            with config:
                assert [p.metadata.name for p in Pod.list().items] == ["p"]
                with watches:  # the first watch failed on the long line and the informer re-watched
                    assert watches.wait_for(lambda: count[0] >= 2, timeout=10)
                assert any("longer than the limit of 262144 bytes" in r.getMessage() for r in caplog.records)
                assert [p.metadata.name for p in Pod.list().items] == ["p"]  # still served
        finally:
            config.close()
        started = [t for t in threading.enumerate() if t not in before]
        for t in started:
            t.join(5)
        assert not [t.name for t in started if t.is_alive()]
