"""A paginated LIST requests its next page while this one is structured (issue 24), over the fake API server."""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator

import attrs
import pytest
from cluster_support import FAST, seed

from cloudcoil_cache._http import Transport
from cloudcoil_cache._listwatch import ListWatch, WatchEvent
from cloudcoil_cache.caching._reflector import Reflector
from cloudcoil_cache.errors import APIError, BodyTooLarge, WaitTimeout
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, RecordedRequest, make_pod

TUNING = attrs.evolve(FAST, page_size=2, page_bytes=None)


class Sink:
    """A ReflectorSink that keeps the lists and errors it gets."""

    def __init__(self) -> None:
        self.lists: list[list[str]] = []
        self.errors: list[BaseException] = []
        self.listed = threading.Event()
        self.failed = threading.Event()

    def replace(
        self, items: list[Any], resource_version: str, *, resync: bool, started_at: float | None = None
    ) -> None:
        self.lists.append(sorted(o.metadata.name for o in items))
        self.listed.set()

    def apply(self, event: WatchEvent[Any]) -> None:
        pass

    def bookmark(self, resource_version: str) -> None:
        pass

    def error(self, exc: BaseException | None, since: float | None = None) -> None:
        if exc is not None:
            self.errors.append(exc)
            self.failed.set()


class HookedTransport:
    """The real transport, with a hook run (on the sending thread) before each streaming request."""

    def __init__(self, transport: Transport, before: Callable[[dict[str, str]], None]) -> None:
        self._transport = transport
        self._before = before

    def request(self, method: str, path: str, *, params: Any = None, **kw: Any) -> Any:
        return self._transport.request(method, path, params=params, **kw)

    def stream(self, path: str, *, params: Any = None, **kw: Any) -> Any:
        self._before(dict(params or {}))
        return self._transport.stream(path, params=params, **kw)


@pytest.fixture
def transport(server: FakeAPIServer) -> Iterator[Transport]:
    with Transport(server.url, connect_timeout=5, read_timeout=30, max_retries=0) as t:
        yield t


def continued_list(request: RecordedRequest) -> bool:
    return request.verb == "list" and "continue" in request.query


def run(reflector: Reflector, until: threading.Event) -> None:
    reflector.start()
    try:
        assert until.wait(10)
    finally:
        reflector.stop()
        reflector.join(10)
    assert not reflector.alive


def test_the_next_page_is_requested_before_this_ones_items_are_structured(server, transport):
    seed(server, 6)
    arrived: list[bool] = []

    def structure(data: dict[str, Any]) -> Any:
        if not arrived:  # the first item of the first page: the second page's request is already at the server
            try:
                server.wait_for_request(continued_list, timeout=10)
                arrived.append(True)
            except WaitTimeout:
                arrived.append(False)
        return Pod.from_dict_sealed(data)

    sink = Sink()
    reflector = Reflector("pods", ListWatch(transport, Pod, structure=structure), sink, tuning=TUNING)
    run(reflector, sink.listed)
    assert arrived == [True]
    assert sink.lists[0] == [f"pod-{i}" for i in range(6)] and not sink.errors
    lists = [r for r in server.requests if r.verb == "list"]
    assert [r.query.get("limit") for r in lists] == ["2", "2", "2"]
    assert [bool(r.query.get("continue")) for r in lists] == [False, True, True]


def test_an_expired_continue_token_on_a_prefetched_page_restarts_the_list(server, transport):
    seed(server, 5)
    senders: list[str] = []

    def before(params: dict[str, str]) -> None:
        if params.get("continue") and not senders:
            senders.append(threading.current_thread().name)
            server.create("pods", {"metadata": {"name": "late"}, "spec": {"containers": [{"name": "c", "image": "i"}]}})
            server.compact()  # the first page's snapshot is gone: 410 on the page requested ahead

    sink = Sink()
    reflector = Reflector("pods", ListWatch(HookedTransport(transport, before), Pod), sink, tuning=TUNING)
    run(reflector, sink.listed)
    assert senders == ["cloudcoil-list-pods"]
    # restarted from its first page, one snapshot: the one with "late"
    assert sink.lists == [sorted([f"pod-{i}" for i in range(5)] + ["late"])]
    assert not sink.errors
    firsts = [r for r in server.requests if r.verb == "list" and not r.query.get("continue")]
    assert len(firsts) == 2


def test_an_error_on_a_prefetched_page_fails_the_list_and_is_reported(server, transport):
    seed(server, 5)
    failed_once: list[bool] = []

    def before(params: dict[str, str]) -> None:
        if params.get("continue") and not failed_once:
            failed_once.append(True)
            server.fail_next(1, 403, verb="list")

    sink = Sink()
    reflector = Reflector("pods", ListWatch(HookedTransport(transport, before), Pod), sink, tuning=TUNING)
    run(reflector, sink.listed)  # after the failure: backoff, then a relist that succeeds
    assert len(sink.errors) == 1 and isinstance(sink.errors[0], APIError) and sink.errors[0].code == 403
    assert sink.lists == [[f"pod-{i}" for i in range(5)]]


def test_a_prefetched_page_over_max_list_bytes_fails_the_list(server, transport):
    seed(server, 2)
    big = make_pod("pod-2", "default")
    big["metadata"]["annotations"] = {"note": "x" * 50_000}
    server.create("pods", big, "default")
    sink = Sink()
    source = ListWatch(transport, Pod, max_list_bytes=40_000)
    reflector = Reflector("pods", source, sink, tuning=TUNING)
    run(reflector, sink.failed)  # the first page fits; the one requested ahead does not
    assert isinstance(sink.errors[0], BodyTooLarge)
    assert not sink.lists
    assert any(continued_list(r) for r in server.requests)


def test_stop_during_a_prefetch_aborts_it_and_joins_its_thread(server, transport):
    seed(server, 5)

    def before(params: dict[str, str]) -> None:
        if params.get("continue"):
            server.set_delay(30)  # the page requested ahead waits at the server

    sink = Sink()
    reflector = Reflector("pods", ListWatch(HookedTransport(transport, before), Pod), sink, tuning=TUNING)
    reflector.start()
    try:
        server.wait_for_request(continued_list, timeout=10)
        assert "cloudcoil-list-pods" in {t.name for t in threading.enumerate()}
    finally:
        reflector.stop()
        reflector.join(10)
        server.set_delay(0)
    assert not reflector.alive
    assert "cloudcoil-list-pods" not in {t.name for t in threading.enumerate()}
    assert not sink.lists  # nothing delivered after the stop
