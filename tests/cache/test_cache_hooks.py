"""Issue 35's hooks: a handler's own "initial replay delivered", the watch-error callback, read counters."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from cluster_support import Recorder, seed

from cloudcoil_cache.caching import Cache, ReadCounts
from cloudcoil_cache.errors import CacheUnavailableError, ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import make_pod


# ------------------------------------------------------------------ has_synced
def test_a_late_handler_is_synced_only_once_its_replay_was_delivered(server, make_config):
    seed(server, 5)
    config = make_config(resources=[Pod])
    gate = threading.Event()
    seen: list[str] = []

    def slow(pod: Any) -> None:
        gate.wait(10)
        seen.append(pod.metadata.name)

    with config:
        informer = config.cache.get_informer(Pod)
        assert informer.has_synced()  # the informer is synced, the new handler is not
        handle = informer.on_add(slow)
        try:
            assert not handle.has_synced()
            assert handle.wait_for_sync(timeout=0.05) is False  # held in its first replay call
            assert seen == []
        finally:
            gate.set()
        assert handle.wait_for_sync(timeout=10)
        assert handle.has_synced()
        assert sorted(seen) == [f"pod-{i}" for i in range(5)]  # every replayed object, before it said so


def test_a_handler_added_before_the_first_list_is_synced_after_that_list(server, make_config):
    seed(server, 3)
    config = make_config(resources=[Pod])
    informer = config.cache.get_informer(Pod)  # not started yet
    rec = Recorder()
    handle = informer.on_add(lambda pod: rec.add("add", pod))
    assert not handle.has_synced()
    assert handle.wait_for_sync(timeout=0.05) is False  # not started: nothing to wait for
    with config:
        assert handle.wait_for_sync(timeout=10)
        assert sorted(rec.names("add")) == ["pod-0", "pod-1", "pod-2"]


def test_update_delete_and_no_replay_handlers_are_synced_once_their_lane_passed_them(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod])
    with config:
        informer = config.cache.get_informer(Pod)
        gate = threading.Event()
        blocker = informer.on_add(lambda pod: gate.wait(10))  # holds the view's lane in its replay
        handles = informer.add_event_handler(on_update=lambda old, new: None, on_delete=lambda pod: None)
        quiet = informer.add_event_handler(on_add=lambda pod: None, replay=False)
        try:
            assert not any(h.has_synced() for h in [blocker, *handles, *quiet])  # queued behind the replay
        finally:
            gate.set()
        assert all(h.wait_for_sync(timeout=10) for h in [blocker, *handles, *quiet])
        other = config.cache.get_informer(Pod).on_update(lambda old, new: None)  # a view of its own
        assert other.wait_for_sync(timeout=10)


def test_handlers_synced_per_view_and_a_stopped_replay_is_marked_by_the_next_run(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod])
    gate = threading.Event()
    rec = Recorder()

    def held(pod: Any) -> None:
        gate.wait(10)
        rec.add("add", pod)

    with config:
        handle = config.cache.get_informer(Pod).on_add(held)
        assert not handle.has_synced()
        fast = config.cache.get_informer(Pod).on_add(lambda pod: None)
        assert fast.wait_for_sync(timeout=10)  # another view's lane is not held by this one
        assert not handle.has_synced()
        gate.set()  # the config's stop drops what is still queued (the rest of the replay)
    assert not handle.has_synced() or rec.count("add") == 2
    with config:  # a new run: its first list is the handler's replay
        assert handle.wait_for_sync(timeout=10)
        rec.wait(lambda ev: {p.metadata.name for _, p in ev} == {"pod-0", "pod-1"})


# --------------------------------------------------------- watch error handler
class _Errors:
    """What a watch error handler was called with, and on which thread."""

    def __init__(self, config: Any = None, raise_first: bool = False) -> None:
        self.calls: list[tuple[str, BaseException, str]] = []
        self.cond = threading.Condition()
        self.config = config
        self.raise_first = raise_first

    def __call__(self, name: str, exc: BaseException) -> None:
        if self.config is not None:
            self.config.cache.status()  # takes every informer's locks: none is held by the caller
        with self.cond:
            self.calls.append((name, exc, threading.current_thread().name))
            self.cond.notify_all()
        if self.raise_first and len(self.calls) == 1:
            raise RuntimeError("a broken watch error handler")

    def wait(self, n: int) -> None:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.calls) >= n, 10), self.calls


def test_the_cache_s_watch_error_handler_is_called_at_each_failed_list_and_may_raise(server, make_config, caplog):
    seed(server, 2)
    server.fail_next(2, 500, verb="list", path="re:^/api/v1/pods$")
    errors = _Errors(raise_first=True)
    config = make_config(resources=[Pod], watch_error_handler=errors)
    errors.config = config
    with config:
        informer = config.cache.get_informer(Pod)
        assert informer.wait_for_sync(10)  # listed again after each failure, and synced
    errors.wait(2)
    names = {name for name, _, _ in errors.calls}
    assert names == {"pods@*"}
    assert all("500" in str(exc) for _, exc, _ in errors.calls), errors.calls
    assert {thread for _, _, thread in errors.calls} == {"cloudcoil-reflector-pods@*"}
    assert "the watch error handler raised" in caplog.text  # logged; the reflector went on


def test_a_view_s_watch_error_handler_sees_a_failed_watch_and_the_informer_recovers(server, make_config):
    seed(server, 1)
    config = make_config(resources=[Pod])
    errors = _Errors(config)
    with config:
        informer = config.cache.get_informer(Pod)
        informer.set_watch_error_handler(errors)
        assert informer.wait_for_sync(10)
        server.wait_for_watches(1)
        server.fail_next(1, 500, verb="watch")
        server.drop_watches()
        errors.wait(1)
        name, exc, thread = errors.calls[0]
        assert (name, thread) == ("pods@*", "cloudcoil-reflector-pods@*")
        server.create("pods", make_pod("after"))
        rec = Recorder()
        informer.on_add(lambda pod: rec.add("add", pod))
        rec.wait(lambda ev: "after" in [p.metadata.name for _, p in ev])  # watching again
        informer.set_watch_error_handler(None)
        try:
            informer.set_watch_error_handler(42)  # type: ignore[arg-type]
        except TypeError as e:
            assert "callable" in str(e)
        else:
            raise AssertionError("a non-callable handler was accepted")


# ---------------------------------------------------------------- read counters
def _counts(config: Any, kind: str = "Pod") -> tuple[int, int, int, int, int]:
    c = config.cache.status().reads[kind]
    return (c.hits, c.misses, c.fallbacks, c.live_reads, c.refusals)


def test_reads_are_counted_per_kind_by_outcome_and_exported_as_prometheus_text(server, make_config):
    seed(server, 3)
    seed(server, 1, namespace="other", prefix="far")
    config = make_config(resources=[Pod], namespace="default", namespaces="default", count_hits=True)
    with config:
        assert config.cache.status().reads["Pod"] == ReadCounts()  # bound with the informer, nothing read
        assert Pod.get("pod-0").metadata.name == "pod-0"  # a hit, at once
        assert len(Pod.list()) == 3  # a list, at once
        assert len(Pod.list(label_selector="app!=none")) == 3  # a list the policy serves
        assert _counts(config) == (3, 0, 0, 0, 0)
        with pytest.raises(ResourceNotFound):
            Pod.get("absent")  # the cache answers "not found"
        assert _counts(config) == (3, 1, 0, 0, 0)
        assert Pod.get("far-0", namespace="other").metadata.name == "far-0"  # outside the scope: live
        assert _counts(config) == (3, 1, 1, 0, 0)
        with config.cache.pause():
            assert Pod.get("pod-1").metadata.name == "pod-1"  # bypassed: a live read
        assert _counts(config) == (3, 1, 1, 1, 0)
        with config.cache.strict_mode(), pytest.raises(CacheUnavailableError):
            Pod.get("far-0", namespace="other")  # strict: refused
        assert _counts(config) == (3, 1, 1, 1, 1)
        text = config.cache.metrics_text()
    assert "# TYPE cloudcoil_cache_reads_total counter" in text
    lines = {line.rpartition(" ")[0]: line.rpartition(" ")[2] for line in text.splitlines() if not line.startswith("#")}
    assert lines == {
        'cloudcoil_cache_reads_total{kind="Pod",outcome="hit"}': "3",
        'cloudcoil_cache_reads_total{kind="Pod",outcome="miss"}': "1",
        'cloudcoil_cache_reads_total{kind="Pod",outcome="fallback"}': "1",
        'cloudcoil_cache_reads_total{kind="Pod",outcome="live"}': "1",
        'cloudcoil_cache_reads_total{kind="Pod",outcome="refused"}': "1",
    }


def test_without_count_hits_a_get_answered_at_once_is_not_counted_but_every_other_read_is(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod], namespace="default")
    with config:
        Pod.get("pod-0")  # the hit path pays nothing for counting
        assert len(Pod.list()) == 2
        with pytest.raises(ResourceNotFound):
            Pod.get("absent")
        assert _counts(config) == (1, 1, 0, 0, 0)


def test_count_hits_must_be_a_bool():
    with pytest.raises(ValueError, match="count_hits"):
        Cache(count_hits="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="watch_error_handler"):
        Cache(watch_error_handler=42)  # type: ignore[arg-type]


def test_an_async_view_s_late_handler_is_awaited_until_its_replay_was_delivered(server, make_config):
    seed(server, 3)
    config = make_config(resources=[Pod])

    async def main() -> list[str]:
        seen: list[str] = []
        release = asyncio.Event()

        async def added(pod: Any) -> None:
            await release.wait()
            seen.append(pod.metadata.name)

        async with config:
            informer = config.cache.get_informer(Pod, sync=False)
            handle = informer.on_add(added)
            assert await handle.async_wait_for_sync(timeout=0.05) is False  # the loop is free meanwhile
            release.set()
            assert await handle.async_wait_for_sync(timeout=10)
            return sorted(seen)

    assert asyncio.run(main()) == ["pod-0", "pod-1", "pod-2"]
