"""The operator's helpers over the fake API server: status and conditions in memory, mutate and the finalizer
helpers, the EventRecorder's series and rate limit, ensure(), and the Controller's write options."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from _operator_support import EVENTS, WIDGETS, Widget, install_widgets, make_widget, writes

from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.controller import (
    Controller,
    EventRecorder,
    TerminalError,
    ensure_finalizer,
    get_condition,
    mutate,
    remove_finalizer,
    set_condition,
    update_status,
)
from cloudcoil_cache.controller._children import ensure_child, live_read, subset
from cloudcoil_cache.controller._mutations import merge_diff
from cloudcoil_cache.controller._writes import MAX_EVENTS, PassWrites
from cloudcoil_cache.errors import ResourceConflict
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.testing import FakeAPIServer, FakeClock


class Clock:
    """Wall time for conditions and Events, moved by the test."""

    def __init__(self) -> None:
        self.moment = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)

    def __call__(self) -> datetime.datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += datetime.timedelta(seconds=seconds)


@pytest.fixture
def widgets(fake_api_server: FakeAPIServer) -> FakeAPIServer:
    install_widgets(fake_api_server)
    return fake_api_server


def live_widget(config: Any, name: str = "w1") -> Any:
    return Widget.client(config).live_get(name, "default")


# -- status and conditions in memory -----------------------------------------------------------------


def test_set_condition_moves_the_transition_time_only_when_the_status_flips() -> None:
    now = Clock()
    w = Widget.from_dict({"metadata": {"name": "w", "generation": 4}, "status": {"size": 1}})
    set_condition(w, "Ready", True, reason="Reconciled", now=now)
    first = get_condition(w, "Ready")
    assert first == {
        "type": "Ready",
        "status": "True",
        "reason": "Reconciled",
        "message": "",
        "observedGeneration": 4,
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    now.advance(60)
    set_condition(w, "Ready", "True", reason="StillFine", message="m", now=now)
    assert get_condition(w, "Ready") == {**first, "reason": "StillFine", "message": "m"}
    set_condition(w, "Ready", False, reason="Broken", now=now)
    assert get_condition(w, "Ready")["lastTransitionTime"] == "2026-01-01T00:01:00Z"  # type: ignore[index]
    assert w.status["size"] == 1 and get_condition(w, "Other") is None


def test_update_status_and_bad_conditions() -> None:
    w = Widget.from_dict({"metadata": {"name": "w"}, "status": {"a": 1, "b": 2}})
    update_status(w, ready_replicas=3, b=None)
    assert w.status == {"a": 1, "readyReplicas": 3}
    with pytest.raises(ValueError, match="True, False or 'Unknown'"):
        set_condition(w, "Ready", "yes", reason="R")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="condition reason"):
        set_condition(w, "Ready", True, reason="not an identifier")
    with pytest.raises(TypeError, match="no status field"):
        update_status(ConfigMap(metadata=ObjectMeta(name="c")), a=1)


def test_pass_writes_compute_the_status_once_and_nothing_when_unchanged() -> None:
    now = Clock()
    w = Widget.from_dict({"metadata": {"name": "w", "generation": 2}, "status": {}})
    writes_ = PassWrites(status_updates=True, events=True, reserved=frozenset({"Ready"}))
    writes_.set_status(size=3)
    writes_.condition("Synced", True, reason="Done")
    status = writes_.status_for(w, now)
    assert status is not None and status["size"] == 3 and status["observedGeneration"] == 2
    update_status(w, **status)
    assert writes_.status_for(w, now) is None  # already so: nothing to write
    with pytest.raises(ValueError, match="set by the controller"):
        writes_.condition("Ready", True, reason="Mine")
    with pytest.raises(ValueError, match="controller's"):
        writes_.set_status(conditions=[])
    for i in range(MAX_EVENTS + 5):
        writes_.event("Tick", str(i))
    assert len(writes_.events) == MAX_EVENTS and writes_.dropped_events == 5
    with pytest.raises(ValueError, match="event type"):
        writes_.event("Tick", "x", "Error")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="status_updates=False"):
        PassWrites(status_updates=False, events=True).set_status(a=1)


def test_merge_diff_and_subset() -> None:
    assert merge_diff({"a": 1, "b": {"c": 1, "d": 2}, "e": [1]}, {"a": 1, "b": {"c": 2}, "e": [1, 2]}) == {
        "b": {"c": 2, "d": None},
        "e": [1, 2],
    }
    assert merge_diff({"a": 1}, {"a": 1}) == {}
    assert subset({"data": {"k": "v"}}, {"data": {"k": "v", "x": "y"}, "kind": "ConfigMap"})
    assert not subset({"data": {"k": "v"}}, {"data": {"k": "w"}})
    assert not subset({"l": [{"a": 1}]}, {"l": [{"a": 1}, {"a": 2}]})


# -- mutate and the finalizer helpers ------------------------------------------------------------------


def test_mutate_patches_only_a_change_and_retries_a_conflict(widgets: FakeAPIServer, config: Any) -> None:
    make_widget(widgets, "w1", size=1)
    w = live_widget(config)
    calls: list[int] = []

    def change(obj: Any) -> None:
        calls.append(obj.spec["size"])
        if len(calls) == 1:  # another writer gets in between: the guarded patch conflicts
            widgets.patch(WIDGETS, "w1", {"spec": {"other": True}}, "default")
        obj.spec["size"] = 5

    widgets.clear_requests()
    updated = mutate(w, change, config=config)
    assert calls == [1, 1] and updated.spec == {"size": 5, "other": True}
    patches = [r for r in writes(widgets.requests)]
    assert len(patches) == 2 and all(p.json()["metadata"]["resourceVersion"] for p in patches)
    widgets.clear_requests()
    assert mutate(updated, lambda obj: None, config=config).spec["size"] == 5
    assert writes(widgets.requests) == []  # no change: no PATCH
    with pytest.raises(ValueError, match="status only"):
        mutate(updated, lambda obj: obj.spec.update(size=6), status=True, config=config)
    with pytest.raises(TypeError, match="returns None"):
        mutate(updated, lambda obj: obj, config=config)  # type: ignore[arg-type,return-value]


def test_mutate_refuses_a_replacement(widgets: FakeAPIServer, config: Any) -> None:
    make_widget(widgets, "w1")
    old = live_widget(config)
    widgets.delete(WIDGETS, "w1", "default")
    make_widget(widgets, "w1")
    with pytest.raises(ResourceConflict, match="replaced"):
        mutate(old, lambda obj: None, config=config)
    with pytest.raises(ValueError, match="read from the server"):
        mutate(Widget.from_dict({"metadata": {"name": "x"}}), lambda obj: None, config=config)


def test_ensure_and_remove_finalizer(widgets: FakeAPIServer, config: Any) -> None:
    make_widget(widgets, "w1")
    w = ensure_finalizer(live_widget(config), "example.com/a", config=config)
    w = ensure_finalizer(w, "example.com/b", config=config)
    assert w.metadata.finalizers == ["example.com/a", "example.com/b"]
    widgets.clear_requests()
    assert ensure_finalizer(w, "example.com/a", config=config).metadata.finalizers == w.metadata.finalizers
    assert writes(widgets.requests) == []
    widgets.delete(WIDGETS, "w1", "default")
    with pytest.raises(TerminalError, match="being deleted"):
        ensure_finalizer(w, "example.com/c", config=config)
    w = remove_finalizer(w, "example.com/a", config=config)
    assert w.metadata.finalizers == ["example.com/b"]
    remove_finalizer(w, "example.com/b", config=config)
    assert widgets.list(WIDGETS, "default") == []  # the last finalizer gone: so is the object
    with pytest.raises(ValueError, match="qualified name"):
        ensure_finalizer(w, "cleanup", config=config)


# -- Events --------------------------------------------------------------------------------------------


def test_a_repeated_event_is_a_series_and_new_events_are_rate_limited(widgets: FakeAPIServer, config: Any) -> None:
    make_widget(widgets, "w1")
    w = live_widget(config)
    clock = FakeClock()
    recorder = EventRecorder("widget-operator", clock=clock, now=Clock(), burst=3, refill_every=60)
    assert recorder.record(config, w, "Failed", "boom", type="Warning")  # created
    assert recorder.record(config, w, "Failed", "boom", type="Warning")  # series.count = 2
    for _ in range(50):
        assert not recorder.record(config, w, "Failed", "boom", type="Warning")  # counted in memory
    [event] = widgets.list(EVENTS, "default")
    assert event["series"]["count"] == 2 and event["reportingController"] == "widget-operator"
    assert (event["regarding"]["kind"], event["regarding"]["name"]) == ("Widget", "w1")
    clock.advance(1800)  # series_refresh passed... but so did series_finish: the series is over
    assert recorder.record(config, w, "Failed", "boom", type="Warning")  # a new Event
    assert len(widgets.list(EVENTS, "default")) == 2
    assert recorder.record(config, w, "Other", "x")
    assert recorder.record(config, w, "Another", "y")  # the burst (3 new events) is used up now
    assert not recorder.record(config, w, "Fourth", "z")
    clock.advance(60)
    assert recorder.record(config, w, "Fourth", "z")  # one token back
    assert len(widgets.list(EVENTS, "default")) == 5


def test_event_recording_is_best_effort(widgets: FakeAPIServer, config: Any, caplog: Any) -> None:
    make_widget(widgets, "w1")
    w = live_widget(config)
    recorder = EventRecorder("widget-operator")
    widgets.fail_next(1, 403, verb="create", path="/events")
    assert not recorder.record(config, w, "Failed", "x")  # refused: logged, not raised
    assert "could not record event Failed" in caplog.text
    assert widgets.list(EVENTS, "default") == []
    with pytest.raises(ValueError, match="event reason"):
        recorder.record(config, w, "", "x")


# -- ensure() ------------------------------------------------------------------------------------------


def test_ensure_applies_a_child_once_and_refuses_to_adopt(widgets: FakeAPIServer, config: Any) -> None:
    make_widget(widgets, "w1")
    parent = live_widget(config)
    read = live_read(config)
    desired = ConfigMap(metadata=ObjectMeta(name="child", labels={"app": "w"}), data={"k": "v"})
    widgets.clear_requests()
    child = ensure_child(parent, desired, config=config, field_manager="widget", read=read)
    assert child.metadata.owner_references[0].uid == parent.metadata.uid
    assert child.metadata.namespace == "default"
    again = ensure_child(parent, desired, config=config, field_manager="widget", read=read)
    assert again.metadata.resource_version == child.metadata.resource_version
    assert len(writes(widgets.requests)) == 1  # the second ensure found it as desired
    widgets.create("configmaps", {"metadata": {"name": "theirs"}, "data": {}}, "default")
    other = ensure_child(
        parent, ConfigMap(metadata=ObjectMeta(name="theirs")), config=config, field_manager="w", read=read
    )
    assert other.metadata.owner_references  # no controller owner yet: taken over
    make_widget(widgets, "w2")
    with pytest.raises(TerminalError, match="controlled by another"):
        ensure_child(live_widget(config, "w2"), desired, config=config, field_manager="widget", read=read)
    with pytest.raises(ValueError, match="namespace"):
        ensure_child(
            parent,
            ConfigMap(metadata=ObjectMeta(name="c", namespace="other")),
            config=config,
            field_manager="widget",
            read=read,
        )
    with pytest.raises(ValueError, match="not an object read from the server"):
        ensure_child(parent, child, config=config, field_manager="widget", read=read)


# -- Controller options -----------------------------------------------------------------------------


def test_controller_write_options_and_what_the_application_reads() -> None:
    ctl = Controller(Widget).owns(ConfigMap)
    ctl.watch(ConfigMap, lambda cm: None)
    ctl.finalize("example.com/cleanup")(lambda w: None)
    assert ctl.owned_kinds == (ConfigMap,) and ctl.watched_kinds == (ConfigMap,)
    assert ctl.finalizers == ("example.com/cleanup",)
    assert (ctl.status_updates, ctl.events, ctl.field_manager) == (True, True, "widget")
    quiet = Controller(Widget, status_updates=False, events=False, field_manager="widgets.example.com")
    assert (quiet.status_updates, quiet.events, quiet.field_manager) == (False, False, "widgets.example.com")
    with pytest.raises(ValueError, match="status_updates"):
        Controller(Widget, report_status=True, status_updates=False)
    with pytest.raises(ValueError, match="event_flush_timeout"):
        Controller(Widget, event_flush_timeout=-1)
    with pytest.raises(ValueError, match="field_manager"):
        Controller(Widget, field_manager="")
    with pytest.raises(ValueError, match="declared twice"):
        ctl.finalize("example.com/cleanup")
    with pytest.raises(ValueError, match="qualified name"):
        ctl.finalize("cleanup")
