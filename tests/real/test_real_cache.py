"""The cache against a real kube-apiserver: reference examples, read routing, status, pagination,
watch resume, 410 relists with deletions, bookmarks and the restricted user's 403."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any, Callable

import attrs
import pytest
from _proxy import CuttingProxy
from cluster_support import FAST, Recorder, names

from cloudcoil_cache._listwatch._listwatch import ListWatch
from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import CacheUnavailableError, Forbidden
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Container, Pod, PodSpec
from cloudcoil_cache.testing import RealAPIServer


def pod(name: str, namespace: str, **labels: str) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace=namespace, labels=labels or None),
        spec=PodSpec(containers=[Container(name="web", image="nginx:1.27")]),
    )


def create_pods(live: Config, namespace: str, *names_: str, **labels: str) -> list[Pod]:
    client = Pod.client(live)
    return [client.create(pod(n, namespace, **labels)) for n in names_]


def informer_status(config: Config) -> Any:
    (status,) = config.cache.status().informers  # type: ignore[union-attr]
    return status


def test_reference_example_sync_and_async_strict_reads(
    real: RealAPIServer, namespace: str, kubeconfig: str, live: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_pods(live, namespace, "a", "b")
    monkeypatch.setenv("KUBECONFIG", kubeconfig)

    cfg = Config(
        namespace=namespace,
        cache=Cache(
            resources=[Pod], namespaces=[namespace], mode="strict", wait_for_sync=True, max_items_per_resource=0
        ),
    )

    async def pods_in_namespace() -> Any:
        async with cfg:
            return await Pod.async_list(namespace=namespace)

    sync_cfg = Config(
        namespace=namespace,
        cache=Cache(
            resources=[Pod], namespaces=[namespace], mode="strict", wait_for_sync=True, max_items_per_resource=0
        ),
    )
    try:
        assert names(asyncio.run(pods_in_namespace()).items) == {"a", "b"}
        with sync_cfg:
            listed = Pod.list(namespace=namespace)
            assert names(listed.items) == {"a", "b"}
            assert listed.metadata.resource_version
            assert Pod.get("a").metadata.uid == live_uid(live, "a", namespace)
    finally:
        cfg.close()
        sync_cfg.close()


def test_reference_example_async_direct_subscriptions(
    namespace: str, kubeconfig: str, live: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/contract.md's "Direct subscriptions in an async program" reference example, against the real server."""
    create_pods(live, namespace, "a")
    monkeypatch.setenv("KUBECONFIG", kubeconfig)
    events: list[tuple[str, str]] = []

    async def watch_pods(done: asyncio.Event, seen: asyncio.Event) -> int:
        cfg = Config(namespace=namespace, cache=Cache(resources=[Pod], namespaces=[namespace], wait_for_sync=True))
        try:
            await cfg.async_initialize()
            pods = cfg.cache.get_informer(Pod, sync=False)  # type: ignore[union-attr]
            assert pods is not None
            loop = asyncio.get_running_loop()

            @pods.on_add
            def added(pod: Pod) -> None:
                events.append(("add", pod.name))
                if pod.name == "b":
                    loop.call_soon_threadsafe(seen.set)

            @pods.on_update
            async def changed(old: Pod, new: Pod) -> None:
                events.append(("update", new.name))

            @pods.on_delete
            def removed(pod: Pod) -> None:
                events.append(("delete", pod.name))

            async with cfg:
                count = len(pods.list())  # local read, synchronous even on an async informer
                await asyncio.to_thread(create_pods, live, namespace, "b")
                await asyncio.wait_for(seen.wait(), 30)
                await done.wait()
            return count
        finally:
            cfg.close()

    async def main() -> int:
        done, seen = asyncio.Event(), asyncio.Event()
        task = asyncio.create_task(watch_pods(done, seen))
        await asyncio.wait_for(seen.wait(), 60)
        done.set()
        return await task

    assert asyncio.run(main()) == 1
    assert events[:2] == [("add", "a"), ("add", "b")]


def live_uid(live: Config, name: str, namespace: str) -> str:
    return str(Pod.client(live).get(name, namespace).metadata.uid)


def test_strict_and_fallback_routing_and_status(
    namespace: str, make_config: Callable[..., Config], live: Config
) -> None:
    create_pods(live, namespace, "a", "b", app="web")
    ConfigMap.client(live).create(ConfigMap(metadata=ObjectMeta(name="cm", namespace=namespace)))
    strict = make_config(resources=[Pod], namespaces=[namespace], mode="strict")
    with strict:
        assert names(Pod.list(namespace=namespace).items) == {"a", "b"}
        with pytest.raises(CacheUnavailableError, match="not cached"):
            ConfigMap.list(namespace=namespace)
        with pytest.raises(CacheUnavailableError, match="namespace"):
            Pod.list(namespace="default")
        status = strict.cache.status()  # type: ignore[union-attr]
        assert status.ready and status.started and status.errors == {}
        (informer,) = status.informers
        assert (informer.kind, informer.namespace, informer.synced, informer.object_count) == (
            "Pod",
            namespace,
            True,
            2,
        )
        assert informer.resource_version and informer.relist_count == 1
    fallback = make_config(resources=[Pod], namespaces=[namespace], mode="fallback")
    with fallback:
        assert names(ConfigMap.list(namespace=namespace).items) >= {"cm"}  # from the API server
        assert Pod.list(namespace="default").items == []


def test_paginated_initial_sync_with_a_small_page_size(
    real: RealAPIServer,
    namespace: str,
    make_config: Callable[..., Config],
    live: Config,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    create_pods(live, namespace, *(f"p{i}" for i in range(11)))
    pages: list[tuple[str | None, int | None]] = []
    original = ListWatch.fetch_page

    def spy(self: Any, **kw: Any) -> Any:
        pages.append((kw.get("continue_"), kw.get("limit")))
        return original(self, **kw)

    monkeypatch.setattr(ListWatch, "fetch_page", spy)
    config = make_config(tuning=attrs.evolve(FAST, page_size=3), resources=[Pod], namespaces=[namespace], mode="strict")
    with config:
        assert names(Pod.list(namespace=namespace).items) == {f"p{i}" for i in range(11)}
    assert len(pages) == 4 and pages[0] == (None, 3) and all(c for c, _ in pages[1:])


def test_unpaginated_lists_sync_from_the_watch_cache_and_the_watch_continues(
    real: RealAPIServer, namespace: str, make_config: Callable[..., Config], live: Config
) -> None:
    """``Tuning(page_size=0)``: one unpaginated consistent LIST (kube-apiserver serves it from its
    watch cache, ``apiserver_cache_list_total``), then the watch from its resourceVersion."""
    create_pods(live, namespace, *(f"p{i}" for i in range(5)))
    served_from_cache = _cache_lists(real)
    config = make_config(tuning=attrs.evolve(FAST, page_size=0), resources=[Pod], namespaces=[namespace])
    informer = config.cache.get_informer(Pod, sync=True)  # type: ignore[union-attr]
    assert informer is not None
    recorder = Recorder()
    recorder.hook(informer)
    with config:
        assert names(Pod.list(namespace=namespace).items) == {f"p{i}" for i in range(5)}
        assert _cache_lists(real) > served_from_cache
        create_pods(live, namespace, "late")
        recorder.wait(lambda ev: "late" in recorder.names("add"))
        assert informer_status(config).relist_count == 1


def _cache_lists(real: RealAPIServer) -> float:
    """kube-apiserver's count of pod LISTs its watch cache served."""
    status, body = real.request("GET", "/metrics")
    assert status == 200
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in str(body).splitlines()
        if line.startswith("apiserver_cache_list_total{") and 'resource_prefix="/pods"' in line
    )


def test_an_expired_continue_token_restarts_the_list_without_mixing_snapshots(
    real: RealAPIServer,
    namespace: str,
    make_config: Callable[..., Config],
    live: Config,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    create_pods(live, namespace, *(f"p{i}" for i in range(7)))
    calls: list[str | None] = []
    errors: list[str] = []
    original = ListWatch.fetch_page

    def compact_before_the_second_page(self: Any, **kw: Any) -> Any:
        calls.append(kw.get("continue_"))
        if kw.get("continue_") and len(calls) == 2:
            # Between the pages: one object goes, one comes, and etcd forgets the first snapshot.
            client = Pod.client(live)
            client.delete("p6", namespace)
            client.create(pod("late", namespace))
            real.compact()
            try:
                return original(self, **kw)
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                raise
        return original(self, **kw)

    monkeypatch.setattr(ListWatch, "fetch_page", compact_before_the_second_page)
    config = make_config(tuning=attrs.evolve(FAST, page_size=3), resources=[Pod], namespaces=[namespace], mode="strict")
    with config:
        listed = names(Pod.list(namespace=namespace).items)
    assert errors and "410" in errors[0] and "too old" in errors[0], errors
    # The restarted list is one snapshot: the one after the compaction.
    assert listed == {f"p{i}" for i in range(6)} | {"late"}
    assert calls.count(None) == 2  # the list started over from its first page


def test_watch_resumes_from_the_last_resource_version_after_the_connection_drops(
    real: RealAPIServer, namespace: str, make_config: Callable[..., Config], live: Config, tmp_path: Path
) -> None:
    create_pods(live, namespace, "a")
    with CuttingProxy(real.port) as proxy:
        kubeconfig = real.write_kubeconfig(tmp_path / "via-proxy", namespace=namespace, server=proxy.url)
        config = make_config(kubeconfig_path=kubeconfig, resources=[Pod], namespaces=[namespace])
        informer = config.cache.get_informer(Pod, sync=True)  # type: ignore[union-attr]
        assert informer is not None
        recorder = Recorder()
        recorder.hook(informer)
        with config:
            recorder.wait(lambda ev: [k for k, _ in ev] == ["add"])
            connections = proxy.connections
            # Only the watch's connection: an idle pooled connection cut too can make the re-watch
            # fail ('connection broke before a response') and relist, which is not what this test is about.
            proxy.cut(latest_only=True)
            create_pods(live, namespace, "b")
            recorder.wait(lambda ev: "b" in recorder.names("add"))
            assert proxy.connections > connections  # it reconnected through the proxy
            # Resumed: nothing lost, nothing deleted, no relist. (The watch may open on the pooled
            # connection the cut just closed: it is sent again on a new one, as Go's net/http does;
            # before that, "connection broke before a response" made the reflector relist.)
            assert informer_status(config).relist_count == 1, informer_status(config).relist_count
            assert recorder.count("delete") == 0 and recorder.names("add").count("a") == 1


def test_a_410_after_a_real_compaction_relists_and_reports_deletions(
    real: RealAPIServer, namespace: str, make_config: Callable[..., Config], live: Config, tmp_path: Path
) -> None:
    create_pods(live, namespace, "a", "b", "c")
    with CuttingProxy(real.port) as proxy:
        kubeconfig = real.write_kubeconfig(tmp_path / "via-proxy", namespace=namespace, server=proxy.url)
        config = make_config(kubeconfig_path=kubeconfig, resources=[Pod], namespaces=[namespace], max_staleness=None)
        informer = config.cache.get_informer(Pod, sync=True)  # type: ignore[union-attr]
        assert informer is not None
        recorder = Recorder()
        recorder.hook(informer)
        with config:
            recorder.wait(lambda ev: sorted(recorder.names("add")) == ["a", "b", "c"])
            proxy.block()  # the informer cannot see what happens next
            client = Pod.client(live)
            client.delete("a", namespace)
            client.delete("b", namespace)
            create_pods(live, namespace, "d")
            real.compact()
            real.restart_apiserver()  # a fresh watch cache: the informer's RV is now too old
            proxy.unblock()
            recorder.wait(
                lambda ev: sorted(recorder.names("delete")) == ["a", "b"] and "d" in recorder.names("add"), timeout=30
            )
            assert informer_status(config).relist_count >= 2
            assert names(informer.list()) == {"c", "d"}
            deleted = [v for k, v in recorder.events if k == "delete"]
            assert all(o.metadata.namespace == namespace and o.metadata.uid for o in deleted)


def test_bookmarks_carry_the_resource_version_forward(real: RealAPIServer, tmp_path: Path) -> None:
    """kube-apiserver sends periodic bookmarks about once a minute, too slow for a test; the watch-list
    bookmark (``k8s.io/initial-events-end``, WatchList gate, off by default in 1.33) comes at once."""
    with RealAPIServer(real.assets, apiserver_flags=["--feature-gates=WatchList=true"]) as server:
        assert server.request("POST", "/api/v1/namespaces", {"metadata": {"name": "quiet"}})[0] == 201
        path = "/api/v1/namespaces/quiet/configmaps"
        assert server.request("POST", path, {"metadata": {"name": "a"}})[0] == 201
        # A write elsewhere moves the global revision; the quiet namespace sees only a bookmark for it.
        status, other = server.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "b"}})
        assert status == 201
        config = Config(kubeconfig=server.write_kubeconfig(tmp_path / "kc", namespace="quiet"))
        try:
            stream = config.transport.stream(
                path,
                params={
                    "watch": "true",
                    "sendInitialEvents": "true",
                    "resourceVersionMatch": "NotOlderThan",
                    "allowWatchBookmarks": "true",
                    "timeoutSeconds": "5",
                },
                read_timeout=20,
            )
            events = []
            for line in stream:
                events.append(json.loads(line))
                if events[-1]["type"] == "BOOKMARK":
                    break
            stream.close()
        finally:
            config.close()
        assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"], events
        bookmark = events[-1]["object"]["metadata"]
        assert bookmark["annotations"]["k8s.io/initial-events-end"] == "true"
        assert int(bookmark["resourceVersion"]) >= int(other["metadata"]["resourceVersion"])


def test_the_restricted_user_fails_wait_for_sync_at_once_with_403(
    real: RealAPIServer, namespace: str, make_config: Callable[..., Config], tmp_path: Path
) -> None:
    kubeconfig = real.write_kubeconfig(tmp_path / "restricted", user="restricted", namespace=namespace)
    config = make_config(
        kubeconfig_path=kubeconfig, resources=[Pod], namespaces=[namespace], mode="strict", sync_timeout=30
    )
    started = time.monotonic()
    with pytest.raises(Forbidden, match='User "restricted" cannot list resource "pods"'):
        with config:
            pytest.fail("the scope must not be entered")  # pragma: no cover
    assert time.monotonic() - started < 5


def test_a_streamed_list_cut_into_batches_of_two_pods_equals_one_parse_of_the_body(
    real: RealAPIServer, namespace: str, live: Config
) -> None:
    """kube-apiserver's own LIST bodies (its streaming JSON encoder, its item shape) cut by
    ``_listwatch._split`` at every other pod: the same pods, in the same order, as one parse."""
    create_pods(live, namespace, *(f"s{i}" for i in range(9)))
    lw: ListWatch[Any] = ListWatch(live.transport, Pod, namespace=namespace, structure=lambda d: d)
    whole = json.loads(lw.fetch_page(resource_version=None, limit=None, continue_=None))
    two_pods = 2 * len(json.dumps(whole["items"][0]))
    batches = [lw.structure_page(p) for p in lw.stream_list(resource_version=None, batch_bytes=two_pods)]
    assert len(batches) >= 4  # cut while it was read, not parsed at the end
    assert [item for b in batches for item in b.items] == whole["items"]
    assert batches[-1].resource_version and batches[-1].continue_ is None
