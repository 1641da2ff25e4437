"""Direct subscriptions: registration, replay to late handlers, removal, backlogs, resync, relist deletes."""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

import pytest
from cluster_support import Recorder, names, requests_to, seed

from cloudcoil_cache.caching import HandlerHandle
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import make_pod


def test_a_handler_registered_after_the_sync_gets_every_cached_object_then_live_events_without_duplicates(
    server, make_config
):
    seed(server, 3)
    config = make_config(resources=[Pod])
    with config:
        informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
        rec = Recorder()
        informer.on_add(lambda pod: rec.add("add", pod))
        rec.wait(lambda ev: len(ev) >= 3)
        assert sorted(rec.names("add")) == ["pod-0", "pod-1", "pod-2"]
        server.create("pods", make_pod("live-0"))
        server.create("pods", make_pod("live-1"))
        server.create("pods", make_pod("sentinel"))
        rec.wait(lambda ev: "sentinel" in [p.metadata.name for _, p in ev])
    added = rec.names("add")
    assert len(added) == len(set(added)) == 6
    assert set(added[:3]) == {"pod-0", "pod-1", "pod-2"}  # the replay comes before live events
    assert set(added[3:]) == {"live-0", "live-1", "sentinel"}


def test_handlers_registered_while_events_stream_in_see_each_object_exactly_once(server, make_config):
    seed(server, 5)
    config = make_config(resources=[Pod])
    recorders = [Recorder() for _ in range(5)]
    with config:
        informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
        for i, rec in enumerate(recorders):  # interleave registrations with live creates
            server.create("pods", make_pod(f"live-{i}"))
            informer.on_add(lambda pod, rec=rec: rec.add("add", pod))
        server.create("pods", make_pod("sentinel"))
        for rec in recorders:
            rec.wait(lambda ev: "sentinel" in [p.metadata.name for _, p in ev])
    expected = {f"pod-{i}" for i in range(5)} | {f"live-{i}" for i in range(5)} | {"sentinel"}
    for rec in recorders:
        added = rec.names("add")
        assert sorted(added) == sorted(expected)


class _Copy:
    """A user's own copy of the objects, kept by add/update/delete handlers."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.cond = threading.Condition()

    def add(self, pod: Any) -> None:
        with self.cond:
            self.names.add(pod.metadata.name)
            self.cond.notify_all()

    def update(self, old: Any, new: Any) -> None:
        self.add(new)

    def delete(self, pod: Any) -> None:
        with self.cond:
            self.names.discard(pod.metadata.name)
            self.cond.notify_all()


def test_add_event_handler_registers_several_handlers_in_one_step_and_copies_stay_exact_under_churn(
    server, make_config
):
    seed(server, 10)
    config = make_config(resources=[Pod])
    copies = [_Copy() for _ in range(10)]
    with config:
        informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
        for i, copy in enumerate(copies):  # registrations interleaved with live deletes and creates
            server.delete("pods", f"pod-{i}", "default")
            server.create("pods", make_pod(f"live-{i}"))
            handles = informer.add_event_handler(on_add=copy.add, on_update=copy.update, on_delete=copy.delete)
            assert [h._registration.event for h in handles] == ["add", "update", "delete"]
        server.create("pods", make_pod("sentinel"))
        expected = {f"live-{i}" for i in range(10)} | {"sentinel"}
        for copy in copies:
            with copy.cond:
                assert copy.cond.wait_for(lambda copy=copy: copy.names == expected, 10), sorted(copy.names)
        with pytest.raises(TypeError, match="at least one"):
            informer.add_event_handler()
        with pytest.raises(TypeError, match="on_delete expects a callable"):
            informer.add_event_handler(on_add=copies[0].add, on_delete="nope")  # nothing registered
        assert len(informer._lane.registrations) == 30  # the refused call registered nothing


def test_a_handler_registered_before_the_scope_gets_an_add_for_every_initial_object(server, make_config):
    seed(server, 4)
    config = make_config(resources=[Pod])
    rec = Recorder()
    config.cache.get_informer(Pod).on_add(lambda pod: rec.add("add", pod))  # type: ignore[union-attr]
    with config:
        rec.wait(lambda ev: len(ev) >= 4)
    assert sorted(rec.names("add")) == [f"pod-{i}" for i in range(4)]


def _bare_decorator(informer: Any, func: Callable[..., Any]) -> Any:
    return informer.on_add(func)  # what `@informer.on_add` does


def _decorator_with_parentheses(informer: Any, func: Callable[..., Any]) -> Any:
    return informer.on_add()(func)  # what `@informer.on_add()` does


def _direct_call(informer: Any, func: Callable[..., Any]) -> Any:
    handle = informer.on_add(func)
    return handle


REGISTRATIONS = [
    pytest.param(_bare_decorator, id="decorator-without-parentheses"),
    pytest.param(_decorator_with_parentheses, id="decorator-with-parentheses"),
    pytest.param(_direct_call, id="direct-call"),
]


@pytest.mark.parametrize("register", REGISTRATIONS)
def test_every_registration_form_returns_a_handle_callable_like_the_function_with_remove(server, make_config, register):
    seed(server, 2)
    config = make_config(resources=[Pod])
    informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
    seen: list[str] = []
    got_two = threading.Event()

    def added(pod: Any) -> str:
        """Record the pod."""
        seen.append(pod.metadata.name)
        if len(seen) >= 2:
            got_two.set()
        return f"saw {pod.metadata.name}"

    handle = register(informer, added)
    assert isinstance(handle, HandlerHandle)
    assert handle.__name__ == "added" and handle.__doc__ == "Record the pod."
    assert callable(handle.remove)
    with config:
        assert got_two.wait(5)
        assert sorted(seen) == ["pod-0", "pod-1"]
        direct = Pod.get("pod-0")
        assert handle(direct) == "saw pod-0"  # the decorated name still works as the function
    assert seen[-1] == "pod-0"


@pytest.mark.parametrize("event", ["add", "update", "delete"])
def test_after_remove_a_handler_receives_no_more_events(server, make_config, event):
    seed(server, 2)
    config = make_config(resources=[Pod])
    informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
    removed, sentinel = Recorder(), Recorder()
    handle = getattr(informer, f"on_{event}")(lambda *args: removed.add(event, args[-1]))
    sentinel.hook(informer)
    with config:
        sentinel.wait(lambda ev: len(ev) >= 2)
        if event == "add":
            removed.wait(lambda ev: len(ev) >= 2)  # the initial adds, delivered before the removal
        handle.remove()
        handle.remove()  # idempotent
        server.create("pods", make_pod("after-0"))
        server.patch("pods", "pod-0", {"metadata": {"labels": {"changed": "yes"}}})
        server.delete("pods", "pod-1")
        sentinel.wait(
            lambda ev: (
                {("add", "after-0"), ("update", "pod-0"), ("delete", "pod-1")}
                <= {(k, (p[1] if k == "update" else p).metadata.name) for k, p in ev}
            )
        )
    assert sentinel.count("add") == 3 and sentinel.count("update") == 1
    assert [n for n in removed.names(event) if n != "pod-0" and n != "pod-1"] == []
    assert removed.count(event) == (2 if event == "add" else 0)


def test_a_slow_views_backlog_shows_in_cache_status_and_does_not_delay_other_views(server, make_config):
    config = make_config(resources=[Pod])
    informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
    other_view = config.cache.get_informer(Pod)  # type: ignore[union-attr]
    release, entered = threading.Event(), threading.Event()

    def slow(pod: Any) -> None:
        entered.set()
        release.wait(10)

    informer.on_add(slow)
    fast = Recorder()
    other_view.on_add(lambda pod: fast.add("add", pod))
    with config:
        try:
            for i in range(6):
                server.create("pods", make_pod(f"pod-{i}"))
            fast.wait(lambda ev: len(ev) >= 6)  # the fast handler is not held up by the slow one
            assert entered.wait(5)
            status = config.cache.status()  # type: ignore[union-attr]
            backlogs = status.informers[0].handler_backlogs
            slow_backlog = [v for k, v in backlogs.items() if ".slow" in k]
            fast_backlog = [v for k, v in backlogs.items() if "<lambda>" in k]
        finally:
            release.set()
    assert slow_backlog == [5]  # blocked on pod-0, five more queued
    assert fast_backlog == [0]
    assert all("add:" in key for key in backlogs)


def test_a_handler_that_raises_is_logged_with_the_event_and_keeps_receiving_events(server, make_config, caplog):
    seed(server, 2)
    config = make_config(resources=[Pod])
    informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
    rec = Recorder()

    def explode(pod: Any) -> None:
        rec.add("add", pod)
        raise RuntimeError(f"boom on {pod.metadata.name}")

    informer.on_add(explode)
    with caplog.at_level(logging.ERROR, logger="cloudcoil_cache"):
        with config:
            rec.wait(lambda ev: len(ev) >= 2)
            server.create("pods", make_pod("later"))
            rec.wait(lambda ev: "later" in [p.metadata.name for _, p in ev])
    logged = [r for r in caplog.records if r.exc_info and "boom" in str(r.exc_info[1])]
    assert len(logged) == 3
    assert any("default/later" in r.getMessage() for r in logged)


def test_deletes_discovered_by_a_relist_reach_on_delete_with_the_last_known_state(server, make_config):
    seed(server, 3)
    config = make_config(resources=[Pod])
    rec = Recorder()
    rec.hook(config.cache.get_informer(Pod))  # type: ignore[union-attr]
    with config:
        rec.wait(lambda ev: len(ev) >= 3)
        server.wait_for_watches(1)
        known = Pod.get("pod-1")
        server.stall_watches()
        server.delete("pods", "pod-1")  # the DELETED event never reaches the client
        server.compact()
        server.clear_faults()
        server.clear_requests()
        server.drop_watches()
        rec.wait(lambda ev: "pod-1" in [p.metadata.name for k, p in ev if k == "delete"])
        assert requests_to(server, "list", "/api/v1/pods")  # found by a relist, not by a watch event
        assert names(Pod.list()) == {"pod-0", "pod-2"}
    deleted = [p for k, p in rec.events if k == "delete"]
    assert len(deleted) == 1
    assert deleted[0].metadata.resource_version == known.metadata.resource_version
    assert deleted[0].to_dict() == known.to_dict()


def test_one_informer_serves_every_view_of_a_kind_so_asking_twice_opens_one_watch(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod])
    first = config.cache.get_informer(Pod)  # type: ignore[union-attr]
    second = config.cache.get_informer(Pod)  # type: ignore[union-attr]
    async_view = config.cache.get_informer(Pod, sync=False)  # type: ignore[union-attr]
    with config:
        again = config.cache.get_informer(Pod)  # type: ignore[union-attr]
        server.wait_for_watches(1)
        assert server.active_watches == 1
        assert len([r for r in server.requests if r.verb == "list"]) == 1
        assert config.cache.status().informer_count == 1  # type: ignore[union-attr]
        assert names(first.list()) == names(second.list()) == names(async_view.list()) == names(again.list())
        assert first.get("pod-0", "default") is async_view.get("pod-0", "default")


def test_periodic_resync_relists_and_redelivers_every_object_to_on_update(server, make_config):
    seed(server, 3)
    config = make_config(resources=[Pod], resync_period=1)
    rec = Recorder()
    rec.hook(config.cache.get_informer(Pod))  # type: ignore[union-attr]
    with config:
        rec.wait(lambda ev: len(ev) >= 3)
        server.clear_requests()
        rec.wait(lambda ev: sum(1 for k, _ in ev if k == "update") >= 3, timeout=5)
        relists = requests_to(server, "list", "/api/v1/pods")
        status = config.cache.status().informers[0]  # type: ignore[union-attr]
    assert relists, "the resync did not relist"
    updates = [v for k, v in rec.events if k == "update"][:3]
    assert sorted(new.metadata.name for _, new in updates) == ["pod-0", "pod-1", "pod-2"]
    assert all(old.metadata.resource_version == new.metadata.resource_version for old, new in updates)
    # an unchanged object (same uid and resourceVersion) is the stored one, not decoded again
    assert all(old is new for old, new in updates)
    assert rec.count("add") == 3 and rec.count("delete") == 0
    assert status.relist_count >= 2


def test_a_resync_decodes_only_what_changed_and_every_object_again_under_a_transform(server, make_config):
    seed(server, 2)
    calls: list[str] = []

    def keep(pod: Any) -> Any:
        calls.append(pod.metadata.name)
        return pod

    recs = {"plain": Recorder(), "transformed": Recorder()}
    plain = make_config(resources=[Pod], resync_period=1)
    transformed = make_config(resources=[Pod], resync_period=1, transform=keep)
    recs["plain"].hook(plain.cache.get_informer(Pod))  # type: ignore[union-attr]
    recs["transformed"].hook(transformed.cache.get_informer(Pod))  # type: ignore[union-attr]

    def updates(rec: Recorder, name: str) -> list[tuple[Any, Any]]:
        return [v for k, v in rec.events if k == "update" and v[1].metadata.name == name]

    with plain, transformed:
        for rec in recs.values():
            rec.wait(lambda ev: len(ev) >= 2)
        server.patch("pods", "pod-1", {"metadata": {"labels": {"changed": "yes"}}})
        for rec in recs.values():  # the patch's update, and a resync's of the unchanged pod-0
            rec.wait(lambda ev, rec=rec: bool(updates(rec, "pod-0")) and bool(updates(rec, "pod-1")), timeout=15)
    changed = [(old, new) for old, new in updates(recs["plain"], "pod-1") if "changed" not in old.metadata.labels]
    assert changed and changed[0][1].metadata.labels["changed"] == "yes"  # a change is decoded
    assert all(old is new for old, new in updates(recs["plain"], "pod-0"))  # unchanged: the stored object
    # under a transform, the resync's objects are decoded and transformed again
    assert all(old is not new for old, new in updates(recs["transformed"], "pod-0"))
    assert calls.count("pod-0") >= 2


def test_one_handler_receives_the_updates_of_an_object_in_the_order_they_happened(server, make_config):
    seed(server, 1)
    config = make_config(resources=[Pod])
    seen: list[int] = []
    done = threading.Event()

    def changed(old: Any, new: Any) -> None:
        seen.append(int(new.metadata.labels["gen"]))
        if seen[-1] == 20:
            done.set()

    config.cache.get_informer(Pod).on_update(changed)  # type: ignore[union-attr]
    with config:
        server.wait_for_watches(1)
        for gen in range(1, 21):
            server.patch("pods", "pod-0", {"metadata": {"labels": {"gen": str(gen)}}})
        assert done.wait(5)
    assert seen == list(range(1, 21))


def test_eviction_at_capacity_is_not_a_delete_so_handlers_get_no_on_delete(server, make_config):
    seed(server, 3)
    config = make_config(resources=[Pod], max_items_per_resource=2)
    informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
    rec = Recorder()
    rec.hook(informer)
    with config:
        rec.wait(lambda ev: len(ev) >= 3)
        server.create("pods", make_pod("newest"))  # evicts the least recently used object
        rec.wait(lambda ev: "newest" in rec.names("add"))
        held = names(informer.list())
        assert "newest" in held and len(held) == 2
        victim = sorted(held - {"newest"})[0]
        server.delete("pods", victim)  # a real delete, queued behind any (wrong) eviction delete
        rec.wait(lambda ev: victim in rec.names("delete"))
        status = informer.status()
    assert rec.names("delete") == [victim]
    assert sorted(rec.names("add")) == ["newest", "pod-0", "pod-1", "pod-2"]
    assert status.evictions == 2 and not status.complete


def test_add_event_handler_without_replay_gets_only_the_changes_after_it(server, make_config):
    seed(server, 3)
    config = make_config(resources=[Pod])
    rec = Recorder()
    with config:
        informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
        informer.add_event_handler(on_add=lambda pod: rec.add("add", pod), replay=False)
        server.create("pods", make_pod("live"))
        rec.wait(lambda ev: len(ev) >= 1)
        server.create("pods", make_pod("sentinel"))
        rec.wait(lambda ev: "sentinel" in [p.metadata.name for _, p in ev])
    assert rec.names("add") == ["live", "sentinel"]  # none of the three cached before


def test_removing_the_last_handler_waits_for_its_call_in_flight_only_up_to_a_timeout(server, make_config):
    seed(server, 1)
    config = make_config(resources=[Pod])
    entered, release = threading.Event(), threading.Event()

    def slow(pod: Any) -> None:
        entered.set()
        release.wait(60)

    with config:
        informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
        handle = informer.on_add(slow)
        assert entered.wait(10)  # the replay of pod-0 is in the handler
        try:
            assert handle.remove(timeout=0.05) is False  # still in the call: not waited for further
        finally:
            release.set()
        assert handle.remove(timeout=10) is True  # removed already: nothing left to wait for
