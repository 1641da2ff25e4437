"""WorkQueue priorities: order, FIFO within one, aging (no starvation), dedup with upgrade, backoff kept."""

from __future__ import annotations

import pytest

from cloudcoil_cache.controller import ItemExponentialRateLimiter, Priority, QueueHooks, WorkQueue
from cloudcoil_cache.testing import FakeClock

EVENT, REPLAY, CONVERGED = Priority.EVENT, Priority.REPLAY, Priority.CONVERGED


def make_queue(**kwargs):
    clock = FakeClock()
    return WorkQueue("test", clock=clock, **kwargs), clock


def drain(q):
    keys = []
    while (key := q.get(timeout=0)) is not None:
        keys.append(key)
        q.done(key)
    return keys


def test_higher_priorities_first_and_first_in_first_out_within_one():
    q, _ = make_queue()
    q.add("c1", CONVERGED)
    q.add("r1", REPLAY)
    q.add("e1")  # EVENT is the default
    q.add("r2", REPLAY)
    q.add("c2", CONVERGED)
    q.add("e2", EVENT)
    assert q.depth_by_priority() == {"EVENT": 2, "REPLAY": 2, "CONVERGED": 2}
    assert drain(q) == ["e1", "e2", "r1", "r2", "c1", "c2"]


def test_a_key_queued_again_higher_moves_up_and_one_queued_again_lower_stays():
    q, _ = make_queue()
    for key in ["a", "b", "c"]:
        q.add(key, REPLAY)
    q.add("x")
    q.add("c", EVENT)  # upgraded: one item, behind the events already queued
    q.add("x", CONVERGED)  # never downgraded
    assert len(q) == 4
    assert q.depth_by_priority() == {"EVENT": 2, "REPLAY": 2, "CONVERGED": 0}
    assert drain(q) == ["x", "c", "a", "b"]


def test_a_key_added_while_processing_is_queued_once_done_at_the_highest_priority_it_was_added_with():
    q, _ = make_queue()
    q.add("a", REPLAY)
    q.add("b", REPLAY)
    assert q.get(timeout=0) == "a"
    q.add("a", REPLAY)
    q.add("a", EVENT)
    q.add("a", CONVERGED)
    assert q.processing() == ["a"]
    assert q.depth_by_priority()["EVENT"] == 0  # not queued while it is being processed
    assert q.get(timeout=0) == "b"  # one worker per key: "a" is not handed out twice
    q.done("b")
    q.done("a")
    assert q.depth_by_priority() == {"EVENT": 1, "REPLAY": 0, "CONVERGED": 0}
    assert drain(q) == ["a"]


def test_without_aging_a_flood_of_events_starves_the_replay():
    q, clock = make_queue(age_after=None)
    q.add("old", REPLAY)
    served = []
    for i in range(50):
        q.add(f"e{i}")
        clock.advance(10)
        key = q.get(timeout=0)
        served.append(key)
        q.done(key)
    assert "old" not in served  # strict priorities: what aging is for


def test_aged_keys_take_turns_with_events_so_neither_starves():
    q, clock = make_queue(age_after=60)
    for i in range(5):
        q.add(f"r{i}", REPLAY)
    served = []

    def serve():
        key = q.get(timeout=0)
        served.append(key)
        q.done(key)

    for i in range(5):  # before the replay aged: events only
        q.add(f"e{i}")
        clock.advance(10)
        serve()
    assert served == ["e0", "e1", "e2", "e3", "e4"]
    clock.advance(10)  # the replay's keys have waited 60 s
    for i in range(5, 12):  # one new event per pass, more than can be served
        q.add(f"e{i}")
        q.add(f"f{i}")
        clock.advance(1)
        serve()
    # an aged key, then an event, in turn: the replay progresses, and an event waits one pass more at most
    assert served[5:] == ["r0", "e5", "r1", "f5", "r2", "e6", "r3"]


def test_with_nothing_of_a_higher_priority_lower_ones_are_served_at_once():
    q, clock = make_queue(age_after=60)
    q.add("c", CONVERGED)
    q.add("r", REPLAY)
    assert drain(q) == ["r", "c"]


def test_of_two_aged_priorities_the_key_that_waited_longest_goes_first():
    q, clock = make_queue(age_after=5)
    q.add("c", CONVERGED)
    clock.advance(1)
    q.add("r", REPLAY)
    clock.advance(10)
    q.add("e1")
    q.add("e2")
    q.add("e3")
    assert drain(q) == ["c", "e1", "r", "e2", "e3"]


def test_restart_of_5000_objects_then_a_user_edit_is_served_within_two_passes_on_the_injected_clock():
    # The done-when of issue 35 on the queue: a pass takes 50 ms of the fake clock; the world is
    # queued at restart (REPLAY), a user edit arrives mid-way (EVENT): it waits 2 passes at most,
    # also once the replay has aged (60 s), and the replay is all served, once each.
    q, clock = make_queue(age_after=60)
    for i in range(5000):
        q.add(f"cm-{i:04d}", REPLAY)
    served: list[str] = []
    edits = {10: "cm-4999", 1500: "cm-4000", 3000: "user-new"}  # after these passes (1500 × 50 ms > 60 s)
    waited = {}
    while (key := q.get(timeout=0)) is not None:
        served.append(key)
        clock.advance(0.05)
        q.done(key)
        edit = edits.get(len(served))
        if edit is not None:
            q.add(edit, EVENT)
            waited[edit] = len(served)
    for edit, at in waited.items():
        assert served.index(edit, at) - at < 2, (edit, served[at : at + 5])
    assert served.count("cm-4999") == 1  # upgraded, not queued twice
    assert len(served) == 5001 and set(served) == {f"cm-{i:04d}" for i in range(5000)} | {"user-new"}


def test_a_retry_keeps_its_priority_and_its_backoff():
    limiter = ItemExponentialRateLimiter(1.0, 100.0)
    q, clock = make_queue(rate_limiter=limiter)
    q.add("low", REPLAY)
    assert q.get(timeout=0) == "low"
    q.add_rate_limited("low")  # failed: back off 1 s, then queued again at REPLAY
    q.done("low")
    assert q.get(timeout=0) is None
    assert q.stats().waiting == 1
    clock.advance(0.5)
    assert q.get(timeout=0) is None  # the backoff is kept
    clock.advance(0.5)
    q.add("event")
    assert q.depth_by_priority() == {"EVENT": 1, "REPLAY": 1, "CONVERGED": 0}
    assert drain(q) == ["event", "low"]
    assert q.num_requeues("low") == 1

    q.add("r", REPLAY)
    q.add("high", EVENT)
    assert q.get(timeout=0) == "high"
    q.add_rate_limited("high")
    q.done("high")
    clock.advance(1.0)
    # due after "r" was ready, it still goes first: its priority, not when it became ready
    # (controller-runtime's bug fixed in its pull request 3330)
    assert drain(q) == ["high", "r"]
    assert limiter.when("high") == 2.0  # the second retry of "high": its own exponential backoff


def test_add_after_at_a_priority_and_the_highest_of_a_keys_timers_wins():
    q, clock = make_queue()
    q.add("r", REPLAY)
    q.add_after("t", 5, CONVERGED)
    q.add_after("t", 10, EVENT)  # later: the earlier timer is kept, the higher priority too
    clock.advance(5)
    assert drain(q) == ["t", "r"]
    q.add_after("fresh", 1)  # a key that is nowhere: EVENT
    q.add("r2", REPLAY)
    clock.advance(1)
    assert drain(q) == ["fresh", "r2"]


def test_stats_and_hooks_count_every_priority():
    class Hooks(QueueHooks):
        def __init__(self):
            self.adds = 0
            self.gots = 0

        def added(self):
            self.adds += 1

        def got(self, queued_seconds):
            self.gots += 1

    hooks = Hooks()
    q, clock = make_queue(hooks=hooks)
    q.add("a", REPLAY)
    q.add("a", EVENT)
    q.add("b", CONVERGED)
    stats = q.stats()
    assert (stats.depth, stats.adds) == (2, 3)
    assert stats.depth_by_priority == {"EVENT": 1, "REPLAY": 0, "CONVERGED": 1}
    assert drain(q) == ["a", "b"]
    assert (hooks.adds, hooks.gots) == (3, 2)
    q.add("custom", 7)  # any int: named by its number
    assert q.stats().depth_by_priority == {"7": 1, "EVENT": 0, "REPLAY": 0, "CONVERGED": 0}


def test_shut_down_drains_every_priority_then_get_returns_none():
    q, _ = make_queue()
    q.add("r", REPLAY)
    q.add("e")
    q.shut_down()
    q.add("late")
    assert drain(q) == ["e", "r"]
    assert q.get(timeout=0) is None


def test_bad_priorities_and_aging_are_typed_errors():
    q, _ = make_queue()
    with pytest.raises(TypeError, match="priority must be an int"):
        q.add("a", "high")
    with pytest.raises(TypeError, match="priority must be an int"):
        q.add_after("a", 1, 1.5)
    with pytest.raises(ValueError, match="age_after"):
        WorkQueue("bad", age_after=-1)
    assert len(q) == 0
