"""Over the fake server: a 503 blip never takes the cache out of service, handlers see each object's
events in order across views, and reads follow the Config's own writes (read-your-writes)."""

from __future__ import annotations

import contextvars
import threading
from typing import Any

import pytest
from cluster_support import requests_to, seed, wait_until

from cloudcoil_cache.errors import CacheUnavailableError, ResourceNotFound, ServerError
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod
from cloudcoil_cache.testing import make_pod


def wait_state(config: Any, state: str, timeout: float = 10.0, relists: int = 0) -> None:
    cache = config.cache
    informer = cache.informers()[0]
    wait_until(
        cache._sync_cond,
        lambda: (
            informer.state()[0] == state  # notified on every change
            and informer.status().relist_count >= relists
        ),
        timeout,
    )


@pytest.mark.parametrize("mode", ["strict", "fallback"])
def test_a_503_blip_on_the_watch_keeps_reads_served_from_memory_and_sends_no_list_to_the_server(
    server, make_config, mode
):
    seed(server, 5)
    config = make_config(resources=[Pod], mode=mode)
    served, raised = [0], [0]
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                assert len(Pod.list(namespace="default").items) == 5
                served[0] += 1
            except CacheUnavailableError:
                raised[0] += 1
            except BaseException as exc:  # reported by the test, not lost with the thread
                errors.append(exc)
                return

    with config:
        server.clear_requests()
        threads = [
            threading.Thread(target=contextvars.copy_context().run, args=(reader,), name=f"test-reader-{i}")
            for i in range(8)
        ]
        for t in threads:
            t.start()
        try:
            server.fail_next(1, 503, verb="watch")
            server.drop_watches()
            wait_state(config, "current", relists=2)  # the failed re-watch made it relist once
        finally:
            stop.set()
            for t in threads:
                t.join()
    assert errors == []
    assert served[0] > 0 and raised[0] == 0
    assert requests_to(server, "list", "/api/v1/namespaces/default/pods") == []  # no read went to the API
    assert len(requests_to(server, "list", "/api/v1/pods")) <= 1  # at most the informer's own relist


def test_a_stale_informer_names_the_reason_in_strict_mode_and_reads_the_api_in_fallback(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod], mode="strict", max_staleness=0)
    with config:
        server.fail_next(1000, 503, verb="watch")
        server.drop_watches()
        wait_state(config, "stale")
        with pytest.raises(CacheUnavailableError, match="informer stale: no healthy watch for .* last error.*503"):
            Pod.list(namespace="default")
        with config.cache.fallback_mode():  # type: ignore[union-attr]
            assert len(Pod.list(namespace="default").items) == 2
        assert len(requests_to(server, "list", "/api/v1/namespaces/default/pods")) == 1
        status = config.cache.status()  # type: ignore[union-attr]
        assert status.informers[0].state == "stale"
        assert "Pod@*" in status.errors and "503" in status.errors["Pod@*"]
        server.clear_faults()
        server.drop_watches()
        wait_state(config, "current")
        assert len(Pod.list(namespace="default").items) == 2


def test_a_fallback_read_in_a_503_outage_fails_at_once_and_one_told_to_wait_is_retried(server, make_config):
    """client-go's rule for live reads: a 503 without Retry-After is raised at once (it used to be
    retried 5 times over 31 s, so every fallback read of an app hung that long), one with
    Retry-After is sent again after that wait."""
    seed(server, 2)
    config = make_config(resources=[Pod], mode="fallback", max_staleness=0)
    live = "/api/v1/namespaces/default/pods"
    with config:
        server.fail_next(10_000, 503, verb="watch")
        server.drop_watches()
        wait_state(config, "stale")
        server.clear_requests()
        server.fail_next(1, 503, verb="list", path=live)
        with pytest.raises(ServerError, match="503") as info:
            Pod.list(namespace="default")
        assert info.value.code == 503 and info.value.retry_after is None
        assert len(requests_to(server, "list", live)) == 1
        server.fail_next(1, 503, verb="list", path=live, retry_after=0.05)  # the watch still fails
        server.clear_requests()
        assert len(Pod.list(namespace="default").items) == 2
        assert len(requests_to(server, "list", live)) == 2


def check_order(log: list[tuple[str, str, str]]) -> None:
    """Per object (by name): add, then updates, then delete; after a delete only an add."""
    alive: dict[str, bool] = {}
    for event, name, _uid in log:
        live = alive.get(name, False)
        if event == "add":
            assert not live, f"add of live {name}: {log}"
            alive[name] = True
        else:
            assert live, f"{event} of {name} after its delete (or before its add): {log}"
            alive[name] = event != "delete"


def test_handlers_of_one_view_see_every_objects_events_in_order_whichever_event_they_handle(server, make_config):
    config = make_config(resources=[ConfigMap])
    view = config.cache.get_informer(ConfigMap, sync=True)  # type: ignore[union-attr]
    log: list[tuple[str, str, str]] = []
    lock = threading.Lock()
    done = threading.Event()

    def record(event: str, obj: Any) -> None:
        with lock:
            log.append((event, obj.metadata.name, obj.metadata.uid))
            if obj.metadata.name == "last" and event == "add":
                done.set()

    view.on_add(lambda o: record("add", o))

    @view.on_update
    def updated(old: Any, new: Any) -> None:
        if new.metadata.name == "cm-0":
            threading.Event().wait(0.001)  # a slower handler: it must not let deletes overtake it
        record("update", new)

    view.on_delete(lambda o: record("delete", o))
    with config:
        for round_ in range(3):
            for i in range(5):
                server.create("configmaps", {"metadata": {"name": f"cm-{i}"}, "data": {"v": "0"}}, "default")
            for i in range(5):
                for v in range(3):
                    server.patch("configmaps", f"cm-{i}", {"data": {"v": f"{round_}-{v}"}}, "default")
            for i in range(5):
                server.delete("configmaps", f"cm-{i}", "default")
        server.create("configmaps", {"metadata": {"name": "last"}}, "default")
        assert done.wait(20)
    check_order(log)
    assert sum(1 for e in log if e[0] == "delete") == 15


def test_a_create_is_seen_by_the_next_cached_get_from_any_thread(server, make_config):
    config = make_config(resources=[Pod], mode="strict")
    with config:
        for i in range(30):
            created = Pod.from_dict(make_pod(f"new-{i}", "default")).create()
            got = Pod.get(f"new-{i}", namespace="default")  # strict: never a ResourceNotFound
            assert got.metadata.uid == created.metadata.uid
        Pod.delete("new-0", namespace="default")
        with pytest.raises(ResourceNotFound, match="not found in cache"):
            Pod.get("new-0", namespace="default")
        assert "new-0" not in {p.name for p in Pod.list(namespace="default")}


def test_a_write_the_watch_does_not_deliver_in_time_is_refused_in_strict_and_read_live_in_fallback(server, make_config):
    config = make_config(resources=[Pod], mode="strict", read_your_writes_timeout=0.3)
    with config:
        server.stall_watches()
        try:
            Pod.from_dict(make_pod("late", "default")).create()
            with pytest.raises(CacheUnavailableError, match="write not yet observed"):
                Pod.get("late", namespace="default")
            with config.cache.fallback_mode():  # type: ignore[union-attr]
                assert Pod.get("late", namespace="default").name == "late"  # from the API server
        finally:
            server.resume_watches()


def test_a_write_waited_for_once_in_vain_is_not_waited_for_again(server, make_config, caplog):
    # a silent watch (stalled, until read_timeout finds it out): each read of the write would wait
    # the whole read_your_writes_timeout; after one such wait, reads go to the API server at once
    config = make_config(resources=[Pod], mode="fallback", read_your_writes_timeout=0.3)
    with config:
        server.stall_watches()
        try:
            Pod.from_dict(make_pod("late", "default")).create()
            with caplog.at_level("WARNING", logger="cloudcoil_cache.caching._writes"):
                for _ in range(3):
                    assert Pod.get("late", namespace="default").name == "late"  # from the API server
            assert len([r for r in caplog.records if "not delivered by the watch" in r.getMessage()]) == 1
            tracker = config.cache.informers()[0].writes  # type: ignore[union-attr]
            answered: list[bool] = []
            waiter = threading.Thread(
                target=lambda: answered.append(tracker.wait("default", "late", 60, again=False)), name="test-ryw-waiter"
            )
            waiter.start()
            waiter.join(10)  # would take 60 s if it waited again
            assert answered == [False]
        finally:
            server.resume_watches()


def test_writes_through_a_cached_objects_own_methods_are_read_back(server, make_config):
    """A cached object's class is a read-only subclass: its writes still count for read-your-writes."""
    config = make_config(resources=[Pod], mode="strict", read_your_writes_timeout=0.3)
    with config:
        Pod.from_dict(make_pod("a", "default")).create()
        cached = Pod.get("a", namespace="default")
        assert type(cached) is not Pod
        server.stall_watches()
        try:
            cached.patch({"metadata": {"labels": {"y": "1"}}})
            with pytest.raises(CacheUnavailableError, match="write not yet observed"):
                Pod.get("a", namespace="default")
        finally:
            server.resume_watches()
        # the patch's event arrives on the resumed watch: wait for it (under CPU load it can take longer
        # than the 0.3 s a strict read waits), then the strict read serves it
        informer = config.cache.informer_for(Pod)
        assert informer is not None and informer.writes.wait("default", "a", 10)
        assert Pod.get("a", namespace="default").metadata.labels["y"] == "1"
        Pod.get("a", namespace="default").remove()
        assert informer.writes.wait("default", "a", 10)  # its DELETED event, as above
        with pytest.raises(ResourceNotFound):
            Pod.get("a", namespace="default")


def test_cache_start_outside_a_scope_discovers_through_its_config(server, kubeconfig):
    from cloudcoil_cache.caching import Cache
    from cloudcoil_cache.client import Config

    config = Config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod]))
    cache = config.cache
    assert cache is not None
    cache.start()
    try:
        assert cache.wait(10) and cache.ready()
    finally:
        cache.stop()
        config.close()
