"""A Manager's /metrics, scraped over HTTP: the caches' read counters (one family, one series per kind and
outcome, however many controllers share the cache) and each work queue's depth per priority."""

from __future__ import annotations

import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable

import pytest
from _controller_support import Calls
from cluster_support import FAST
from prometheus_client.parser import text_string_to_metric_families

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, Manager
from cloudcoil_cache.errors import ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Secret

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        assert response.status == 200
        text: str = response.read().decode()
        return text


def _samples(text: str) -> Samples:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _scrape_until(port: int, done: Callable[[Samples], bool], timeout: float = 10.0) -> tuple[str, Samples]:
    """Scrape until ``done(samples)`` holds (at most ``timeout`` seconds): the last scrape."""
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while True:
        text = _scrape(port)
        samples = _samples(text)
        if done(samples) or time.monotonic() > deadline:
            return text, samples
        tick.wait(0.02)


def _depth(samples: Samples, controller: str, priority: str) -> float:
    return samples.get(("cloudcoil_cache_queue_depth", (("controller", controller), ("priority", priority))), -1)


def _reads(samples: Samples, kind: str, outcome: str) -> float:
    return samples.get(("cloudcoil_cache_reads_total", (("kind", kind), ("outcome", outcome))), -1)


@pytest.fixture
def shared(fake_kubeconfig: Path) -> Any:
    """A Config whose cache holds ConfigMaps (the controllers share its informer) and counts every hit."""
    cfg = Config(
        kubeconfig=str(fake_kubeconfig),
        namespace="default",
        cache=Cache(resources=[ConfigMap], namespaces="default", tuning=FAST, count_hits=True),
    )
    yield cfg
    cfg.close()


def test_metrics_show_the_shared_caches_reads_once_and_each_queues_depth_per_priority(shared, make_cm):
    for name in ("cm-0", "cm-1", "cm-2"):
        make_cm(name)
    release = threading.Event()
    slow_calls, fast_calls = Calls(), Calls()
    slow = Controller(ConfigMap, config=shared, name="slow", workers=1)
    fast = Controller(ConfigMap, config=shared, name="fast", workers=2)

    @slow.reconcile()
    def hold(cm: ConfigMap) -> None:
        slow_calls.add(cm.name)
        release.wait(10)  # the one worker holds its first key: the others wait in the queue

    @fast.reconcile()
    def note(cm: ConfigMap) -> None:
        fast_calls.add(cm.name)

    with Manager(slow, fast, config=shared, health_port=0) as manager:
        try:
            port = manager.health_port
            assert all(source.shared for ctl in (slow, fast) for source in ctl.sources.values())
            fast_calls.wait(lambda c: {"cm-0", "cm-1", "cm-2"} <= set(c))
            slow_calls.wait(lambda c: len(c) == 1)
            # the initial list's two other keys wait at the replay priority; fast's queue is empty
            _, samples = _scrape_until(port, lambda s: _depth(s, "slow", "replay") == 2)
            assert (_depth(samples, "slow", "event"), _depth(samples, "slow", "replay")) == (0, 2)
            assert _depth(samples, "slow", "converged") == 0
            assert [_depth(samples, "fast", p) for p in ("event", "replay", "converged")] == [0, 0, 0]
            assert samples[("workqueue_depth", (("name", "slow"),))] == 2
            make_cm("cm-new")  # a change seen on the watch: ahead of the replay
            _, samples = _scrape_until(port, lambda s: _depth(s, "slow", "event") == 1)
            assert (_depth(samples, "slow", "event"), _depth(samples, "slow", "replay")) == (1, 2)

            fast_calls.wait(lambda c: "cm-new" in c)  # fast is idle: only this test reads now
            before = manager.read_counts().get("ConfigMap")
            client = shared.client_for(ConfigMap, cached=True)
            assert client.get("cm-0").name == "cm-0"  # a hit
            assert client.get("cm-1").name == "cm-1"  # a hit
            assert len(client.list().items) == 4  # a hit
            with pytest.raises(ResourceNotFound):
                client.get("absent")  # a miss
            with shared.cache.pause():
                assert client.get("cm-2").name == "cm-2"  # the cache bypassed: a live read
            text = _scrape(port)
            release.set()
            _, samples = _scrape_until(
                port, lambda s: _depth(s, "slow", "replay") == 0 and _depth(s, "slow", "event") == 0
            )
        finally:
            release.set()
    assert before is not None
    # one family, one series per kind and outcome: two controllers share the cache, it is counted once
    assert sum(line.startswith("# TYPE cloudcoil_cache_reads") for line in text.splitlines()) == 1
    series = [line.rpartition(" ")[0] for line in text.splitlines() if line.startswith("cloudcoil_cache_reads_total{")]
    assert len(series) == len(set(series)) == 5
    counts = _samples(text)
    assert _reads(counts, "ConfigMap", "hit") == before.hits + 3
    assert _reads(counts, "ConfigMap", "miss") == before.misses + 1
    assert _reads(counts, "ConfigMap", "live") == before.live_reads + 1
    assert _reads(counts, "ConfigMap", "fallback") == before.fallbacks
    assert _reads(counts, "ConfigMap", "refused") == before.refusals


def test_metrics_count_the_reads_of_the_controllers_own_caches_too(shared, make_cm, fake_api_server):
    make_cm("cm-0")
    fake_api_server.create("secrets", {"metadata": {"name": "s-0", "namespace": "default"}}, "default")
    calls = Calls()
    on_configmaps = Controller(ConfigMap, config=shared, name="configmaps")
    on_secrets = Controller(Secret, config=shared, name="secrets")  # not in the Config's cache: one of its own
    on_configmaps.reconcile(lambda cm: calls.add(cm.name))
    on_secrets.reconcile(lambda secret: calls.add(secret.name))
    with Manager(on_configmaps, on_secrets, config=shared, health_port=0) as manager:
        calls.wait(lambda c: {"cm-0", "s-0"} <= set(c))
        assert not on_secrets.sources[Secret].shared and on_configmaps.sources[ConfigMap].shared
        assert len(manager.caches()) == 2
        assert on_secrets.cached(Secret).get("absent") is None  # a miss, in the controller's own cache
        assert on_secrets.cached(Secret).get("absent-too") is None
        text, samples = _scrape_until(manager.health_port, lambda s: _reads(s, "Secret", "miss") >= 2)
    assert _reads(samples, "Secret", "miss") == 2
    assert _reads(samples, "ConfigMap", "miss") != -1  # the shared cache's kind is there too, in the same family
    series = [line.rpartition(" ")[0] for line in text.splitlines() if line.startswith("cloudcoil_cache_reads_total{")]
    assert len(series) == len(set(series)) == 10  # two kinds, five outcomes each, once
