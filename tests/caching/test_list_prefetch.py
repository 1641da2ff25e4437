"""ListWatch fetches the next LIST page while the current one is structured (over a real socket)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from cloudcoil_cache._http import Transport
from cloudcoil_cache._listwatch import ListWatch
from cloudcoil_cache.errors import ProtocolError, is_expired
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer

from cluster_support import seed


@pytest.fixture
def transport(server: FakeAPIServer) -> Any:
    with Transport(server.url, connect_timeout=10, read_timeout=10) as transport:
        yield transport


def _pages(source: ListWatch[Any], limit: int) -> list[list[str]]:
    pages, token = [], None
    while True:
        page = source.list_page(resource_version="" if token is None else None, limit=limit, continue_=token)
        pages.append([pod.metadata.name for pod in page.items])
        token = page.continue_
        if not token:
            return pages


def _lists(server: FakeAPIServer) -> list[dict[str, str]]:
    """The LIST queries received, continue tokens shown as "<token>" (they carry a timestamp)."""
    return [{k: "<token>" if k == "continue" else v for k, v in r.query.items()}
            for r in server.requests if r.verb == "list"]


def _prefetch_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.endswith("next page")]


def test_pages_come_out_as_without_prefetch_and_each_is_requested_once(server, transport):
    seed(server, 7)
    server.clear_requests()
    fetched = _pages(ListWatch(transport, Pod, namespace="default"), limit=2)
    requests = _lists(server)
    server.clear_requests()
    plain = _pages(ListWatch(transport, Pod, namespace="default", prefetch=False), limit=2)
    assert fetched == plain and sum(len(p) for p in fetched) == 7 and len(fetched) == 4
    assert requests == _lists(server)  # the same requests, in the same order, none twice
    assert not _prefetch_threads()  # the last page had no continue token: nothing left running


def test_the_next_page_is_requested_before_the_caller_asks_for_it(server, transport):
    seed(server, 4)
    source = ListWatch(transport, Pod, namespace="default")
    server.clear_requests()
    first = source.list_page(resource_version="", limit=2, continue_=None)
    assert first.continue_
    # no second list_page call yet: the prefetch asks for page 2 on its own
    ahead = server.wait_for_request(lambda r: r.verb == "list" and "continue" in r.query, timeout=10)
    assert ahead.query["continue"] == first.continue_ and ahead.query["limit"] == "2"
    assert "resourceVersion" not in ahead.query  # a continued page never carries one
    second = source.list_page(resource_version=None, limit=2, continue_=first.continue_)
    assert len(second.items) == 2 and not second.continue_
    assert len(_lists(server)) == 2


def test_a_call_for_another_page_discards_the_prefetched_one(server, transport):
    seed(server, 4)
    source = ListWatch(transport, Pod, namespace="default")
    first = source.list_page(resource_version="", limit=2, continue_=None)
    assert first.continue_
    again = source.list_page(resource_version="", limit=3, continue_=None)  # a restarted list
    assert [p.metadata.name for p in again.items] == ["pod-0", "pod-1", "pod-2"]
    rest = source.list_page(resource_version=None, limit=3, continue_=again.continue_)
    assert [p.metadata.name for p in rest.items] == ["pod-3"]


def test_an_error_of_the_prefetched_page_is_raised_by_the_call_that_takes_it(server, transport):
    seed(server, 4)
    server.continue_ttl = 0.2
    server.set_delay(0.3)  # the token is stale by the time the prefetch asks for page 2
    source = ListWatch(transport, Pod, namespace="default")
    first = source.list_page(resource_version="", limit=2, continue_=None)
    with pytest.raises(Exception) as raised:
        source.list_page(resource_version=None, limit=2, continue_=first.continue_)
    assert is_expired(raised.value), raised.value


def test_interrupt_aborts_a_prefetch_waiting_for_the_server_and_joins_it(server, transport):
    seed(server, 4)
    source = ListWatch(transport, Pod, namespace="default")
    server.set_delay(2)  # page 1 is answered after 2 s; the prefetch of page 2 then waits 2 s more
    first = source.list_page(resource_version="", limit=2, continue_=None)
    assert first.continue_ and _prefetch_threads()
    started = time.monotonic()
    source.interrupt()
    assert time.monotonic() - started < 1.5  # aborted: not waiting for the server's answer
    assert not _prefetch_threads()
    server.set_delay(0)
    with pytest.raises(ProtocolError, match="interrupted"):
        source.list_page(resource_version=None, limit=2, continue_=first.continue_)


def test_interrupt_after_the_prefetch_ended_leaves_nothing_running(server, transport):
    seed(server, 4)
    source = ListWatch(transport, Pod, namespace="default")
    first = source.list_page(resource_version="", limit=2, continue_=None)
    server.wait_for_request(lambda r: r.verb == "list" and "continue" in r.query, timeout=10)
    source.interrupt()
    assert not _prefetch_threads()
    with pytest.raises(ProtocolError, match="interrupted"):
        source.list_page(resource_version=None, limit=2, continue_=first.continue_)
