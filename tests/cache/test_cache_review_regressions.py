"""Regressions found in review: scope races, 410 loops, raising index functions, sticky errors,
exception growth, close() with open scopes, scopes left from another context."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest
from cluster_support import Recorder, requests_to, seed

from cloudcoil_cache.errors import CloudcoilError, Forbidden
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import make_pod

PODS = "/api/v1/pods"


def test_entering_a_scope_while_the_last_one_leaves_never_breaks_the_cache(server, make_config):
    seed(server, 1)
    config = make_config(resources=[Pod], namespace="default", mode="strict", sync_timeout=5)
    barrier = threading.Barrier(2, timeout=10)
    errors: list[str] = []

    def leaver() -> None:
        for _ in range(25):
            with config:
                barrier.wait()

    def enterer() -> None:
        for _ in range(25):
            barrier.wait()
            try:
                with config:
                    Pod.get("pod-0")
                    if not config.cache.status().informers[0].started:
                        errors.append("a scope is open on a stopped informer")
            except (CloudcoilError, RuntimeError) as exc:
                errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=f, name=f"test-{f.__name__}") for f in (leaver, enterer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not [t for t in threads if t.is_alive()]
    assert errors == []


def test_a_watch_that_always_expires_backs_off_instead_of_relisting_in_a_hot_loop(server, make_config):
    import attrs
    from cluster_support import FAST

    from cloudcoil_cache.caching import Backoff

    seed(server, 1)
    config = make_config(resources=[Pod], tuning=attrs.evolve(FAST, backoff=Backoff(initial=0.5, cap=1.0)))
    with config:
        server.wait_for_watches(1)
        server.fail_next(1000, 410, verb="watch")
        server.clear_requests()
        server.drop_watches()
        # list → 410 → relist at once → 410 again → now a backoff of at least 0.5 s
        second = server.wait_for_request(lambda r: r.verb == "list" and len(requests_to(server, "list", PODS)) >= 2)
        third = server.wait_for_request(
            lambda r: r.verb == "list" and len(requests_to(server, "list", PODS)) >= 3, timeout=5
        )
        assert third.time - second.time >= 0.5
        server.clear_faults()


def test_an_index_function_that_raises_skips_the_object_and_never_breaks_the_informer(server, make_config, caplog):
    seed(server, 2, owner="alice")
    config = make_config(resources=[Pod])
    informer = config.cache.get_informer(Pod)
    informer.add_index("owner", lambda pod: [pod.metadata.labels["owner"]])  # KeyError without it
    rec = Recorder()
    rec.hook(informer)
    with caplog.at_level(logging.ERROR), config:
        server.create("pods", make_pod("unlabelled", "default"))
        rec.wait(lambda ev: "unlabelled" in [o.metadata.name for k, o in ev if k == "add"])
        assert {p.metadata.name for p in informer.get_by_index("owner", "alice")} == {"pod-0", "pod-1"}
        assert informer.get("unlabelled", "default") is not None
        assert informer.status().last_error is None
    assert any("index function 'owner' failed" in r.getMessage() for r in caplog.records)


def test_a_429_when_reopening_a_watch_stops_counting_as_a_failure_once_the_watch_is_open(server, make_config):
    seed(server, 1)
    # No event will arrive: the re-opened watch's first bookmark (confirming the RV) clears the
    # error; an open socket alone does not (a server may go silent after the headers, issue 20).
    server.bookmark_interval = 0.5
    config = make_config(resources=[Pod], namespace="default", mode="strict")
    with config:
        server.wait_for_watches(1)
        server.fail_next(1, 429, verb="watch")
        server.clear_requests()
        server.drop_watches()
        rejected = server.wait_for_request(lambda r: r.verb == "watch")
        server.wait_for_request(lambda r: r.verb == "watch" and r.time > rejected.time)
        informer = config.cache.informers()[0]
        with config.cache._sync_cond:  # notified whenever an informer's error changes
            assert config.cache._sync_cond.wait_for(lambda: informer.last_error is None, 5)
        assert Pod.get("pod-0").metadata.name == "pod-0"  # strict: served, not "informer failing"


def test_waiting_for_a_failed_sync_raises_a_fresh_error_each_time(server, make_config):
    server.fail_next(10_000, 403, verb="list")
    config = make_config(resources=[Pod], wait_for_sync=False)
    informer = config.cache.get_informer(Pod)
    with config:
        raised = []
        for _ in range(20):
            with pytest.raises(Forbidden) as caught:
                informer.wait_for_sync(5)
            raised.append(caught.value)
        assert len({id(e) for e in raised}) == 20
        depth = 0
        tb = raised[-1].__traceback__
        while tb is not None:
            depth, tb = depth + 1, tb.tb_next
        assert depth < 10
        server.clear_faults()


def test_close_refuses_while_scopes_are_open(make_config):
    config = make_config(resources=[Pod])
    with config:
        with pytest.raises(RuntimeError, match="scope"):
            config.close()


def test_an_async_scope_left_from_another_task_still_releases_the_cache(server, make_config):
    seed(server, 1)
    config = make_config(resources=[Pod])

    async def main() -> None:
        # async fixtures enter and exit in different tasks
        await asyncio.ensure_future(config.__aenter__())
        await asyncio.ensure_future(config.__aexit__(None, None, None))

    asyncio.run(main())
    assert not config.cache.started
    assert not [t for t in threading.enumerate() if t.name.startswith("cloudcoil-reflector")]


def test_an_assigned_cache_tuning_is_the_one_its_sources_and_stop_use(server, kubeconfig):
    """Before the owner interface the cache read ``cache.tuning`` when it built a source and when it
    joined its threads; its Scopes had kept the Tuning given to the constructor instead."""
    import attrs
    from cluster_support import FAST

    from cloudcoil_cache.caching import Cache
    from cloudcoil_cache.client import Config

    seed(server, 3)
    cache = Cache(resources=[Pod], namespaces=["default"], wait_for_sync=False, tuning=FAST)
    cache.tuning = attrs.evolve(FAST, max_list_bytes=64)
    config = Config(kubeconfig=kubeconfig, cache=cache)
    with config:
        informer = cache.informers()[0]
        with cache._sync_cond:  # notified whenever an informer's error changes
            assert cache._sync_cond.wait_for(lambda: informer.last_error is not None, 5)
        assert "max_list_bytes" in str(informer.last_error)
    config.close()
