"""The runnable protocol's pieces: the one thread class, and run groups (in order, reverse, one deadline)."""

from __future__ import annotations

import logging
import threading

import pytest

from cloudcoil_cache._runnable import Group, Runnable, RunnableThread, Step, library_threads

WAIT = 10.0


class Member:
    """Records its start, stop and the timeout its join was given; a join waits on ``release`` for it."""

    def __init__(self, name: str, log: list[str], *, fail: bool = False, hold: bool = False) -> None:
        self.name = name
        self.log = log
        self.fail = fail
        self.release = threading.Event()
        if not hold:
            self.release.set()
        self.joined_with: list[float | None] = []

    def start(self) -> None:
        if self.fail:
            raise RuntimeError(f"{self.name} failed")
        self.log.append(f"start {self.name}")

    def stop(self) -> None:
        self.log.append(f"stop {self.name}")

    def join(self, timeout: float | None = None) -> None:
        self.joined_with.append(timeout)
        self.release.wait(timeout)

    def ready(self) -> bool:
        return True

    def threads(self) -> list[threading.Thread]:
        return []


def test_a_group_starts_in_order_and_stops_in_reverse() -> None:
    log: list[str] = []
    members = [Member(n, log) for n in "abc"]
    group = Group("g", members)
    assert all(isinstance(m, Runnable) for m in [*members, group])
    group.start()
    assert log == ["start a", "start b", "start c"] and group.ready()
    assert group.close(WAIT) == []
    assert log[3:] == ["stop c", "stop b", "stop a"]
    group.close(WAIT)  # a second stop: nothing left to stop
    assert len(log) == 6


def test_a_stop_gives_each_member_what_is_left_of_one_deadline() -> None:
    log: list[str] = []
    first, slow = Member("first", log), Member("slow", log, hold=True)
    group = Group("g", [first, slow])
    group.start()
    group.close(0.3)  # the slow member's join uses the whole 0.3 s: nothing is left for the first
    assert slow.joined_with == [pytest.approx(0.3, abs=0.05)]
    assert first.joined_with[0] is not None and first.joined_with[0] < 0.05
    assert log[2:] == ["stop slow", "stop first"]


def test_a_failed_start_stops_what_started_in_reverse_and_raises() -> None:
    log: list[str] = []
    group = Group("g", [Member("a", log), Member("b", log), Member("bad", log, fail=True), Member("d", log)])
    with pytest.raises(RuntimeError, match="bad failed"):
        group.start()
    assert log == ["start a", "start b", "stop b", "stop a"]


def test_groups_nest_and_keep_their_order() -> None:
    log: list[str] = []
    inner = Group("inner", [Member("i1", log), Member("i2", log)])
    outer = Group("outer", [Member("o1", log), inner, Member("o2", log)])
    outer.start()
    outer.close(WAIT)
    assert log == ["start o1", "start i1", "start i2", "start o2", "stop o2", "stop i2", "stop i1", "stop o1"]


def test_a_runnable_thread_is_registered_while_it_lives_and_stopped_by_its_event() -> None:
    entered = threading.Event()
    interrupted: list[bool] = []

    def body() -> None:
        entered.set()
        thread.stopping.wait(WAIT)

    thread = RunnableThread("test-runnable", body, owner="a test", on_stop=lambda: interrupted.append(True))
    thread.join(0)  # not started: returns at once
    assert thread.threads() == []
    thread.start()
    assert entered.wait(WAIT)
    assert library_threads()[thread] == "a test" and thread.ready() and thread.daemon
    thread.stop()
    thread.join(WAIT)
    assert not thread.is_alive() and interrupted == [True] and thread not in library_threads()


def test_a_runnable_threads_exception_is_logged_with_its_name_and_owner(caplog: pytest.LogCaptureFixture) -> None:
    def body() -> None:
        raise ValueError("broken")

    thread = RunnableThread("test-failing", body, owner="a test")
    with caplog.at_level(logging.ERROR, logger="cloudcoil_cache.threads"):
        thread.start()
        thread.join(WAIT)
    assert "thread test-failing (of a test) ended on an exception" in caplog.text and "broken" in caplog.text


def test_a_thread_joining_itself_returns() -> None:
    done = threading.Event()

    def body() -> None:
        thread.join(WAIT)  # its own join: returns at once (an owner stopping from its own thread)
        done.set()

    thread = RunnableThread("test-self-join", body)
    thread.start()
    assert done.wait(WAIT)
    thread.join(WAIT)


def test_a_step_joins_its_threads_within_the_timeout() -> None:
    release = threading.Event()
    thread = RunnableThread("test-step", release.wait, WAIT, stopping=release)
    step = Step("step", start=thread.start, stop=thread.stop, threads=thread.threads)
    group = Group("g", [step])
    group.start()
    assert group.threads() == [thread]
    assert group.close(WAIT) == []
    assert not thread.is_alive()


def test_the_librarys_runnables_satisfy_the_protocol() -> None:
    from cloudcoil_cache._deadline import DeadlinePool
    from cloudcoil_cache.aio._loop import LoopThread

    pool = DeadlinePool("test-pool", 1)
    loop = LoopThread("test-loop")
    group = Group("g", [pool, loop])
    assert isinstance(pool, Runnable) and isinstance(loop, Runnable)
    group.start()
    assert loop.ready() and pool.ready()
    assert pool.submit(lambda: 42).done.wait(WAIT)
    assert group.close(WAIT) == []
    assert not pool.ready() and not loop.ready() and pool.threads() == []
