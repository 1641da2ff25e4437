"""docs/protocol.md §3: one test per failure row (1-16, 21, 22), over the fake API server on loopback."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import attrs
import pytest
from cluster_support import FAST, Recorder, seed, wait_until

from cloudcoil_cache.caching import Backoff
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod

PODS = "/api/v1/pods"


def lists(server: FakeAPIServer) -> list[Any]:
    return [r for r in server.requests if r.verb == "list" and r.path == PODS]


def watches(server: FakeAPIServer) -> list[Any]:
    return [r for r in server.requests if r.verb == "watch" and r.path == PODS]


def informer_of(config: Config) -> Any:
    return config.cache.get_informer(Pod)  # type: ignore[union-attr]


def store_names(config: Config) -> set[str]:
    return {p.name for p in informer_of(config).list()}


def test_row1_dropped_watch_rewatches_from_the_last_event_rv_without_relisting(server, make_config):
    seed(server, 3)
    config = make_config(resources=[Pod])
    rec = Recorder()
    rec.hook(informer_of(config))
    with config:
        server.wait_for_watches(1)
        created = server.create("pods", make_pod("late", "default"))
        rec.wait(lambda ev: "late" in [o.metadata.name for k, o in ev if k == "add"])
        server.clear_requests()
        server.drop_watches()
        rewatch = server.wait_for_request(lambda r: r.verb == "watch")
        assert rewatch.query["resourceVersion"] == created["metadata"]["resourceVersion"]
        assert lists(server) == []


def test_row2_server_timeout_ends_the_watch_cleanly_and_it_resumes_without_relisting(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod], tuning=attrs.evolve(FAST, watch_timeout=1.0))
    with config:
        first = server.wait_for_request(lambda r: r.verb == "watch")
        assert 1 <= int(first.query["timeoutSeconds"]) < 2
        assert first.query["allowWatchBookmarks"] == "true"
        server.clear_requests()
        second = server.wait_for_request(lambda r: r.verb == "watch", timeout=5)
        assert second.query["resourceVersion"]  # resumes from the last RV (bookmarks advance it)
        assert lists(server) == []


def test_row2_very_short_watches_back_off_and_relist(server, make_config):
    seed(server, 1)
    server.bookmark_interval = 60.0  # nothing arrives on the watch before it is cut
    tuning = attrs.evolve(FAST, min_watch_duration=5.0, backoff=Backoff(initial=0.3, cap=1.0))
    config = make_config(resources=[Pod], tuning=tuning)
    with config:
        server.wait_for_watches(1)
        server.clear_requests()
        cut = time.monotonic()
        server.drop_watches()  # the watch ends at once with no event: "very short"
        relist = server.wait_for_request(lambda r: r.verb == "list", timeout=10)
        assert relist.time - cut >= 0.3  # after a backoff, not in a hot loop
        assert [r for r in server.requests if r.verb == "watch" and r.time < relist.time] == []
        server.wait_for_request(lambda r: r.verb == "watch" and r.time > relist.time)


@pytest.mark.parametrize("paged", [False, True], ids=["unpaginated", "page_size=200"])
@pytest.mark.parametrize("mode", ["event", "http"], ids=["in-band-error-event", "http-410"])
def test_row3_expired_watch_relists_at_the_last_rv_and_reports_changes(server, make_config, mode, paged):
    server.expired_watch_mode = mode
    seed(server, 3)
    config = make_config(resources=[Pod], **({"tuning": attrs.evolve(FAST, page_size=200)} if paged else {}))
    rec = Recorder()
    rec.hook(informer_of(config))
    with config:
        rec.wait(lambda ev: len(ev) >= 3)
        last_rv = informer_of(config).status().resource_version
        server.stall_watches()
        server.delete("pods", "pod-0", "default")
        server.create("pods", make_pod("fresh", "default"))
        server.compact()
        server.clear_requests()
        server.clear_faults()
        server.drop_watches()
        rec.wait(
            lambda ev: (
                "pod-0" in [o.metadata.name for k, o in ev if k == "delete"]
                and "fresh" in [o.metadata.name for k, o in ev if k == "add"]
            )
        )
        relists = lists(server)
        assert relists and relists[0].query.get("resourceVersion") in (last_rv,) + _later(server)
        if paged:  # a concrete RV with a limit needs "not older than" (else: exactly that RV, from etcd)
            assert relists[0].query.get("resourceVersionMatch") == "NotOlderThan" and "limit" in relists[0].query
        else:
            # a concrete RV without a limit is "not older than" (kube-apiserver serves it from its
            # watch cache); the body is decoded while it is read, a batch at a time
            assert "limit" not in relists[0].query and "resourceVersionMatch" not in relists[0].query
        assert store_names(config) == {"pod-1", "pod-2", "fresh"}


def _later(server: FakeAPIServer) -> tuple[str, ...]:
    # Bookmarks may advance the informer's RV past the one read above before the drop.
    return tuple(r.query.get("resourceVersion", "") for r in server.requests if r.verb == "watch")


def test_row4_expired_continue_token_restarts_the_list_and_never_mixes_snapshots(server, make_config):
    seed(server, 6)
    server.continue_ttl = 0.2
    server.set_delay(0.3)  # every continue token is stale by the time page 2 is asked for
    config = make_config(resources=[Pod], wait_for_sync=False, tuning=attrs.evolve(FAST, page_size=2))
    with config:
        server.wait_for_request(lambda r: r.verb == "list" and "continue" in r.query)
        # the restart: a fresh first page (no continue) after a continued one
        server.clear_requests()
        restart = server.wait_for_request(lambda r: r.verb == "list" and "continue" not in r.query)
        assert restart.query.get("resourceVersion", "") == ""
        server.set_delay(0)
        server.continue_ttl = None
        assert informer_of(config).wait_for_sync(10)
        assert store_names(config) == {f"pod-{i}" for i in range(6)}


def test_row5_restart_with_rv_reset_relists_from_scratch_and_converges(server, make_config):
    seed(server, 3)
    config = make_config(resources=[Pod])
    rec = Recorder()
    rec.hook(informer_of(config))
    with config:
        server.wait_for_watches(1)
        server.clear_requests()
        server.restart(revision=2)  # etcd restored from an old backup: RVs went backwards
        server.create("pods", make_pod("after-restore", "default"))
        relist = server.wait_for_request(
            lambda r: r.verb == "list" and r.query.get("resourceVersion", "") == "", timeout=10
        )
        assert relist
        rec.wait(lambda ev: "after-restore" in [_n(v) for k, v in ev if k == "add"])
        assert store_names(config) == {"pod-0", "pod-1", "pod-2", "after-restore"}


def test_row6_error_event_with_500_backs_off_and_relists_without_storing_the_status(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod])
    with config:
        server.wait_for_watches(1)
        server.clear_requests()
        server.send_error_event(
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": "etcd leader changed",
                "reason": "InternalError",
                "code": 500,
            }
        )
        server.wait_for_request(lambda r: r.verb == "list")
        server.wait_for_request(lambda r: r.verb == "watch")
        assert store_names(config) == {"pod-0", "pod-1"}
        assert all(p.kind == "Pod" for p in informer_of(config).list())


def test_row7_malformed_line_never_reaches_the_store_and_forces_a_relist(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod])
    with config:
        server.wait_for_watches(1)
        server.clear_requests()
        server.send_malformed_line()
        relist = server.wait_for_request(lambda r: r.verb == "list")
        server.wait_for_request(lambda r: r.verb == "watch" and r.time > relist.time)
        # the error is cleared once that watch is open (a list alone does not make it current)
        cache = config.cache
        assert cache is not None
        wait_until(cache._sync_cond, lambda: informer_of(config).status().last_error is None)
        assert store_names(config) == {"pod-0", "pod-1"}


def test_row8_partial_line_at_a_drop_is_discarded_and_the_watch_resumes(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod])
    rec = Recorder()
    rec.hook(informer_of(config))
    with config:
        server.wait_for_watches(1)
        rec.wait(lambda ev: len(ev) >= 2)
        rv_before = informer_of(config).status().resource_version
        server.clear_requests()
        server.stall_watches()
        server.create("pods", make_pod("cut", "default"))
        server.clear_faults()
        server.drop_watches(mid_object=True)
        rewatch = server.wait_for_request(lambda r: r.verb == "watch")
        assert lists(server) == []
        assert int(rewatch.query["resourceVersion"]) <= int(
            server.get("pods", "cut", "default")["metadata"]["resourceVersion"]
        )
        rec.wait(lambda ev: "cut" in [o.metadata.name for k, o in ev if k == "add"])
        assert rv_before is not None


def test_row9_401_reloads_a_rotated_token_file_and_recovers(server, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("old-token")
    server.expected_token = "old-token"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
        f"clusters: [{{name: fake, cluster: {{server: '{server.url}'}}}}]\n"
        f"users: [{{name: u, user: {{tokenFile: '{token_file}'}}}}]\n"
        "contexts: [{name: fake, context: {cluster: fake, user: u, namespace: default}}]\n"
    )
    from cloudcoil_cache.caching import Cache

    config = Config(kubeconfig=str(kubeconfig), cache=Cache(resources=[Pod], tuning=FAST))
    rec = Recorder()
    rec.hook(informer_of(config))
    try:
        with config:
            server.wait_for_watches(1)
            token_file.write_text("new-token")
            server.expected_token = "new-token"
            server.drop_watches()
            server.create("pods", make_pod("after-rotation", "default"))
            rec.wait(lambda ev: "after-rotation" in [_n(v) for k, v in ev if k == "add"], timeout=15)
    finally:
        config.close()


def test_row10_403_backs_off_exponentially_then_syncs_and_never_hot_loops(server, make_config):
    seed(server, 1)
    server.fail_next(4, 403, verb="list")
    config = make_config(
        resources=[Pod], wait_for_sync=False, tuning=attrs.evolve(FAST, backoff=Backoff(initial=0.1, cap=1.0))
    )
    rec = Recorder()
    rec.hook(informer_of(config))
    with config:
        rec.wait(lambda ev: len(ev) >= 1, timeout=15)
        times = [r.time for r in lists(server)]
        gaps = [b - a for a, b in zip(times, times[1:])]
        assert len(times) == 5
        assert gaps[0] >= 0.1 and gaps[1] >= 0.2 and gaps[2] >= 0.4  # doubling, at least
        assert store_names(config) == {"pod-0"}


def test_row11_watch_429_honours_retry_after_and_rewatches_without_relisting(server, make_config):
    seed(server, 1)
    config = make_config(resources=[Pod])
    with config:
        server.wait_for_watches(1)
        server.clear_requests()
        server.fail_next(1, 429, verb="watch", retry_after=1)
        server.drop_watches()
        rejected = server.wait_for_request(lambda r: r.verb == "watch")
        retried = server.wait_for_request(
            lambda r: r.verb == "watch" and r is not rejected and r.time > rejected.time, timeout=5
        )
        assert retried.time - rejected.time >= 1.0
        assert lists(server) == []


def test_row12_objects_deleted_while_disconnected_reach_on_delete_with_last_state(server, make_config):
    seed(server, 3)
    config = make_config(resources=[Pod])
    rec = Recorder()
    rec.hook(informer_of(config))
    with config:
        rec.wait(lambda ev: len(ev) >= 3)
        server.stall_watches()
        server.delete("pods", "pod-1", "default")
        server.compact()
        server.clear_faults()
        server.drop_watches()
        rec.wait(lambda ev: any(k == "delete" for k, _ in ev))
        (gone,) = [o for k, o in rec.events if k == "delete"]
        assert gone.metadata.name == "pod-1" and gone.spec is not None  # the last known state
        assert store_names(config) == {"pod-0", "pod-2"}


def test_row13_delete_and_recreate_while_disconnected_is_a_delete_then_an_add(server, make_config):
    seed(server, 1)
    config = make_config(resources=[Pod])
    rec = Recorder()
    rec.hook(informer_of(config))
    with config:
        rec.wait(lambda ev: len(ev) >= 1)
        server.stall_watches()
        old_uid = server.get("pods", "pod-0", "default")["metadata"]["uid"]
        server.delete("pods", "pod-0", "default")
        server.create("pods", make_pod("pod-0", "default"))
        server.compact()
        server.clear_faults()
        server.drop_watches()
        rec.wait(lambda ev: len(ev) >= 3)
        assert [k for k, _ in rec.events] == ["add", "delete", "add"]  # never an update between two objects
        (_, first), (_, gone), (_, again) = rec.events
        assert first.metadata.uid == gone.metadata.uid == old_uid and again.metadata.uid != old_uid


def test_row14_a_slow_handler_delays_neither_other_handlers_nor_the_cache(server, make_config):
    config = make_config(resources=[Pod])
    informer = informer_of(config)
    fast, release = Recorder(), threading.Event()
    informer.on_add(lambda pod: release.wait(1.0))  # a handler taking 1 s per event
    # another view of the same informer: its own lane, not held up by the slow one
    config.cache.get_informer(Pod, sync=True).on_add(lambda pod: fast.add("add", pod))  # type: ignore[union-attr]
    with config:
        for i in range(5):
            server.create("pods", make_pod(f"burst-{i}", "default"))
        started = time.monotonic()
        fast.wait(lambda ev: len(ev) >= 5, timeout=3)
        assert time.monotonic() - started < 2.0
        assert {f"burst-{i}" for i in range(5)} <= store_names(config)
        backlogs = informer.status().handler_backlogs
        assert max(backlogs.values()) >= 3  # the slow handler's queue, visible in status()
        release.set()


def test_row15_a_raising_handler_is_logged_and_keeps_receiving_events(server, make_config, caplog):
    config = make_config(resources=[Pod])
    informer = informer_of(config)
    seen = Recorder()

    @informer.on_add
    def flaky(pod):
        seen.add("add", pod)
        if int(pod.metadata.name.split("-")[1]) % 3 == 0:
            raise RuntimeError("boom on every third pod")

    with caplog.at_level(logging.ERROR), config:
        for i in range(7):
            server.create("pods", make_pod(f"p-{i}", "default"))
        seen.wait(lambda ev: len(ev) >= 7)
    assert seen.names("add") == [f"p-{i}" for i in range(7)]
    failures = [r for r in caplog.records if "raised" in r.getMessage()]
    assert len(failures) == 3 and "default/p-0" in failures[0].getMessage()


def test_row16_a_stalled_stream_is_caught_by_the_read_timeout_and_rewatched(server, make_config):
    seed(server, 1)
    server.bookmark_interval = 60.0
    # a stall: no end 1 s (the watch's own timeoutSeconds) + 0.5 s after it opened
    config = make_config(resources=[Pod], tuning=attrs.evolve(FAST, read_timeout=0.5, watch_timeout=0.5))
    with config:
        server.wait_for_watches(1)
        server.stall_watches()
        server.clear_requests()
        started = time.monotonic()
        server.wait_for_request(lambda r: r.verb == "watch", timeout=5)
        assert time.monotonic() - started >= 0.4
        assert lists(server) == []
        server.clear_faults()


def test_row21_objects_entering_and_leaving_the_selector_are_added_and_deleted(server, make_config):
    seed(server, 1, app="web")
    seed(server, 1, prefix="other", app="db")
    config = make_config(resources=[Pod], label_selector="app=web")
    rec = Recorder()
    rec.hook(informer_of(config))
    with config:
        rec.wait(lambda ev: len(ev) >= 1)
        assert store_names(config) == {"pod-0"}
        pod = server.get("pods", "pod-0", "default")
        pod["metadata"]["labels"]["app"] = "db"
        server.update("pods", pod, "default")
        other = server.get("pods", "other-0", "default")
        other["metadata"]["labels"]["app"] = "web"
        server.update("pods", other, "default")
        rec.wait(
            lambda ev: (
                "pod-0" in [_n(v) for k, v in ev if k == "delete"] and "other-0" in [_n(v) for k, v in ev if k == "add"]
            )
        )
        assert store_names(config) == {"other-0"}


def _n(value: Any) -> str:
    return value.metadata.name


@pytest.mark.parametrize("phase", ["during-list", "during-watch"])
def test_row22_stop_is_prompt_and_delivers_nothing_afterwards(server, make_config, phase):
    seed(server, 3)
    config = make_config(resources=[Pod], wait_for_sync=False)
    rec = Recorder()
    rec.hook(informer_of(config))
    if phase == "during-list":
        server.set_delay(1.0)
    config.activate()
    if phase == "during-list":
        server.wait_for_request(lambda r: r.verb == "list")
    else:
        server.wait_for_watches(1)
        rec.wait(lambda ev: len(ev) >= 3)
    started = time.monotonic()
    config.deactivate()
    elapsed = time.monotonic() - started
    count = len(rec.events)
    server.set_delay(0)
    server.create("pods", make_pod("after-stop", "default"))
    assert len(rec.events) == count
    assert not [t for t in threading.enumerate() if t.name.startswith("cloudcoil-")]
    assert elapsed < 0.5  # a LIST being read (1 s delay) is interrupted too, not waited for
