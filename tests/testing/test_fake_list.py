"""LIST on the fake API server: selectors, snapshot pagination, resourceVersion rules, errors."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from cloudcoil_cache.testing import FakeAPIServer, make_configmap, make_pod, seed_pods


def get_list(server: FakeAPIServer, path: str = "/api/v1/pods", **params: Any) -> requests.Response:
    return requests.get(server.url + path, params=params, timeout=5)


def item_names(resp: requests.Response) -> list[str]:
    return [i["metadata"]["name"] for i in resp.json()["items"]]


@pytest.fixture
def labelled(fake_api_server: FakeAPIServer) -> FakeAPIServer:
    pods = [
        ("a", {"app": "web", "env": "prod"}),
        ("b", {"app": "web", "env": "dev"}),
        ("c", {"app": "db"}),
        ("d", {}),
    ]
    for name, labels in pods:
        pod = make_pod(name, labels=labels)
        pod["metadata"]["labels"] = labels
        fake_api_server.create("pods", pod)
    return fake_api_server


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("", ["a", "b", "c", "d"]),
        ("app=web", ["a", "b"]),
        ("app==web", ["a", "b"]),
        ("app!=web", ["c", "d"]),
        ("env in (prod,staging)", ["a"]),
        ("env notin (prod)", ["b", "c", "d"]),
        ("env", ["a", "b"]),
        ("!env", ["c", "d"]),
        ("app=web,env!=prod", ["b"]),
        ("app in (web, db),!env", ["c"]),
    ],
    ids=[
        "empty",
        "equals",
        "double-equals",
        "not-equals-matches-missing-key",
        "in",
        "notin-matches-missing-key",
        "exists",
        "does-not-exist",
        "and",
        "set-and-not-exists",
    ],
)
def test_label_selectors_match_like_the_real_server(
    labelled: FakeAPIServer, selector: str, expected: list[str]
) -> None:
    assert item_names(get_list(labelled, labelSelector=selector)) == expected


@pytest.mark.parametrize(
    "selector",
    ["app in (web", "a b c", "app=we$b", "=web", "-bad-/x=1"],
    ids=["unclosed-paren", "garbage", "bad-value", "missing-key", "bad-prefix"],
)
def test_a_malformed_label_selector_is_a_400_naming_it(fake_api_server: FakeAPIServer, selector: str) -> None:
    resp = get_list(fake_api_server, labelSelector=selector)
    assert (resp.status_code, resp.json()["reason"]) == (400, "BadRequest")
    assert selector in resp.json()["message"]


@pytest.fixture
def placed(fake_api_server: FakeAPIServer) -> FakeAPIServer:
    fake_api_server.create("pods", make_pod("a", node_name="n1", phase="Running"))
    fake_api_server.create("pods", make_pod("b", node_name="n2", phase="Pending"))
    fake_api_server.create("pods", make_pod("c", namespace="other", node_name="n1", phase="Running"))
    return fake_api_server


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("metadata.name=a", ["a"]),
        ("metadata.namespace=other", ["c"]),
        ("spec.nodeName=n1", ["a", "c"]),
        ("spec.nodeName!=n1", ["b"]),
        ("status.phase==Pending", ["b"]),
        ("spec.nodeName=n1,metadata.namespace!=other", ["a"]),
        ("spec.restartPolicy=Always,spec.schedulerName=default-scheduler", ["a", "b", "c"]),
    ],
    ids=["name", "namespace", "node", "node-not-equal", "phase", "and", "other-pod-fields"],
)
def test_pod_field_selectors_match_their_fields(placed: FakeAPIServer, selector: str, expected: list[str]) -> None:
    assert sorted(item_names(get_list(placed, fieldSelector=selector))) == expected


def test_secrets_can_be_selected_by_type(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("secrets", {"metadata": {"name": "s1"}, "type": "Opaque"})
    fake_api_server.create("secrets", {"metadata": {"name": "s2"}, "type": "kubernetes.io/tls"})
    resp = get_list(fake_api_server, "/api/v1/secrets", fieldSelector="type=kubernetes.io/tls")
    assert item_names(resp) == ["s2"]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/api/v1/pods", "field label not supported: spec.foo"),
        (
            "/api/v1/configmaps",
            '"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"',
        ),
    ],
    ids=["pods", "configmaps"],
)
def test_an_unknown_field_selector_is_a_400_with_the_real_message(
    fake_api_server: FakeAPIServer, path: str, message: str
) -> None:
    resp = get_list(fake_api_server, path, fieldSelector="spec.foo=x")
    assert (resp.status_code, resp.json()["reason"], resp.json()["message"]) == (
        400,
        "BadRequest",
        message,
    )


def test_a_namespaced_list_returns_only_that_namespace(placed: FakeAPIServer) -> None:
    assert item_names(get_list(placed, "/api/v1/namespaces/other/pods")) == ["c"]


def test_built_in_list_items_carry_no_kind_unless_toggled(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("pods", make_pod("a"))
    body = get_list(fake_api_server).json()
    assert (body["kind"], body["apiVersion"]) == ("PodList", "v1")
    assert "kind" not in body["items"][0] and "apiVersion" not in body["items"][0]
    fake_api_server.list_items_have_kind = True
    assert get_list(fake_api_server).json()["items"][0]["kind"] == "Pod"


def test_custom_resource_list_items_carry_kind(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.register_resource("example.com", "v1", "Widget", "widgets")
    fake_api_server.create("widgets.example.com", {"metadata": {"name": "w"}})
    item = get_list(fake_api_server, "/apis/example.com/v1/widgets").json()["items"][0]
    assert (item["kind"], item["apiVersion"]) == ("Widget", "example.com/v1")


def test_the_list_resource_version_is_the_snapshot_revision(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("pods", make_pod("a"))
    fake_api_server.create("configmaps", make_configmap("c"))
    body = get_list(fake_api_server).json()
    assert body["metadata"]["resourceVersion"] == str(fake_api_server.revision)


# -- pagination --------------------------------------------------------------------------------


def test_pages_come_from_one_consistent_snapshot(fake_api_server: FakeAPIServer) -> None:
    seed_pods(fake_api_server, 10)
    first = get_list(fake_api_server, limit=4).json()
    assert len(first["items"]) == 4 and first["metadata"]["remainingItemCount"] == 6
    snapshot_rv = first["metadata"]["resourceVersion"]
    fake_api_server.create("pods", make_pod("aaa-new", namespace="team-b"))
    fake_api_server.delete("pods", first["items"][0]["metadata"]["name"], namespace="default")
    got = [i["metadata"]["name"] for i in first["items"]]
    token = first["metadata"]["continue"]
    while token:
        page = get_list(fake_api_server, limit=4, **{"continue": token}).json()
        assert page["metadata"]["resourceVersion"] == snapshot_rv
        got += [i["metadata"]["name"] for i in page["items"]]
        token = page["metadata"].get("continue", "")
    assert len(got) == 10 and "aaa-new" not in got


def test_the_last_page_has_no_continue_token(fake_api_server: FakeAPIServer) -> None:
    seed_pods(fake_api_server, 4)
    body = get_list(fake_api_server, limit=4).json()
    assert "continue" not in body["metadata"]


def test_pagination_honours_selectors(labelled: FakeAPIServer) -> None:
    first = get_list(labelled, labelSelector="app=web", limit=1).json()
    second = get_list(labelled, labelSelector="app=web", limit=1, **{"continue": first["metadata"]["continue"]}).json()
    assert [first["items"][0]["metadata"]["name"], second["items"][0]["metadata"]["name"]] == [
        "a",
        "b",
    ]
    assert "continue" not in second["metadata"]


def expired_continue(server: FakeAPIServer, token: str) -> requests.Response:
    resp = get_list(server, limit=2, **{"continue": token})
    assert (resp.status_code, resp.json()["reason"]) == (410, "Expired")
    assert resp.json()["message"].startswith("The provided continue parameter is too old")
    return resp


def test_continue_tokens_expire_after_compaction_with_a_fresh_inconsistent_token(
    fake_api_server: FakeAPIServer,
) -> None:
    seed_pods(fake_api_server, 5)
    first = get_list(fake_api_server, limit=2).json()
    fake_api_server.create("pods", make_pod("zzz", namespace="team-b"))
    fake_api_server.compact()
    fresh = expired_continue(fake_api_server, first["metadata"]["continue"]).json()["metadata"]["continue"]
    rest = get_list(fake_api_server, limit=10, **{"continue": fresh}).json()
    assert rest["metadata"]["resourceVersion"] == str(fake_api_server.revision)
    assert len(rest["items"]) == 4 and "zzz" in item_names_of(rest)


def item_names_of(body: dict[str, Any]) -> list[str]:
    return [i["metadata"]["name"] for i in body["items"]]


def test_continue_tokens_expire_after_the_configured_ttl(fake_api_server: FakeAPIServer) -> None:
    seed_pods(fake_api_server, 5)
    first = get_list(fake_api_server, limit=2).json()
    assert get_list(fake_api_server, limit=2, **{"continue": first["metadata"]["continue"]}).ok
    fake_api_server.continue_ttl = 0.0  # every token issued before now is too old
    expired_continue(fake_api_server, first["metadata"]["continue"])


def test_a_garbage_continue_token_is_a_bad_request(fake_api_server: FakeAPIServer) -> None:
    resp = get_list(fake_api_server, limit=2, **{"continue": "not-a-token!"})
    assert (resp.status_code, resp.json()["reason"]) == (400, "BadRequest")


# -- resourceVersion rules -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "code", "message"),
    [
        (
            {"resourceVersionMatch": "NotOlderThan"},
            422,
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        (
            {"resourceVersionMatch": "Exact", "resourceVersion": "0"},
            422,
            'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
        (
            {"resourceVersionMatch": "Exact", "resourceVersion": "1", "continue": "x"},
            422,
            "resourceVersionMatch is forbidden when continue is provided",
        ),
        (
            {"resourceVersionMatch": "Sometimes", "resourceVersion": "1"},
            422,
            'Unsupported value: "Sometimes"',
        ),
        ({"sendInitialEvents": "true"}, 422, "sendInitialEvents is forbidden for list"),
        (
            {"resourceVersion": "5", "continue": "x"},
            400,
            "specifying resource version is not allowed when using continue",
        ),
        ({"resourceVersion": "abc"}, 400, 'invalid resource version "abc"'),
    ],
    ids=[
        "match-without-rv",
        "exact-with-rv-0",
        "match-with-continue",
        "unknown-match",
        "send-initial-events",
        "continue-with-rv",
        "non-numeric-rv",
    ],
)
def test_invalid_list_options_get_the_real_codes_and_messages(
    fake_api_server: FakeAPIServer, params: dict[str, str], code: int, message: str
) -> None:
    resp = get_list(fake_api_server, **params)
    assert resp.status_code == code
    assert message in resp.json()["message"]
    if code == 422:
        assert resp.json()["reason"] == "Invalid"
        assert resp.json()["details"]["causes"][0]["field"] in (
            "resourceVersionMatch",
            "sendInitialEvents",
        )


def test_an_exact_list_at_an_older_revision_serves_that_snapshot(
    fake_api_server: FakeAPIServer,
) -> None:
    fake_api_server.create("pods", make_pod("a"))
    old_rv = fake_api_server.revision
    fake_api_server.create("pods", make_pod("b"))
    fake_api_server.patch("pods", "a", {"metadata": {"labels": {"later": "1"}}})
    body = get_list(fake_api_server, resourceVersion=str(old_rv), resourceVersionMatch="Exact").json()
    assert body["metadata"]["resourceVersion"] == str(old_rv)
    assert item_names_of(body) == ["a"] and "later" not in body["items"][0]["metadata"]["labels"]
    paged = get_list(fake_api_server, resourceVersion=str(old_rv), limit=5).json()
    assert paged["metadata"]["resourceVersion"] == str(old_rv)


def test_a_not_older_than_list_serves_the_latest_state(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("pods", make_pod("a"))
    old_rv = fake_api_server.revision
    fake_api_server.create("pods", make_pod("b"))
    body = get_list(fake_api_server, resourceVersion=str(old_rv)).json()
    assert body["metadata"]["resourceVersion"] == str(fake_api_server.revision)
    assert item_names_of(body) == ["a", "b"]


def test_an_exact_list_at_a_compacted_revision_is_410(fake_api_server: FakeAPIServer) -> None:
    fake_api_server.create("pods", make_pod("a"))
    old_rv = fake_api_server.revision
    fake_api_server.create("pods", make_pod("b"))
    fake_api_server.compact()
    resp = get_list(fake_api_server, resourceVersion=str(old_rv), limit=5)
    assert (resp.status_code, resp.json()["reason"], resp.json()["message"]) == (
        410,
        "Expired",
        "The resourceVersion for the provided list is too old.",
    )


def test_a_list_from_a_future_revision_is_504_too_large(fake_api_server: FakeAPIServer) -> None:
    resp = get_list(fake_api_server, resourceVersion=str(fake_api_server.revision + 10))
    body = resp.json()
    assert (resp.status_code, body["reason"]) == (504, "Timeout")
    assert body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    assert "Too large resource version" in body["message"]
    assert resp.headers["Retry-After"] == "1"


def test_rv_0_ignores_the_limit_when_configured_like_the_watch_cache(
    fake_api_server: FakeAPIServer,
) -> None:
    seed_pods(fake_api_server, 5)
    assert len(get_list(fake_api_server, resourceVersion="0", limit=2).json()["items"]) == 2
    fake_api_server.ignore_limit_for_rv0 = True
    body = get_list(fake_api_server, resourceVersion="0", limit=2).json()
    assert len(body["items"]) == 5 and "continue" not in body["metadata"]


def test_a_list_serializes_each_object_once_and_streams_it_again_from_the_cache(
    fake_api_server: FakeAPIServer,
) -> None:
    """Each stored object's LIST JSON is built once and kept: a second full list sends the same
    bytes without serializing again (how fast that is, is the benchmarks' business)."""
    seed_pods(fake_api_server, 2_000)
    stored = list(fake_api_server._store.all_objects(fake_api_server.registry.resolve("pods")))
    assert not any(s._bare for s in stored)  # nothing serialized before the first list
    first = requests.get(fake_api_server.url + "/api/v1/pods", timeout=30).content
    cached = [s._bare for s in stored]
    assert all(cached)
    again = requests.get(fake_api_server.url + "/api/v1/pods", timeout=30).content
    assert again == first and len(first) > 10_000_000
    assert all(s._bare is c for s, c in zip(stored, cached))  # the same bytes objects: not rebuilt
