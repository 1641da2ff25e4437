"""Bounded staleness: transient failures degrade an informer (still serving) until max_staleness,
hard failures (403/404) stop it at once; driven by a FakeClock and a FakeListWatch (no sockets)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from caching._objects import obj

from cloudcoil_cache.caching import Backoff, Informer, InformerKey, Tuning
from cloudcoil_cache.errors import Forbidden, ServerError, TooManyRequests
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeClock, FakeListWatch


def pod(name: str) -> Any:
    return obj(name)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def make_informer(
    clock: FakeClock, source: FakeListWatch, max_staleness: float | None = 60.0, backoff: float = 1.0
) -> Informer[Any]:
    tuning = Tuning(
        clock=clock, backoff=Backoff(initial=backoff, cap=backoff, jitter=0.0), min_watch_duration=0.0, freeze_gc=False
    )
    return Informer(InformerKey(Pod, None), lambda key: source, tuning=tuning, max_staleness=max_staleness)


def started(informer: Informer[Any], source: FakeListWatch) -> Informer[Any]:
    informer.start()
    assert informer.wait_for_sync(5)
    assert source.wait_for(lambda s: s.open_watches() == 1)
    return informer


def requests_made(source: FakeListWatch, n: int) -> bool:
    return source.wait_for(lambda s: len(s.requests) >= n)


def test_a_503_degrades_the_informer_which_keeps_serving_until_max_staleness(clock):
    source = FakeListWatch([pod("a")])
    informer = started(make_informer(clock, source, backoff=100.0), source)  # requests: list, watch
    try:
        assert informer.state()[0] == "current"
        source.fail_next_watch(ServerError("503 Service Unavailable", code=503))
        source.fail_next_watch(ServerError("503 Service Unavailable", code=503))
        source.end_watches()
        assert requests_made(source, 3) and clock.wait_for_sleepers(1)  # re-watch failed: backing off
        assert informer.state() == ("degraded", 0.0)
        assert isinstance(informer.last_error, ServerError)
        clock.advance(30)
        assert informer.state() == ("degraded", 30.0)
        clock.advance(31)
        assert informer.state() == ("stale", 61.0)
        clock.advance(40)  # the backoff ends: a relist works, the watch fails again: still stale
        assert requests_made(source, 5) and clock.wait_for_sleepers(1)
        assert informer.state() == ("stale", 101.0)
        clock.advance(200)
        assert requests_made(source, 7)
        assert source.wait_for(lambda s: s.open_watches() == 1)  # a healthy watch again
        assert informer.state() == ("current", 0.0)
        assert informer.last_error is None
        assert [r[0] for r in source.requests] == ["list", "watch", "watch", "list", "watch", "list", "watch"]
    finally:
        informer.stop()


@pytest.mark.parametrize("exc", [Forbidden("403 forbidden", code=403)], ids=["403"])
def test_a_hard_failure_stops_serving_at_once(clock, exc):
    source = FakeListWatch([pod("a")])
    informer = started(make_informer(clock, source), source)
    try:
        source.fail_next_list(exc)
        source.break_watches(ServerError("gone", code=500))  # the watch fails: the reflector relists
        assert clock.wait_for_sleepers(1)
        assert informer.state()[0] == "degraded"
        clock.advance(1.5)
        assert requests_made(source, 3) and clock.wait_for_sleepers(1)
        assert informer.state()[0] == "failing"  # at once, well within max_staleness
        assert isinstance(informer.last_error, Forbidden)
    finally:
        informer.stop()


def test_max_staleness_zero_stops_serving_at_the_first_error_and_none_never(clock):
    for limit, expected in ((0.0, "stale"), (None, "degraded")):
        source = FakeListWatch([pod("a")])
        informer = started(make_informer(clock, source, max_staleness=limit), source)
        try:
            source.fail_next_watch(TooManyRequests("429", code=429))
            source.end_watches()
            assert clock.wait_for_sleepers(1)
            clock.advance(3600)
            assert informer.state()[0] == expected
        finally:
            informer.stop()


def test_start_and_stop_from_two_threads_never_lose_a_reflector():
    """start() publishes its reflector under the informer's lock: a concurrent stop always sees it."""
    from cloudcoil_cache.caching import Informer as _Informer

    source = FakeListWatch([pod("a")])
    informer: _Informer[Any] = _Informer(InformerKey(Pod, None), lambda key: source, tuning=Tuning(freeze_gc=False))
    runs: list[Any] = []
    go = threading.Barrier(2)

    def starter() -> None:
        go.wait()
        for _ in range(200):
            informer.start()

    def stopper() -> None:
        go.wait()
        for _ in range(200):
            runs.append(informer.signal_stop())

    threads = [
        threading.Thread(target=starter, name="test-starter"),
        threading.Thread(target=stopper, name="test-stopper"),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    runs.append(informer.signal_stop())
    for run in runs:
        informer.join(run, 10)
        assert run is None or run.reflector is not None  # every stopped run had its reflector
    assert not [t for t in threading.enumerate() if t.name.startswith("cloudcoil-reflector")]
