"""The chaos soak's checks catch what they are for (synthetic inputs; the soak itself is test_chaos_soak.py)."""

from __future__ import annotations

from types import SimpleNamespace

from chaos_harness import ChaosSettings, Episode, EventLog, episode_violations, most_in_window

from cloudcoil_cache.testing import RecordedRequest

S = ChaosSettings(seed=0)
PATH = "/api/v1/pods"


def obj(name: str, uid: str, rv: str) -> SimpleNamespace:
    return SimpleNamespace(metadata=SimpleNamespace(namespace="ns", name=name, uid=uid, resource_version=rv))


def req(verb: str, t: float, rv: str = "5") -> RecordedRequest:
    return RecordedRequest("GET", PATH, {"resourceVersion": rv}, {}, t, verb, b"", "token-user")


def test_a_log_in_order_replays_to_the_last_state_including_a_re_creation():
    log = EventLog("v")
    log.add(obj("a", "u1", "1"))
    log.update(obj("a", "u1", "1"), obj("a", "u1", "2"))
    log.delete(obj("a", "u1", "3"))
    log.add(obj("a", "u2", "4"))
    state, problems = log.replay()
    assert problems == [] and state == {("ns", "a"): ("u2", "4")}


def test_events_after_a_delete_and_re_creations_reported_as_updates_are_violations():
    log = EventLog("v")
    log.add(obj("a", "u1", "1"))
    log.delete(obj("a", "u1", "2"))
    log.update(obj("a", "u1", "1"), obj("a", "u1", "3"))  # update after its delete
    log.add(obj("b", "u5", "4"))
    log.update(obj("b", "u5", "4"), obj("b", "u6", "5"))  # re-created, reported as an update
    log.delete(obj("c", "u7", "6"))  # never added
    log.add(obj("b", "u8", "7"))  # added while live
    _, problems = log.replay()
    assert len(problems) == 4, problems
    assert "not live" in problems[0] and "re-created" in problems[1]
    assert "delete of an object not live" in problems[2] and "added while live" in problems[3]


def test_an_update_whose_old_state_was_not_the_last_delivered_is_a_violation():
    log = EventLog("v")
    log.add(obj("a", "u1", "1"))
    log.update(obj("a", "u1", "7"), obj("a", "u1", "8"))  # an update (rv 2..6) was skipped or reordered
    _, problems = log.replay()
    assert len(problems) == 1 and "not the last one delivered" in problems[0]


def test_a_relist_after_a_dropped_watch_is_a_violation_unless_the_watch_was_very_short():
    drop = Episode("drop", start=10.0, end=11.0)
    reqs = [req("list", 1.0), req("watch", 1.1), req("watch", 10.05), req("list", 10.3), req("watch", 10.4)]
    (problem,) = episode_violations("pods", PATH, drop, reqs, S)
    assert "re-watch was enough" in problem
    young = [req("list", 1.0), req("watch", 9.99), req("list", 10.3), req("watch", 10.4)]
    assert episode_violations("pods", PATH, drop, young, S) == []
    assert episode_violations("pods", PATH, Episode("error_410", 10.0, 11.0), reqs, S) == []


def test_a_watch_429_must_be_followed_by_a_re_watch_after_retry_after():
    ep = Episode("watch_429", start=10.0, end=12.0, target=PATH)
    good = [req("watch", 10.01), req("watch", 10.01 + S.retry_after + 0.01)]
    assert episode_violations("pods", PATH, ep, good, S) == []
    early = [req("watch", 10.01), req("watch", 10.05)]
    assert "not honoured" in episode_violations("pods", PATH, ep, early, S)[0]
    relisted = [req("watch", 10.01), req("list", 10.5)]
    assert any("not a re-watch" in p for p in episode_violations("pods", PATH, ep, relisted, S))


def test_the_hot_loop_figure_counts_the_busiest_window():
    assert most_in_window([], 1.0) == 0
    assert most_in_window([0.0, 0.5, 0.9, 1.6, 1.7, 1.8, 1.85], 1.0) == 5  # 0.9 .. 1.85
    assert most_in_window([i * 0.001 for i in range(500)], 1.0) == 500
