"""Bounded staleness: transient failures degrade an informer (still serving) until max_staleness,
hard failures (403/404) stop it at once; driven by a FakeClock and a FakeListWatch (no sockets)."""

from __future__ import annotations

import ast
import inspect
import threading
from typing import Any

import pytest
from caching._objects import obj

from cloudcoil_cache.caching import Backoff, Informer, InformerKey, Tuning
from cloudcoil_cache.caching import _informer as informer_module
from cloudcoil_cache.caching._policy import serves_at
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


# ----------------------------------------------- the serving verdict follows every state change
STATE_FIELDS = {"_started", "_synced", "_last_error", "_unhealthy_since", "_max_staleness"}


def judged(informer: Informer[Any], clock: FakeClock) -> bool:
    """The informer's kept verdict, against its clock, says what its state says; returns whether it serves."""
    serves = serves_at(informer.serving, clock.now())
    assert serves is (informer.state()[0] in ("current", "degraded")), (informer.serving, informer.state())
    return serves


def test_every_state_change_rebuilds_the_serving_verdict(clock):
    """A cached get serves on ``Informer.serving`` without asking the policy: through start, sync,
    a transient failure, staleness (the verdict's deadline passing), a changed max_staleness,
    recovery, a hard failure and stop, the verdict says what the state says."""
    source = FakeListWatch([pod("a")])
    informer = make_informer(clock, source, backoff=100.0)
    assert informer.serving is None and not judged(informer, clock)
    started(informer, source)
    try:
        assert informer.serving is True and judged(informer, clock)
        source.fail_next_watch(ServerError("503 Service Unavailable", code=503))
        source.fail_next_watch(ServerError("503 Service Unavailable", code=503))
        source.end_watches()
        assert requests_made(source, 3) and clock.wait_for_sleepers(1)
        assert judged(informer, clock) and informer.state()[0] == "degraded"
        clock.advance(60)
        assert judged(informer, clock)  # at max_staleness: still degraded
        clock.advance(1)
        assert not judged(informer, clock)  # stale: the same verdict, past its deadline
        informer.max_staleness = None
        assert judged(informer, clock)  # no limit: degraded for good
        informer.max_staleness = 0
        assert not judged(informer, clock)
        informer.max_staleness = 1000
        assert judged(informer, clock)
        informer.max_staleness = 60
        assert not judged(informer, clock)
        clock.advance(40)  # the backoff ends: a relist works, the watch fails again
        assert requests_made(source, 5) and clock.wait_for_sleepers(1)
        assert not judged(informer, clock)
        clock.advance(200)
        assert requests_made(source, 7) and source.wait_for(lambda s: s.open_watches() == 1)
        assert informer.serving is True and judged(informer, clock)  # current again
        source.fail_next_list(Forbidden("403 forbidden", code=403))
        source.break_watches(ServerError("gone", code=500))
        assert clock.wait_for_sleepers(1)
        clock.advance(200)
        assert requests_made(source, 8) and clock.wait_for_sleepers(1)  # the relist got its 403
        assert informer.state()[0] == "failing" and informer.serving is None and not judged(informer, clock)
    finally:
        informer.stop()
    assert informer.serving is None and not judged(informer, clock)


def test_every_method_that_changes_the_state_rebuilds_the_verdict():
    """Structural guard: in ``Informer``, a method that assigns a field the verdict is built from
    calls ``_judge_locked()`` after its last such assignment (``__init__`` starts it at None)."""
    tree = ast.parse(inspect.getsource(informer_module))
    informer_class = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Informer")
    changers = []
    for method in informer_class.body:
        if not isinstance(method, ast.FunctionDef) or method.name == "__init__":
            continue
        assigned = [
            target.lineno
            for node in ast.walk(method)
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Attribute) and target.attr in STATE_FIELDS
        ]
        if not assigned:
            continue
        judged_at = [
            node.lineno
            for node in ast.walk(method)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "_judge_locked"
        ]
        assert judged_at and max(judged_at) > max(assigned), f"Informer.{method.name} changes the state unjudged"
        changers.append(method.name)
    assert sorted(changers) == [
        "_after_fork_in_child",
        "error",
        "max_staleness",
        "replace",
        "resume_after_fork",
        "signal_stop",
        "start",
    ]
    init = next(m for m in informer_class.body if isinstance(m, ast.FunctionDef) and m.name == "__init__")
    assert "self.serving: Verdict = None" in ast.unparse(init)
