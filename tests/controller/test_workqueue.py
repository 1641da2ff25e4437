"""WorkQueue: client-go semantics driven by a fake clock (no sleeps)."""

from __future__ import annotations

import threading

import pytest

from cloudcoil_cache.controller import (
    BucketRateLimiter,
    ItemExponentialRateLimiter,
    MaxOfRateLimiter,
    QueueHooks,
    WorkQueue,
    default_rate_limiter,
)
from cloudcoil_cache.testing import FakeClock


def make_queue(**kwargs):
    clock = FakeClock()
    return WorkQueue("test", clock=clock, **kwargs), clock


def test_add_dedups_a_key_that_is_waiting():
    q, _ = make_queue()
    for key in ["a", "b", "a", "a", "c", "b"]:
        q.add(key)
    assert len(q) == 3
    assert [q.get(timeout=0) for _ in range(3)] == ["a", "b", "c"]
    assert q.get(timeout=0) is None


def test_a_key_in_processing_is_not_handed_out_twice_and_is_processed_once_more_after_done():
    q, _ = make_queue()
    q.add("a")
    assert q.get(timeout=0) == "a"
    q.add("a")
    q.add("a")
    assert q.get(timeout=0) is None  # still processing: not handed to a second worker
    assert len(q) == 0
    q.done("a")
    assert q.get(timeout=0) == "a"  # exactly once more
    q.done("a")
    assert q.get(timeout=0) is None


def test_done_without_readd_does_not_requeue():
    q, _ = make_queue()
    q.add("a")
    q.done(q.get(timeout=0))
    assert len(q) == 0


def test_add_after_fires_when_the_clock_reaches_it():
    q, clock = make_queue()
    q.add_after("a", 5)
    q.add_after("b", 1)
    assert q.get(timeout=0) is None
    clock.advance(1)
    assert q.get(timeout=0) == "b"
    clock.advance(3.9)
    assert q.get(timeout=0) is None
    clock.advance(0.1)
    assert q.get(timeout=0) == "a"


def test_add_after_keeps_the_earliest_time_for_a_key():
    q, clock = make_queue()
    q.add_after("a", 10)
    q.add_after("a", 2)
    q.add_after("a", 30)
    clock.advance(2)
    assert q.get(timeout=0) == "a"
    q.done("a")
    clock.advance(100)
    assert q.get(timeout=0) is None  # the superseded timers do not fire again


def test_add_after_zero_adds_at_once():
    q, _ = make_queue()
    q.add_after("a", 0)
    assert q.get(timeout=0) == "a"


def test_a_blocked_get_wakes_when_a_timer_fires_on_the_real_clock():
    q = WorkQueue("real")
    q.add_after("a", 0.05)
    assert q.get(timeout=5) == "a"


def test_wake_fires_due_timers_for_a_waiting_worker():
    q, clock = make_queue()
    got = []
    q.add_after("a", 60)
    worker = threading.Thread(target=lambda: got.append(q.get(timeout=10)))
    worker.start()
    clock.advance(60)
    q.wake()
    worker.join(10)
    assert got == ["a"]


def test_add_rate_limited_backs_off_exponentially_per_key_and_forget_resets():
    limiter = ItemExponentialRateLimiter(base=1.0, cap=8.0)
    q, clock = make_queue(rate_limiter=limiter)
    delays = []
    for _ in range(5):
        before = q.num_requeues("a")
        q.add_rate_limited("a")
        waited = 0.0
        while q.get(timeout=0) is None:
            clock.advance(0.5)
            waited += 0.5
        q.done("a")
        delays.append(waited)
        assert q.num_requeues("a") == before + 1
    assert delays == [1.0, 2.0, 4.0, 8.0, 8.0]
    assert q.num_requeues("b") == 0
    q.forget("a")
    assert q.num_requeues("a") == 0
    q.add_rate_limited("a")
    clock.advance(1.0)
    assert q.get(timeout=0) == "a"


def test_default_rate_limiter_is_client_gos():
    clock = FakeClock()
    limiter = default_rate_limiter(clock=clock)
    assert limiter.when("x") == pytest.approx(0.005)
    assert limiter.when("x") == pytest.approx(0.010)
    assert limiter.when("x") == pytest.approx(0.020)
    for _ in range(40):
        limiter.when("y")
    assert limiter.when("y") == pytest.approx(1000.0)  # capped
    assert limiter.num_requeues("y") == 41


def test_token_bucket_allows_the_burst_then_paces_at_qps():
    clock = FakeClock()
    bucket = BucketRateLimiter(qps=10, burst=100, clock=clock)
    assert [bucket.when(i) for i in range(100)] == [0.0] * 100
    assert bucket.when("101") == pytest.approx(0.1)
    assert bucket.when("102") == pytest.approx(0.2)
    clock.advance(0.3)  # three tokens earned: two repay the reservations above, one is free
    assert bucket.when("103") == pytest.approx(0.0, abs=1e-9)
    assert bucket.when("104") == pytest.approx(0.1)


def test_max_of_rate_limiters_takes_the_longest_delay():
    clock = FakeClock()
    limiter = MaxOfRateLimiter(ItemExponentialRateLimiter(0.005, 1000), BucketRateLimiter(1, 1, clock=clock))
    assert limiter.when("a") == pytest.approx(0.005)  # the bucket's one token
    assert limiter.when("b") == pytest.approx(1.0)  # the bucket is empty: 1 s at 1 qps
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0


def test_shut_down_ignores_new_keys_and_get_returns_none_once_drained():
    q, _ = make_queue()
    q.add("a")
    q.add_after("later", 5)
    q.shut_down()
    q.add("b")
    q.add_rate_limited("c")
    assert q.shutting_down
    assert q.get(timeout=0) == "a"  # queued before shut_down: still handed out (client-go)
    assert q.get() is None  # shut down and empty: does not block
    q.done("a")


def test_shut_down_wakes_a_blocked_get():
    q, _ = make_queue()
    got = []
    worker = threading.Thread(target=lambda: got.append(q.get()))
    worker.start()
    q.shut_down()
    worker.join(10)
    assert got == [None]


def test_shut_down_with_drain_waits_for_keys_in_processing():
    q, _ = make_queue()
    q.add("a")
    key = q.get(timeout=0)
    assert not q.shut_down_with_drain(timeout=0)  # "a" still processing
    drained = threading.Event()
    waiter = threading.Thread(target=lambda: q.shut_down_with_drain() and drained.set())
    waiter.start()
    q.done(key)
    waiter.join(10)
    assert drained.is_set()


def test_none_and_unhashable_keys_are_refused():
    q, _ = make_queue()
    with pytest.raises(ValueError):
        q.add(None)
    with pytest.raises(TypeError):
        q.add(["a"])


def test_rate_limiter_arguments_are_checked():
    with pytest.raises(ValueError, match="base"):
        ItemExponentialRateLimiter(base=0)
    with pytest.raises(ValueError, match="qps"):
        BucketRateLimiter(qps=0)


class Recorded(QueueHooks):
    def __init__(self):
        self.adds = 0
        self.queued: list[float] = []
        self.worked: list[float] = []
        self.retries = 0

    def added(self):
        self.adds += 1

    def got(self, queued_seconds):
        self.queued.append(queued_seconds)

    def finished(self, work_seconds):
        self.worked.append(work_seconds)

    def retried(self):
        self.retries += 1


def test_measurements_depth_adds_durations_retries_unfinished_and_longest():
    hooks = Recorded()
    q, clock = make_queue(hooks=hooks, rate_limiter=ItemExponentialRateLimiter(1, 10))
    q.add("a")
    q.add("b")
    q.add("a")
    stats = q.stats()
    assert (stats.depth, stats.adds, stats.processing) == (2, 3, 0)
    clock.advance(2)
    a = q.get(timeout=0)
    assert hooks.queued == [2.0]
    clock.advance(1)
    b = q.get(timeout=0)
    clock.advance(3)
    stats = q.stats()
    assert stats.processing == 2
    assert stats.unfinished_work_seconds == pytest.approx(4 + 3)
    assert stats.longest_running_processor_seconds == pytest.approx(4)
    q.done(a)
    assert hooks.worked == [4.0]
    q.add_rate_limited(b)
    q.done(b)
    clock.advance(1)
    assert q.stats().depth == 1  # the retry's timer fired
    assert (hooks.retries, q.stats().retries) == (1, 1)
    assert hooks.adds == 4 == q.stats().adds
    assert q.stats().unfinished_work_seconds == 0


def test_a_function_returning_seconds_is_still_accepted_as_the_clock():
    now = [10.0]
    q = WorkQueue("fn", clock=lambda: now[0])
    q.add_after("k", 1)
    assert len(q) == 0
    now[0] += 1
    assert len(q) == 1
    with pytest.raises(TypeError, match="clock"):
        WorkQueue("bad", clock=3)  # type: ignore[arg-type]
