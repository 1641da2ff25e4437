"""The bounded pool that the controller's reconcile_timeout and the admission handler deadline run on."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from cloudcoil_cache._deadline import Call, DeadlinePool, PoolBusy, PoolClosed

WAIT = 10.0


@pytest.fixture
def pools() -> Any:
    made: list[DeadlinePool] = []

    def make(*args: Any, **kw: Any) -> DeadlinePool:
        made.append(DeadlinePool(*args, **kw))
        return made[-1]

    yield make
    for pool in made:
        pool.close()
        assert pool.join(WAIT)


def test_calls_run_on_named_threads_that_are_reused(pools: Any) -> None:
    pool = pools("work", 4)
    names = []
    for _ in range(5):
        call = pool.submit(lambda: threading.current_thread().name)
        assert call.done.wait(WAIT)
        names.append(call.outcome())
    assert set(names) == {"work-0"}
    failing = pool.submit(lambda: 1 / 0)
    assert failing.done.wait(WAIT)
    with pytest.raises(ZeroDivisionError):
        failing.outcome()


def test_at_most_size_calls_run_and_a_full_pool_is_busy(pools: Any) -> None:
    pool = pools("work", 2)
    release = threading.Event()
    calls = [pool.submit(release.wait) for _ in range(2)]
    with pytest.raises(PoolBusy, match="all 2 threads are busy"):
        pool.submit(lambda: None, wait=0.05)
    release.set()
    assert all(c.done.wait(WAIT) for c in calls)
    assert pool.submit(lambda: "next", wait=WAIT).done.wait(WAIT)
    assert len(pool.threads()) == 2


def test_an_abandoned_call_runs_on_counted_and_its_end_is_reported(pools: Any) -> None:
    ended: list[Call] = []
    pool = pools("work", 2, on_abandoned_end=ended.append)
    release = threading.Event()
    call = pool.submit(lambda: release.wait() and "late", tag="key-1")
    assert not call.done.wait(0.01)
    assert pool.abandon(call) and call.abandoned and pool.abandoned == 1
    release.set()
    assert call.done.wait(WAIT)
    assert ended == [call] and ended[0].tag == "key-1" and call.outcome() == "late"
    assert pool.abandoned == 0
    finished = pool.submit(lambda: "done")
    assert finished.done.wait(WAIT)
    assert not pool.abandon(finished) and not finished.abandoned and finished.outcome() == "done"


def test_max_abandoned_holds_new_calls_until_an_abandoned_one_ends(pools: Any) -> None:
    pool = pools("work", 4, max_abandoned=1)
    release = threading.Event()
    stuck = pool.submit(release.wait)
    assert pool.abandon(stuck)
    with pytest.raises(PoolBusy):
        pool.submit(lambda: None, wait=0.05)  # two slots free, but the abandoned limit is reached
    started = threading.Event()
    got: list[Call] = []
    submitter = threading.Thread(target=lambda: got.append(pool.submit(started.set, wait=WAIT)))
    submitter.start()
    release.set()
    submitter.join(WAIT)
    assert started.wait(WAIT) and got


def test_close_refuses_new_calls_wakes_waiting_submitters_and_ends_the_threads(pools: Any) -> None:
    stopping = threading.Event()
    pool = pools("work", 1)
    release = threading.Event()
    busy = pool.submit(release.wait)
    errors: list[BaseException] = []

    def submit() -> None:
        try:
            pool.submit(lambda: None, stopping=stopping)
        except PoolClosed as exc:
            errors.append(exc)

    waiter = threading.Thread(target=submit)
    waiter.start()
    stopping.set()
    pool.close()
    waiter.join(WAIT)
    assert [type(e) for e in errors] == [PoolClosed]
    with pytest.raises(PoolClosed):
        pool.submit(lambda: None)
    assert not pool.join(0.01)  # the busy call still runs
    release.set()
    assert busy.done.wait(WAIT) and pool.join(WAIT) and pool.threads() == []


def test_a_pool_needs_a_thread() -> None:
    with pytest.raises(ValueError, match="size=0"):
        DeadlinePool("work", 0)
