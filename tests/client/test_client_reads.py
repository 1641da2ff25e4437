"""Live reads over real HTTP: get, list (kinds, metadata, pages, selectors) and watch."""

from __future__ import annotations

import itertools

import pytest
import requests
from _client_support import last

from cloudcoil_cache.client import Config, ObjectList
from cloudcoil_cache.errors import ResourceNotFound, WatchExpired
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod


def seed(server: FakeAPIServer, n: int, namespace: str = "default") -> list[str]:
    names = [f"pod-{i}" for i in range(n)]
    for i, name in enumerate(names):
        server.create("pods", make_pod(name, namespace, index=i), namespace)
    return names


def test_get_returns_the_typed_object_the_server_stores(server: FakeAPIServer, config: Config) -> None:
    stored = server.create("pods", make_pod("web"), "default")
    got = Pod.client(config).get("web")
    assert isinstance(got, Pod)
    assert (got.kind, got.api_version, got.metadata.uid) == ("Pod", "v1", stored["metadata"]["uid"])
    assert got.metadata.resource_version == stored["metadata"]["resourceVersion"]
    assert last(server, "get").path == "/api/v1/namespaces/default/pods/web"


def test_get_of_a_missing_object_raises_not_found_with_the_servers_message(config: Config) -> None:
    with pytest.raises(ResourceNotFound) as info:
        Pod.client(config).get("nope")
    assert (info.value.code, info.value.reason) == (404, "NotFound")
    assert info.value.message == 'pods "nope" not found'


def test_list_items_have_a_kind_although_the_wire_items_do_not(server: FakeAPIServer, config: Config) -> None:
    seed(server, 2)
    wire = requests.get(f"{server.url}/api/v1/namespaces/default/pods", timeout=5).json()
    assert "kind" not in wire["items"][0]
    result = Pod.client(config).list()
    assert isinstance(result, ObjectList)
    assert [(p.kind, p.api_version) for p in result.items] == [("Pod", "v1")] * 2
    assert (result.kind, result.api_version) == ("PodList", "v1")


def test_list_metadata_carries_the_servers_resource_version(server: FakeAPIServer, config: Config) -> None:
    seed(server, 3)
    result = Pod.client(config).list()
    assert result.resource_version == result.metadata.resource_version == str(server.revision)
    assert result.continue_ is None


def test_a_limited_list_returns_one_page_and_iteration_walks_every_page(server: FakeAPIServer, config: Config) -> None:
    names = seed(server, 7)
    first = Pod.client(config).list(limit=3)
    assert len(first.items) == 3 and first.continue_ and first.remaining_item_count == 4
    assert len(first) == 7  # cloudcoil's len(): this page plus remainingItemCount
    server.clear_requests()
    assert [p.metadata.name for p in first] == sorted(names)
    pages = [r for r in server.requests if r.verb == "list"]
    assert [r.query["limit"] for r in pages] == ["3", "3"]
    assert all(r.query.get("continue") for r in pages)


@pytest.mark.parametrize(
    "selectors, expected",
    [
        ({"label_selector": "tier=frontend"}, ["pod-0", "pod-2", "pod-4"]),
        ({"label_selector": "tier in (backend),app.kubernetes.io/part-of"}, ["pod-1", "pod-3"]),
        ({"field_selector": "metadata.name=pod-3"}, ["pod-3"]),
        ({"field_selector": "metadata.name!=pod-0", "label_selector": "tier=frontend"}, ["pod-2", "pod-4"]),
    ],
    ids=["label-equality", "label-set-based", "field", "label-and-field"],
)
def test_list_selectors_are_applied_by_the_server(
    server: FakeAPIServer, config: Config, selectors: dict[str, str], expected: list[str]
) -> None:
    seed(server, 5)
    result = Pod.client(config).list(**selectors)
    assert sorted(p.metadata.name for p in result) == expected
    query = last(server, "list").query
    for arg, param in (("label_selector", "labelSelector"), ("field_selector", "fieldSelector")):
        assert query.get(param) == selectors.get(arg)


@pytest.mark.parametrize(
    "kwargs, expected_path, expected_count",
    [
        ({}, "/api/v1/namespaces/default/pods", 2),
        ({"namespace": "team-a"}, "/api/v1/namespaces/team-a/pods", 1),
        ({"all_namespaces": True}, "/api/v1/pods", 3),
    ],
    ids=["config-namespace", "explicit-namespace", "all-namespaces"],
)
def test_list_scope_follows_the_namespace_arguments(
    server: FakeAPIServer, config: Config, kwargs: dict[str, object], expected_path: str, expected_count: int
) -> None:
    seed(server, 2)
    server.create("pods", make_pod("other", "team-a"), "team-a")
    assert len(Pod.client(config).list(**kwargs).items) == expected_count  # type: ignore[arg-type]
    assert last(server, "list").path == expected_path


def test_watch_yields_typed_events_from_a_resource_version(server: FakeAPIServer, config: Config) -> None:
    client = Pod.client(config)
    rv = client.list().resource_version
    server.create("pods", make_pod("w"), "default")
    server.patch("pods", "w", {"metadata": {"labels": {"x": "1"}}}, "default")
    server.delete("pods", "w", "default")
    events = client.watch(resource_version=rv)
    try:
        got = [(t, o.metadata.name, o.kind) for t, o in itertools.islice(events, 3)]
    finally:
        events.close()
    assert got == [("ADDED", "w", "Pod"), ("MODIFIED", "w", "Pod"), ("DELETED", "w", "Pod")]
    assert last(server, "watch").query["resourceVersion"] == rv


def test_one_watch_request_ends_when_the_server_ends_the_stream(server: FakeAPIServer, config: Config) -> None:
    server.create("pods", make_pod("w"), "default")
    with Pod.client(config).open_watch(timeout_seconds=1, label_selector="tier=frontend") as stream:
        events = list(stream)
    assert [(t, o.metadata.name) for t, o in events] == [("ADDED", "w")]
    assert last(server, "watch").query["timeoutSeconds"] == "1"


def test_one_watch_request_with_bookmarks_yields_them_without_an_object(server: FakeAPIServer, config: Config) -> None:
    with Pod.client(config).open_watch(resource_version=str(server.revision), allow_bookmarks=True) as stream:
        assert next(iter(stream)) == ("BOOKMARK", None)


@pytest.mark.parametrize("mode", ["event", "http"], ids=["error-event", "http-410"])
def test_one_watch_request_from_a_compacted_version_raises_watch_expired(
    server: FakeAPIServer, config: Config, mode: str
) -> None:
    server.expired_watch_mode = mode
    client = Pod.client(config)
    rv = client.list().resource_version
    server.create("pods", make_pod("w"), "default")
    server.compact()
    with pytest.raises(WatchExpired) as info:
        with client.open_watch(resource_version=rv) as stream:
            next(iter(stream))
    assert info.value.code == 410


def test_a_list_result_converts_back_to_the_wire_form(server: FakeAPIServer, config: Config) -> None:
    seed(server, 3)
    page = Pod.client(config).list(limit=2)
    wire = page.to_dict()
    assert (wire["kind"], wire["apiVersion"]) == ("PodList", "v1")
    assert wire["metadata"]["continue"] == page.continue_
    assert [item["metadata"]["name"] for item in wire["items"]] == ["pod-0", "pod-1"]
    assert repr(page) == (f"<PodList items=2 resourceVersion={page.resource_version!r}, continue={page.continue_!r}>")
