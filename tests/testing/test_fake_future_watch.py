"""The fake server after a rewind (issue 32): a watch from a resourceVersion it has not reached (504, or silent as
kube-apiserver), the store's own check of it, and dying watches that are no longer counted as open."""

from __future__ import annotations

import pytest
from fake_server_helpers import RawResponse, events_of

from cloudcoil_cache.testing import FakeAPIServer, make_pod
from cloudcoil_cache.testing.apiserver.machinery.status import StatusError
from cloudcoil_cache.testing.apiserver.storage.watchers import Watcher

PODS = "/api/v1/namespaces/default/pods"


def test_silent_mode_accepts_a_future_watch_and_sends_nothing_at_or_below_its_rv(
    fake_api_server: FakeAPIServer,
) -> None:
    """kube-apiserver 1.33 (measured): 200 at once for a watch 5 or 1,000,000 ahead, no event and no bookmark
    while the revision is at or below it, the end at timeoutSeconds; later changes flow as usual."""
    fake_api_server.future_watch_mode = "silent"
    fake_api_server.bookmark_interval = 0.05
    future = fake_api_server.revision + 3
    path = f"{PODS}?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion={future}"
    with RawResponse(fake_api_server.port, path) as resp:
        assert resp.status == 200
        fake_api_server.wait_for_watches(1)
        for name in ("a", "b", "c"):  # revisions future-2 .. future: none of them is sent
            fake_api_server.create("pods", make_pod(name))
        assert fake_api_server.revision == future
        assert resp.chunks_until_end() == []  # silent, bookmarks too, and ended on time
    path = f"{PODS}?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion={future - 1}"
    with RawResponse(fake_api_server.port, path) as resp:
        fake_api_server.create("pods", make_pod("d"))
        events = events_of(resp.chunks_until_end())
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in events if e["type"] != "BOOKMARK"] == [
        ("ADDED", "c"),
        ("ADDED", "d"),
    ]


def test_silent_mode_sends_events_and_bookmarks_once_the_revision_passes_the_watch(
    fake_api_server: FakeAPIServer,
) -> None:
    fake_api_server.future_watch_mode = "silent"
    fake_api_server.bookmark_interval = 0.05
    future = fake_api_server.revision + 2
    path = f"{PODS}?watch=1&allowWatchBookmarks=true&timeoutSeconds=2&resourceVersion={future}"
    with RawResponse(fake_api_server.port, path) as resp:
        fake_api_server.wait_for_watches(1)
        for name in ("a", "b", "c"):
            fake_api_server.create("pods", make_pod(name))
        first = events_of([resp.chunk() or b""])
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in first] == [("ADDED", "c")]


def test_the_default_mode_still_answers_504_for_a_future_watch(fake_api_server: FakeAPIServer) -> None:
    path = f"{PODS}?watch=1&timeoutSeconds=1&resourceVersion={fake_api_server.revision + 1_000_000}"
    with RawResponse(fake_api_server.port, path) as resp:
        assert resp.status == 504
    with pytest.raises(ValueError, match="future_watch_mode"):
        FakeAPIServer(future_watch_mode="hang")


def test_the_store_refuses_a_watch_ahead_of_its_revision_unless_told_to_hold_it(
    fake_api_server: FakeAPIServer,
) -> None:
    """The check is made again under the store's lock: a restart may rewind the revision between a request's
    own check and its registration (its connection is cut too, but the store keeps its own invariant)."""
    store = fake_api_server.context.store
    pods = fake_api_server.registry.get("", "v1", "pods")
    assert pods is not None
    ahead = store.revision + 1
    with pytest.raises(StatusError) as refused:
        store.add_watcher(Watcher(pods, None, None, None), initial=False, since=ahead)
    assert refused.value.code == 504 and "Too large resource version" in refused.value.body["message"]
    assert store.watchers() == []
    held = Watcher(pods, None, None, None)
    store.add_watcher(held, initial=False, since=ahead, ahead=True)
    try:
        assert held.floor == ahead and held.below_floor(ahead) and not held.below_floor(ahead + 1)
    finally:
        store.remove_watcher(held)


def test_a_dropped_watch_still_writing_is_no_longer_counted_open_nor_sent_later_faults(
    fake_api_server: FakeAPIServer,
) -> None:
    """Under load the stream's thread notices a drop late; until then it used to count as open, so a test
    waiting for the client's new watch went on at once and sent its next fault to the dying one."""
    fake_api_server.split_events(8, pause=0.2)  # the thread stays inside writing an event for seconds
    path = f"{PODS}?watch=1&timeoutSeconds=30&resourceVersion={fake_api_server.revision}"
    with RawResponse(fake_api_server.port, path) as resp:
        fake_api_server.wait_for_watches(1)
        fake_api_server.create("pods", make_pod("a"))
        assert resp.chunk()  # the first piece is out: the thread is in the middle of the line
        assert fake_api_server.drop_watches() == 1
        assert fake_api_server.active_watches == 0
        assert fake_api_server.send_malformed_line() == 0
        assert fake_api_server.send_error_event({"kind": "Status", "code": 500}) == 0


def test_a_watch_ended_by_an_error_event_is_not_counted_open(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.stall_watches()  # the ERROR event stays queued
    path = f"{PODS}?watch=1&timeoutSeconds=30&resourceVersion={fake_api_server.revision}"
    with RawResponse(fake_api_server.port, path) as resp:
        fake_api_server.wait_for_watches(1)
        assert fake_api_server.send_error_event({"kind": "Status", "code": 500}) == 1
        assert fake_api_server.active_watches == 0
        fake_api_server.resume_watches()  # wakes the dying stream too: it writes the event and ends
        (event,) = events_of(resp.chunks_until_end())
    assert event["type"] == "ERROR"
