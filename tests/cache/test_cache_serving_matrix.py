"""docs/contract.md "What the cache can serve": every cannot-serve reason x strict/fallback, for get and list."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import pytest
from cluster_support import fail_relists_with_403, names, reads, requests_to, seed, wait_until

from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import CacheUnavailableError, Forbidden, ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod
from cloudcoil_cache.testing import FakeAPIServer, make_configmap, make_pod

KINDS = {"Pod": (Pod, "pods"), "ConfigMap": (ConfigMap, "configmaps")}


def _seed_pods_and_configmaps(server: FakeAPIServer) -> None:
    seed(server, 3)
    seed(server, 2, namespace="other", prefix="elsewhere")
    for i in range(2):
        server.create("configmaps", make_configmap(f"cm-{i}"))


def _seed_web_and_db(server: FakeAPIServer) -> None:
    for i in range(2):
        server.create("pods", make_pod(f"web-{i}", labels={"app": "web"}))
    for i in range(2):
        server.create("pods", make_pod(f"db-{i}", labels={"app": "db", "role": "db"}))
    # db-1 is outside a status.phase=Running informer: a get of it cannot be answered from memory
    # (a get of an object the selector informer holds is served: it matches the selector).
    server.patch("pods", "db-1", {"status": {"phase": "Pending"}}, "default", subresource="status")


def _seed_then_delay_every_response(server: FakeAPIServer) -> None:
    _seed_pods_and_configmaps(server)
    # The informer's first LIST is held back, so a read right after `with config:` finds it unsynced.
    server.set_delay(1.0)


def _seed_five(server: FakeAPIServer) -> None:
    seed(server, 5)


def _nothing(server: FakeAPIServer, config: Config) -> None:
    pass


@dataclass(frozen=True)
class Row:
    """One cannot-serve reason: how to get there, and the read the cache cannot answer."""

    reason: str
    detail: str  # what else the message must name (the kind, namespace, selector or error)
    options: dict[str, Any]
    kind: str = "Pod"
    namespace: str = "default"
    all_namespaces: bool = False
    label_selector: str | None = None
    get_name: str = "pod-0"
    expect: Callable[[FakeAPIServer], set[str]] = field(
        default=lambda s: {p["metadata"]["name"] for p in s.list("pods", "default")}
    )
    before: Callable[[FakeAPIServer], None] = _seed_pods_and_configmaps
    after: Callable[[FakeAPIServer, Config], None] = _nothing
    evicted_get: bool = False


ROWS: dict[str, Row] = {
    "kind-not-cached": Row(
        "kind not cached",
        "ConfigMap",
        dict(resources=[Pod]),
        kind="ConfigMap",
        get_name="cm-0",
        expect=lambda s: {"cm-0", "cm-1"},
    ),
    "kind-disabled-by-per-resource-None": Row(
        "kind not cached",
        "per_resource",
        dict(resources=[Pod, ConfigMap], per_resource={ConfigMap: None}),
        kind="ConfigMap",
        get_name="cm-1",
        expect=lambda s: {"cm-0", "cm-1"},
    ),
    "namespace-outside-the-cache": Row(
        "namespace outside the cache",
        "'other'",
        dict(resources=[Pod], namespaces=["default"]),
        namespace="other",
        get_name="elsewhere-0",
        expect=lambda s: {"elsewhere-0", "elsewhere-1"},
    ),
    "not-synced-yet": Row(
        "not synced yet",
        "Pod in all namespaces",
        dict(resources=[Pod], wait_for_sync=False),
        before=_seed_then_delay_every_response,
    ),
    "informer-failing": Row("informer failing", "Forbidden", dict(resources=[Pod]), after=fail_relists_with_403),
    "selector-not-servable": Row(
        "selector not servable",
        "app=web",
        dict(resources=[Pod], label_selector="app=web"),
        label_selector="role=db",
        get_name="db-0",
        before=_seed_web_and_db,
        expect=lambda s: {"db-0", "db-1"},
    ),
    "field-selector-not-servable": Row(
        "selector not servable",
        "status.phase=Running",
        dict(resources=[Pod], field_selector="status.phase=Running"),
        label_selector="role=db",
        get_name="db-1",
        before=_seed_web_and_db,
        expect=lambda s: {"db-0", "db-1"},
    ),
    "informer-incomplete": Row(
        "informer incomplete",
        "max_items",
        dict(resources=[Pod], max_items_per_resource=2),
        before=_seed_five,
        evicted_get=True,
    ),
}

LIST_ONLY_ROWS: dict[str, Row] = {
    "all-namespaces-outside-a-one-namespace-cache": Row(
        "namespace outside the cache",
        "all namespaces",
        dict(resources=[Pod], namespaces=["default"]),
        all_namespaces=True,
        expect=lambda s: {p["metadata"]["name"] for p in s.list("pods")},
    ),
}


def _get_name(row: Row, config: Config) -> str:
    if not row.evicted_get:
        return row.get_name
    held = names(config.cache.get_informer(Pod).list())  # type: ignore[union-attr]
    return sorted({f"pod-{i}" for i in range(5)} - held)[0]


def _path(row: Row, op: str, name: str) -> str:
    plural = KINDS[row.kind][1]
    if op == "list" and row.all_namespaces:
        return f"/api/v1/{plural}"
    base = f"/api/v1/namespaces/{row.namespace}/{plural}"
    return f"{base}/{name}" if op == "get" else base


def _read(row: Row, op: str, name: str) -> Any:
    cls = KINDS[row.kind][0]
    if op == "get":
        return cls.get(name, namespace=row.namespace)
    return cls.list(namespace=row.namespace, all_namespaces=row.all_namespaces, label_selector=row.label_selector)


CASES = [pytest.param(row, op, id=f"{rid}-{op}") for rid, row in ROWS.items() for op in ("get", "list")]
CASES += [pytest.param(row, "list", id=f"{rid}-list") for rid, row in LIST_ONLY_ROWS.items()]


@pytest.mark.parametrize(("row", "op"), CASES)
def test_strict_mode_raises_cache_unavailable_naming_the_reason_and_asks_the_server_nothing(
    server, make_config, row, op
):
    row.before(server)
    config = make_config(mode="strict", **row.options)
    with config:
        row.after(server, config)
        name = _get_name(row, config)
        server.clear_requests()
        with pytest.raises(CacheUnavailableError) as caught:
            _read(row, op, name)
        assert requests_to(server, op, _path(row, op, name)) == []
    assert row.reason in str(caught.value)
    assert row.reason in caught.value.reason
    assert row.detail in str(caught.value)
    if row.reason == "informer failing":
        assert isinstance(caught.value.last_error, Forbidden)


@pytest.mark.parametrize(("row", "op"), CASES)
def test_fallback_mode_answers_from_the_api_server_what_the_cache_cannot_serve(server, make_config, row, op):
    row.before(server)
    config = make_config(mode="fallback", **row.options)
    with config:
        row.after(server, config)
        name = _get_name(row, config)
        server.clear_requests()
        result = _read(row, op, name)
        sent = requests_to(server, op, _path(row, op, name))
    assert sent, f"no {op} request reached {_path(row, op, name)}: {server.requests}"
    if op == "get":
        assert result.metadata.name == name
        assert result.metadata.namespace == row.namespace
    else:
        assert names(result) == row.expect(server)
        if row.label_selector:
            assert sent[0].query["labelSelector"] == row.label_selector


def test_a_strict_get_of_an_object_the_healthy_informer_does_not_hold_is_resource_not_found(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod], mode="strict")
    with config:
        server.clear_requests()
        with pytest.raises(ResourceNotFound, match="missing"):
            Pod.get("missing", namespace="default")
        assert reads(server) == []


def test_a_cached_not_found_names_the_namespace_it_looked_in(server, make_config):
    from cloudcoil_cache.models.kubernetes.core.v1 import Namespace

    seed(server, 2)
    with make_config(resources=[Pod, Namespace], mode="strict"):
        with pytest.raises(ResourceNotFound) as namespaced:
            Pod.get("missing", namespace="team-a")
        with pytest.raises(ResourceNotFound) as cluster_scoped:
            Namespace.get("missing")
    assert namespaced.value.message == (
        'pods "missing" not found in cache in namespace "team-a" (the cache watches Pod in all namespaces)'
    )
    assert cluster_scoped.value.message == (
        'namespaces "missing" not found in cache (the cache watches Namespace in all namespaces)'
    )


def test_a_fallback_get_of_a_missing_object_is_resource_not_found_too(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod], mode="fallback")
    with config, pytest.raises(ResourceNotFound, match="missing"):
        Pod.get("missing", namespace="default")


@pytest.mark.parametrize("mode", ["strict", "fallback"])
@pytest.mark.parametrize("op", ["get", "list", "list-all-namespaces", "list-selector"])
def test_reads_the_cache_can_serve_send_no_request_to_the_server(server, make_config, mode, op):
    seed(server, 3)
    seed(server, 2, namespace="other", prefix="elsewhere")
    config = make_config(resources=[Pod], mode=mode)
    with config:
        server.clear_requests()
        if op == "get":
            assert Pod.get("pod-1", namespace="default").metadata.name == "pod-1"
        elif op == "list":
            assert names(Pod.list(namespace="other")) == {"elsewhere-0", "elsewhere-1"}
        elif op == "list-all-namespaces":
            assert len(Pod.list(all_namespaces=True).items) == 5
        else:
            assert names(Pod.list(label_selector="tier=backend")) == {"pod-1"}
        assert reads(server) == []


def test_a_failing_informer_serves_reads_again_once_it_recovers(server, make_config):
    seed(server, 3)
    config = make_config(resources=[Pod], mode="strict")
    with config:
        fail_relists_with_403(server, config)
        with pytest.raises(CacheUnavailableError, match="informer failing"):
            Pod.list()
        server.clear_faults()
        informer = config.cache.informers()[0]  # type: ignore[union-attr]
        # relisted, then watching: current again once the watch is open
        wait_until(config.cache._sync_cond, lambda: informer.state()[0] == "current")  # type: ignore[union-attr]
        server.clear_requests()
        assert names(Pod.list()) == {"pod-0", "pod-1", "pod-2", "after-compaction"}
        assert reads(server) == []
