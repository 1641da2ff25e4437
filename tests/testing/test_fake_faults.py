"""Fault injection on the fake API server: cut, garbled, erroring, failing, stalled, slow."""

from __future__ import annotations

import json
import re
import select
import time

import pytest
import requests
from fake_server_helpers import RawResponse, events_of, names, read_events, watch

from cloudcoil_cache.errors import WaitTimeout
from cloudcoil_cache.testing import FakeAPIServer, make_pod

PODS = "/api/v1/namespaces/default/pods"


def raw_watch(server: FakeAPIServer, **params: str) -> RawResponse:
    query = "&".join(
        f"{k}={v}"
        for k, v in {
            "watch": "true",
            "timeoutSeconds": "10",
            "resourceVersion": str(server.revision),
            **params,
        }.items()
    )
    raw = RawResponse(server.port, f"{PODS}?{query}")
    server.wait_for_watches(1)
    return raw


# -- stream faults -------------------------------------------------------------------------------


def test_drop_watches_cuts_the_connection_without_a_terminating_chunk(
    fake_api_server: FakeAPIServer,
) -> None:
    with raw_watch(fake_api_server) as raw:
        fake_api_server.create("pods", make_pod("a"))
        assert names(events_of([raw.chunk() or b""])) == [("ADDED", "a")]
        assert fake_api_server.drop_watches() == 1
        with pytest.raises(EOFError):
            raw.chunk()


def test_drop_watches_mid_object_writes_half_an_event_line_then_cuts(
    fake_api_server: FakeAPIServer,
) -> None:
    with raw_watch(fake_api_server) as raw:
        fake_api_server.stall_watches()  # keep the next event queued so the cut lands inside it
        fake_api_server.create("pods", make_pod("a"))
        fake_api_server.drop_watches(mid_object=True)
        half = raw.chunk()
        with pytest.raises(EOFError):
            raw.chunk()
    assert half is not None and half.startswith(b'{"type":"ADDED"') and not half.endswith(b"\n")
    full = (
        b'{"type":"ADDED","object":'
        + json.dumps(fake_api_server.get("pods", "a"), separators=(",", ":")).encode()
        + b"}\n"
    )
    assert full.startswith(half) and len(half) == len(full) // 2


def test_a_dropped_watch_can_resume_from_its_last_rv_without_losing_events(
    fake_api_server: FakeAPIServer,
) -> None:
    rv = fake_api_server.revision
    with raw_watch(fake_api_server) as raw:
        fake_api_server.stall_watches()
        fake_api_server.create("pods", make_pod("a"))
        fake_api_server.drop_watches(mid_object=True)
        raw.chunk()
        with pytest.raises(EOFError):
            raw.chunk()
    fake_api_server.resume_watches()
    with watch(fake_api_server.url, PODS, resourceVersion=rv, timeoutSeconds=5) as resp:
        assert names(read_events(resp, 1)) == [("ADDED", "a")]


def test_send_malformed_line_writes_a_garbage_line_into_the_stream(
    fake_api_server: FakeAPIServer,
) -> None:
    with raw_watch(fake_api_server) as raw:
        fake_api_server.create("pods", make_pod("a"))
        assert fake_api_server.send_malformed_line() == 1
        fake_api_server.create("pods", make_pod("b"))
        chunks = [raw.chunk(), raw.chunk(), raw.chunk()]
    assert json.loads(chunks[0] or b"")["type"] == "ADDED"
    with pytest.raises(ValueError):
        json.loads(chunks[1] or b"")
    assert json.loads(chunks[2] or b"")["object"]["metadata"]["name"] == "b"


def test_send_error_event_writes_the_status_then_ends_the_stream_cleanly(
    fake_api_server: FakeAPIServer,
) -> None:
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "boom",
        "reason": "InternalError",
        "code": 500,
    }
    with raw_watch(fake_api_server) as raw:
        assert fake_api_server.send_error_event(status) == 1
        chunks = raw.chunks_until_end()
    assert events_of(chunks) == [{"type": "ERROR", "object": status}]


def test_split_events_shows_chunk_boundaries_inside_an_event(
    fake_api_server: FakeAPIServer,
) -> None:
    fake_api_server.split_events(100)
    with raw_watch(fake_api_server) as raw:
        fake_api_server.create("pods", make_pod("a"))
        chunks: list[bytes] = []
        while not chunks or not chunks[-1].endswith(b"\n"):
            chunks.append(raw.chunk() or b"")
    assert len(chunks) > 10 and all(len(c) <= 100 for c in chunks)
    assert all(b"\n" not in c for c in chunks[:-1])
    assert names(events_of(chunks)) == [("ADDED", "a")]


def test_stalled_watches_send_nothing_until_resumed(fake_api_server: FakeAPIServer) -> None:
    with raw_watch(fake_api_server) as raw:
        fake_api_server.stall_watches()
        fake_api_server.create("pods", make_pod("a"))
        readable, _, _ = select.select([raw.sock], [], [], 0.3)
        assert readable == []  # no byte arrived in 0.3 s
        fake_api_server.resume_watches()
        assert names(events_of([raw.chunk() or b""])) == [("ADDED", "a")]


def test_a_stalled_watch_trips_a_client_read_timeout(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.stall_watches()
    resp = requests.get(
        fake_api_server.url + PODS,
        params={"watch": "1", "timeoutSeconds": 10},
        stream=True,
        timeout=(5, 0.3),
    )
    with resp, pytest.raises(requests.ConnectionError):
        read_events(resp, 1)


# -- request faults ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "reason", "message"),
    [
        (401, "Unauthorized", "Unauthorized"),
        (
            403,
            "Forbidden",
            'pods is forbidden: User "system:serviceaccount:default:cloudcoil-test" '
            'cannot list resource "pods" in API group "" in the namespace "default"',
        ),
        (404, "NotFound", "the server could not find the requested resource"),
        (429, "TooManyRequests", "Too many requests, please try again later."),
        (500, "InternalError", "Internal error occurred: injected failure"),
        (503, "ServiceUnavailable", "The server is currently unable to handle the request"),
        (
            504,
            "Timeout",
            "Timeout: request did not complete within requested timeout - context deadline exceeded",
        ),
    ],
    ids=["401", "403", "404", "429", "500", "503", "504"],
)
def test_fail_next_answers_with_the_real_status_for_each_code(
    fake_api_server: FakeAPIServer, code: int, reason: str, message: str
) -> None:
    fake_api_server.fail_next(1, code)
    failed = requests.get(fake_api_server.url + PODS, timeout=5)
    assert (failed.status_code, failed.json()["reason"], failed.json()["message"]) == (
        code,
        reason,
        message,
    )
    assert requests.get(fake_api_server.url + PODS, timeout=5).status_code == 200


def test_fail_next_with_retry_after_sets_the_header_and_the_details(
    fake_api_server: FakeAPIServer,
) -> None:
    fake_api_server.fail_next(2, 429, retry_after=3)
    responses = [requests.get(fake_api_server.url + PODS, timeout=5) for _ in range(3)]
    assert [r.status_code for r in responses] == [429, 429, 200]
    assert responses[0].headers["Retry-After"] == "3"
    assert responses[0].json()["details"]["retryAfterSeconds"] == 3


def test_a_forbidden_cluster_wide_watch_names_the_cluster_scope(
    fake_api_server: FakeAPIServer,
) -> None:
    fake_api_server.fail_next(1, 403, verb="watch")
    resp = requests.get(fake_api_server.url + "/api/v1/pods", params={"watch": "1"}, timeout=5)
    assert resp.json()["message"].endswith('cannot watch resource "pods" in API group "" at the cluster scope')
    assert resp.json()["details"] == {"kind": "pods"}


@pytest.mark.parametrize(
    ("verb", "path", "hits"),
    [
        ("list", None, ["list", "cm-list"]),
        ("watch", None, ["watch"]),
        ("get", None, ["get"]),
        (None, "/configmaps", ["cm-list"]),
        (None, re.compile(r"/pods/\w+$"), ["get"]),
        (None, "re:^/api/v1/namespaces/default/pods$", ["list", "watch"]),
    ],
    ids=["verb-list", "verb-watch", "verb-get", "path-substring", "path-regex", "path-re-prefix"],
)
def test_fail_next_only_hits_matching_verbs_and_paths(
    fake_api_server: FakeAPIServer, verb: str | None, path: object, hits: list[str]
) -> None:
    fake_api_server.create("pods", make_pod("a"))
    fake_api_server.fail_next(5, 500, verb=verb, path=path)  # type: ignore[arg-type]
    url = fake_api_server.url
    calls = {
        "list": lambda: requests.get(url + PODS, timeout=5),
        "watch": lambda: requests.get(url + PODS, params={"watch": "1", "timeoutSeconds": "0.1"}, timeout=5),
        "get": lambda: requests.get(url + PODS + "/a", timeout=5),
        "cm-list": lambda: requests.get(url + "/api/v1/namespaces/default/configmaps", timeout=5),
    }
    failed = [name for name, call in calls.items() if call().status_code == 500]
    assert failed == hits


def test_fail_next_rejects_bad_arguments(fake_api_server: FakeAPIServer) -> None:
    with pytest.raises(ValueError, match="verb"):
        fake_api_server.fail_next(1, 500, verb="fetch")
    with pytest.raises(ValueError, match="code"):
        fake_api_server.fail_next(1, 200)


def test_compact_makes_watches_from_older_rvs_expire(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("pods", make_pod("a"))
    rv = fake_api_server.revision
    with watch(fake_api_server.url, PODS, resourceVersion=rv, timeoutSeconds=0.1) as resp:
        assert read_events(resp) == []
    fake_api_server.create("pods", make_pod("b"))
    fake_api_server.compact()
    with watch(fake_api_server.url, PODS, resourceVersion=rv, timeoutSeconds=5) as resp:
        assert read_events(resp)[0]["object"]["code"] == 410


def test_restart_closes_connections_and_forgets_history(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("pods", make_pod("a"))
    rv = fake_api_server.revision
    fake_api_server.create("pods", make_pod("b"))
    with raw_watch(fake_api_server) as raw:
        fake_api_server.restart()
        with pytest.raises(EOFError):
            raw.chunk()
    with watch(fake_api_server.url, PODS, resourceVersion=rv, timeoutSeconds=5) as resp:
        assert read_events(resp)[0]["object"]["code"] == 410
    assert [p["metadata"]["name"] for p in fake_api_server.list("pods")] == ["a", "b"]


def test_restart_to_a_lower_revision_makes_newer_rvs_too_large(
    fake_api_server: FakeAPIServer,
) -> None:
    for name in "abc":
        fake_api_server.create("pods", make_pod(name))
    client_rv = fake_api_server.revision
    fake_api_server.restart(revision=2)
    assert fake_api_server.revision == 2
    with watch(fake_api_server.url, PODS, resourceVersion=client_rv) as resp:
        assert resp.status_code == 504
    created = fake_api_server.create("pods", make_pod("d"))
    assert created["metadata"]["resourceVersion"] == "3"
    listed = requests.get(fake_api_server.url + PODS, timeout=5).json()
    assert listed["metadata"]["resourceVersion"] == "3" and len(listed["items"]) == 4


def test_set_delay_slows_every_response(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.set_delay(0.2)
    start = time.monotonic()
    requests.get(fake_api_server.url + "/api", timeout=5)
    assert time.monotonic() - start >= 0.2
    fake_api_server.set_delay(0)
    start = time.monotonic()
    requests.get(fake_api_server.url + "/api", timeout=5)
    assert time.monotonic() - start < 0.2


def test_delay_applies_only_inside_its_block(fake_api_server: FakeAPIServer) -> None:
    with fake_api_server.delay(0.2):
        with pytest.raises(requests.ReadTimeout):
            requests.get(fake_api_server.url + "/api", timeout=(5, 0.05))
    start = time.monotonic()
    requests.get(fake_api_server.url + "/api", timeout=5)
    assert time.monotonic() - start < 0.2


# -- request log -----------------------------------------------------------------------------------


def test_every_request_is_recorded_with_its_verb_and_query(fake_api_server: FakeAPIServer) -> None:
    requests.get(fake_api_server.url + PODS, params={"limit": "5", "labelSelector": "a=b"}, timeout=5)
    with watch(fake_api_server.url, PODS, resourceVersion="0", timeoutSeconds=0.1) as resp:
        read_events(resp)
    requests.post(fake_api_server.url + PODS, json=make_pod("a"), timeout=5)
    reqs = fake_api_server.requests
    assert [(r.method, r.verb) for r in reqs] == [
        ("GET", "list"),
        ("GET", "watch"),
        ("POST", "create"),
    ]
    assert reqs[0].query == {"limit": "5", "labelSelector": "a=b"}
    assert reqs[0].path == PODS and reqs[0].time <= reqs[1].time
    fake_api_server.clear_requests()
    assert fake_api_server.requests == []


def test_wait_for_request_returns_the_first_match_or_times_out(
    fake_api_server: FakeAPIServer,
) -> None:
    requests.get(fake_api_server.url + PODS, params={"resourceVersion": "7"}, timeout=5)
    found = fake_api_server.wait_for_request(lambda r: r.query.get("resourceVersion") == "7", 1.0)
    assert found.verb == "list"
    with pytest.raises(WaitTimeout, match="no matching request"):
        fake_api_server.wait_for_request(lambda r: r.verb == "watch", 0.05)


def test_wait_for_request_served_waits_until_the_server_is_done_with_it(
    fake_api_server: FakeAPIServer,
) -> None:
    with watch(fake_api_server.url, PODS, resourceVersion="0", timeoutSeconds=60):
        arrived = fake_api_server.wait_for_request(lambda r: r.verb == "watch", 5)
        assert not arrived.served.is_set()  # logged on arrival; the watch is still being served
        with pytest.raises(WaitTimeout, match="arrived but was not served"):
            fake_api_server.wait_for_request(lambda r: r.verb == "watch", 0.05, served=True)
        fake_api_server.wait_for_watches(1)
        assert fake_api_server.drop_watches() == 1  # the server is done with it
        assert fake_api_server.wait_for_request(lambda r: r.verb == "watch", 5, served=True) is arrived
    requests.post(fake_api_server.url + PODS, json=make_pod("a"), timeout=5)
    created = fake_api_server.wait_for_request(lambda r: r.verb == "create", 5, served=True)
    assert created.served.is_set() and fake_api_server.get("pods", "a", "default")["metadata"]["name"] == "a"


def test_a_watch_whose_client_closed_it_ends_though_nothing_is_written_to_it(
    fake_api_server: FakeAPIServer,
) -> None:
    # no event and no bookmark to write: the server notices the closed socket itself (the real one
    # does at once; this fake within seconds), instead of keeping a thread and a socket till timeout
    with watch(fake_api_server.url, PODS, resourceVersion="0", timeoutSeconds=300):
        fake_api_server.wait_for_watches(1)
    fake_api_server.wait_for_request(lambda r: r.verb == "watch", 15, served=True)
    assert fake_api_server.active_watches == 0
