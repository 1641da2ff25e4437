"""WATCH on the fake API server: initial state, resume from history, 410/504, bookmarks."""

from __future__ import annotations

import socket

import pytest
import requests
from fake_server_helpers import RawResponse, events_of, names, read_events, watch

from cloudcoil_cache.testing import FakeAPIServer, make_configmap, make_pod

PODS = "/api/v1/namespaces/default/pods"


def test_a_watch_without_rv_starts_with_synthetic_added_events(
    fake_api_server: FakeAPIServer,
) -> None:
    fake_api_server.create("pods", make_pod("a"))
    fake_api_server.create("pods", make_pod("b"))
    fake_api_server.create("pods", make_pod("c", namespace="other"))
    with watch(fake_api_server.url, PODS, timeoutSeconds=5) as resp:
        assert resp.headers["Transfer-Encoding"] == "chunked"
        initial = read_events(resp, 2)
        fake_api_server.create("pods", make_pod("d"))
        live = read_events(resp, 1)
    assert names(initial) == [("ADDED", "a"), ("ADDED", "b")]
    assert names(live) == [("ADDED", "d")]
    assert (live[0]["object"]["kind"], live[0]["object"]["apiVersion"]) == ("Pod", "v1")


def test_a_watch_from_rv_n_replays_only_later_changes(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("pods", make_pod("a"))
    rv = fake_api_server.revision
    fake_api_server.create("pods", make_pod("b"))
    fake_api_server.patch("pods", "a", {"metadata": {"labels": {"x": "1"}}})
    fake_api_server.delete("pods", "b", grace_period_seconds=0)  # forced: no graceful MODIFIED
    with watch(fake_api_server.url, PODS, resourceVersion=rv, timeoutSeconds=5) as resp:
        events = read_events(resp, 3)
    assert names(events) == [("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b")]
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == [rv + 1, rv + 2, rv + 3]


def test_a_deleted_event_carries_the_last_state_at_the_deletions_rv(
    fake_api_server: FakeAPIServer,
) -> None:
    fake_api_server.create("pods", make_pod("a", labels={"keep": "me"}))
    rv = fake_api_server.revision
    fake_api_server.delete("pods", "a", grace_period_seconds=0)
    with watch(fake_api_server.url, PODS, resourceVersion=rv, timeoutSeconds=5) as resp:
        (event,) = read_events(resp, 1)
    assert event["type"] == "DELETED"
    assert event["object"]["metadata"]["labels"]["keep"] == "me"
    assert event["object"]["metadata"]["resourceVersion"] == str(rv + 1)


def test_one_revision_counter_is_shared_by_all_kinds(fake_api_server: FakeAPIServer) -> None:
    pod = fake_api_server.create("pods", make_pod("a"))
    cm = fake_api_server.create("configmaps", make_configmap("c"))
    assert int(cm["metadata"]["resourceVersion"]) == int(pod["metadata"]["resourceVersion"]) + 1


@pytest.mark.parametrize("mode", ["event", "http"], ids=["in-band-error-event", "http-410"])
def test_a_watch_from_a_compacted_rv_gets_410_in_the_chosen_shape(fake_api_server: FakeAPIServer, mode: str) -> None:
    fake_api_server.expired_watch_mode = mode
    fake_api_server.create("pods", make_pod("a"))
    old = fake_api_server.revision
    fake_api_server.create("pods", make_pod("b"))
    fake_api_server.compact()
    with watch(fake_api_server.url, PODS, resourceVersion=old - 1, timeoutSeconds=5) as resp:
        if mode == "http":
            assert resp.status_code == 410
            status = resp.json()
        else:
            assert resp.status_code == 200
            (event,) = read_events(resp)  # the stream ends after the ERROR event
            assert event["type"] == "ERROR"
            status = event["object"]
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
    assert status["message"] == f"too old resource version: {old - 1} ({fake_api_server.revision})"


def test_a_watch_from_a_future_rv_is_504_too_large_with_retry_after(
    fake_api_server: FakeAPIServer,
) -> None:
    with watch(fake_api_server.url, PODS, resourceVersion=fake_api_server.revision + 5) as resp:
        assert resp.status_code == 504
        assert resp.headers["Retry-After"] == "1"
        assert resp.json()["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"


def test_bookmarks_come_periodically_and_just_before_the_timeout(
    fake_api_server: FakeAPIServer,
) -> None:
    fake_api_server.bookmark_interval = 0.2
    fake_api_server.create("pods", make_pod("a"))
    with watch(
        fake_api_server.url,
        PODS,
        resourceVersion=fake_api_server.revision,
        allowWatchBookmarks="true",
        timeoutSeconds=1,
    ) as resp:
        fake_api_server.create("configmaps", make_configmap("other-kind"))
        events = read_events(resp)
    assert {e["type"] for e in events} == {"BOOKMARK"}
    assert len(events) >= 3  # ~4 periodic ones plus the final one (slack for a loaded machine)
    last = events[-1]["object"]
    assert last == {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": str(fake_api_server.revision)},
    }


def test_no_bookmarks_are_sent_unless_allowed(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.bookmark_interval = 0.1
    with watch(fake_api_server.url, PODS, resourceVersion=fake_api_server.revision, timeoutSeconds=0.5) as resp:
        assert read_events(resp) == []


def test_timeout_seconds_ends_the_stream_with_the_terminating_chunk(
    fake_api_server: FakeAPIServer,
) -> None:
    path = f"{PODS}?watch=true&timeoutSeconds=0.3&resourceVersion={fake_api_server.revision}"
    with RawResponse(fake_api_server.port, path) as raw:
        assert raw.status == 200 and raw.headers["transfer-encoding"] == "chunked"
        assert raw.chunks_until_end() == []  # no ERROR event, just the zero chunk


def test_a_watch_without_timeout_seconds_gets_a_random_server_timeout(
    fake_api_server: FakeAPIServer,
) -> None:
    fake_api_server.watch_timeout_range = (0.2, 0.3)
    with watch(fake_api_server.url, PODS, resourceVersion=fake_api_server.revision) as resp:
        assert read_events(resp) == []


def test_each_event_is_written_as_its_own_chunk(fake_api_server: FakeAPIServer) -> None:
    path = f"{PODS}?watch=1&resourceVersion={fake_api_server.revision}&timeoutSeconds=5"
    with RawResponse(fake_api_server.port, path) as raw:
        fake_api_server.wait_for_watches(1)
        fake_api_server.create("pods", make_pod("a"))
        fake_api_server.create("pods", make_pod("b"))
        chunks = [raw.chunk(), raw.chunk()]
    assert all(c is not None and c.endswith(b"\n") and c.count(b"\n") == 1 for c in chunks)
    assert names(events_of(chunks)) == [("ADDED", "a"), ("ADDED", "b")]


@pytest.mark.parametrize("rv", ["", "5"], ids=["rv-unset", "rv-n"])
def test_send_initial_events_ends_the_initial_state_with_a_bookmark(fake_api_server: FakeAPIServer, rv: str) -> None:
    fake_api_server.create("pods", make_pod("a"))
    fake_api_server.create("pods", make_pod("b"))
    snapshot = fake_api_server.revision
    with watch(
        fake_api_server.url,
        PODS,
        sendInitialEvents="true",
        timeoutSeconds=5,
        resourceVersionMatch="NotOlderThan",
        resourceVersion=rv if rv == "" else "1",
    ) as resp:
        events = read_events(resp, 3)
        fake_api_server.create("pods", make_pod("c"))
        events += read_events(resp, 1)
    assert names(events) == [("ADDED", "a"), ("ADDED", "b"), ("BOOKMARK", None), ("ADDED", "c")]
    meta = events[2]["object"]["metadata"]
    assert meta == {
        "resourceVersion": str(snapshot),
        "annotations": {"k8s.io/initial-events-end": "true"},
    }


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"resourceVersionMatch": "NotOlderThan"},
            "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        ),
        (
            {"sendInitialEvents": "true"},
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
        (
            {"sendInitialEvents": "true", "resourceVersionMatch": "Exact"},
            'Unsupported value: "Exact"',
        ),
    ],
    ids=["match-without-initial-events", "initial-events-without-match", "exact-match"],
)
def test_invalid_watch_options_get_422(fake_api_server: FakeAPIServer, params: dict[str, str], message: str) -> None:
    with watch(fake_api_server.url, PODS, **params) as resp:
        assert (resp.status_code, resp.json()["reason"]) == (422, "Invalid")
        assert message in resp.json()["message"]


def test_send_initial_events_is_rejected_when_the_watch_list_gate_is_off(
    fake_api_server: FakeAPIServer,
) -> None:
    fake_api_server.watch_list_enabled = False
    with watch(fake_api_server.url, PODS, sendInitialEvents="true", resourceVersionMatch="NotOlderThan") as resp:
        assert resp.status_code == 422
        assert "WatchList feature gate" in resp.json()["message"]


def test_objects_crossing_the_selector_arrive_as_added_and_deleted(
    fake_api_server: FakeAPIServer,
) -> None:
    fake_api_server.create("pods", make_pod("a", labels={"team": "x"}))
    rv = fake_api_server.revision
    with watch(fake_api_server.url, PODS, resourceVersion=rv, labelSelector="team=y", timeoutSeconds=5) as resp:
        fake_api_server.patch("pods", "a", {"metadata": {"labels": {"team": "y"}}})
        fake_api_server.patch("pods", "a", {"metadata": {"labels": {"other": "1"}}})
        fake_api_server.patch("pods", "a", {"metadata": {"labels": {"team": "z"}}})
        events = read_events(resp, 3)
    assert names(events) == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    leaving = events[2]["object"]["metadata"]
    assert leaving["labels"]["team"] == "y" and leaving["resourceVersion"] == str(rv + 3)


def test_field_selectors_filter_watch_events(fake_api_server: FakeAPIServer) -> None:
    with watch(
        fake_api_server.url,
        "/api/v1/pods",
        resourceVersion=fake_api_server.revision,
        fieldSelector="spec.nodeName=n2",
        timeoutSeconds=5,
    ) as resp:
        fake_api_server.create("pods", make_pod("a", node_name="n1"))
        fake_api_server.create("pods", make_pod("b", node_name="n2"))
        assert names(read_events(resp, 1)) == [("ADDED", "b")]


def test_the_legacy_watch_path_form_watches_one_object(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("pods", make_pod("a"))
    fake_api_server.create("pods", make_pod("b"))
    resp = requests.get(
        fake_api_server.url + "/api/v1/watch/namespaces/default/pods/b",
        params={"timeoutSeconds": 5},
        stream=True,
        timeout=5,
    )
    with resp:
        assert names(read_events(resp, 1)) == [("ADDED", "b")]
    assert fake_api_server.requests[-1].verb == "watch"


def test_legacy_watches_get_the_end_bookmark_when_watch_list_defaulting_is_on(
    fake_api_server: FakeAPIServer,
) -> None:
    fake_api_server.watch_list_defaulting = True
    fake_api_server.create("pods", make_pod("a"))
    with watch(fake_api_server.url, PODS, resourceVersion="0", allowWatchBookmarks="true", timeoutSeconds=5) as resp:
        events = read_events(resp, 2)
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_a_watch_on_a_custom_resource_works_like_a_built_in(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.register_resource("example.com", "v1", "Gadget", "gadgets", namespaced=False)
    with watch(fake_api_server.url, "/apis/example.com/v1/gadgets", timeoutSeconds=5) as resp:
        fake_api_server.wait_for_watches(1)
        fake_api_server.create("gadgets.example.com", {"metadata": {"name": "g"}})
        (event,) = read_events(resp, 1)
    assert (event["type"], event["object"]["kind"]) == ("ADDED", "Gadget")


def test_a_future_rv_that_arrives_within_the_wait_is_served(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.too_large_wait = 5.0
    future = fake_api_server.revision + 1
    waiting = f"{PODS}?watch=1&timeoutSeconds=5&resourceVersion={future}"
    with socket.create_connection(("127.0.0.1", fake_api_server.port), timeout=5) as sock:
        sock.sendall(f"GET {waiting} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        fake_api_server.wait_for_request(lambda r: r.verb == "watch")
        fake_api_server.create("pods", make_pod("a"))  # the revision the watch waits for
        fake_api_server.create("pods", make_pod("b"))
        file = sock.makefile("rb")
        assert file.readline().startswith(b"HTTP/1.1 200")
        while file.readline().strip():
            pass
        size = int(file.readline().strip(), 16)
        event = events_of([file.read(size)])[0]
        file.close()
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "b")
