"""A controller's queue by priority over the fake API server: a restart's replay behind users' edits."""

from __future__ import annotations

import threading

import pytest
from _controller_support import Calls
from _operator_support import WIDGETS, Widget, install_widgets, make_widget

from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.controller import Controller, Priority, QueueHooks
from cloudcoil_cache.controller._observe import ControllerObserver
from cloudcoil_cache.controller._priorities import EventPriorities, converged
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap

N = 5000


@pytest.fixture
def widgets(fake_api_server):
    install_widgets(fake_api_server)
    return fake_api_server


class CountAdds(ControllerObserver):
    """Counts the queue's adds (the seam the metrics use), to wait for events without sleeping."""

    def __init__(self) -> None:
        self.adds = Calls()

    def queue_hooks(self) -> QueueHooks:
        adds = self.adds

        class Hooks(QueueHooks):
            def added(self) -> None:
                adds.add(1)

        return Hooks()


def test_a_restart_over_5000_objects_serves_a_users_edit_within_two_passes_and_misses_none(
    config, fake_api_server, make_cm
):
    names = [f"cm-{i:04d}" for i in range(N)]
    for name in names:
        make_cm(name, {"v": "0"})
    ctl = Controller(ConfigMap, config=config, workers=1)  # one worker: keys are taken in queue order
    ctl.observer = observer = CountAdds()
    calls = Calls()
    first = threading.Event()
    gate = threading.Event()

    @ctl.reconcile()
    def reconcile(cm):
        calls.add((cm.name, cm.data.get("v")))
        if not first.is_set():
            first.set()
            assert gate.wait(30)  # the first pass of the replay holds the one worker

    with ctl.start(config):
        try:
            assert first.wait(30)
            fake_api_server.patch("configmaps", "cm-4999", {"data": {"v": "edited"}}, "default")  # last in the replay
            make_cm("user-new", {"v": "new"})
            # the replay's adds come first in the handler lane, the two events after them
            observer.adds.wait(lambda adds: len(adds) >= N + 2, timeout=30)
            status = ctl.status()
            assert dict(status.queued_by_priority) == {"EVENT": 2, "REPLAY": N - 2, "CONVERGED": 0}
            assert status.queued == N  # "cm-4999" once, moved up: N - 1 of the replay left plus the new one
        finally:
            gate.set()  # (a failure above must not leave the worker held)
        calls.wait(lambda c: len(c) >= 3, timeout=30)
        assert set(calls.snapshot()[1:3]) == {("cm-4999", "edited"), ("user-new", "new")}
        calls.wait(lambda c: len(c) >= N + 1, timeout=120)  # the replay is still served, all of it
        assert ctl.status().queued_by_priority["REPLAY"] == 0
    served = [name for name, _ in calls.snapshot()]
    assert sorted(served) == sorted([*names, "user-new"])  # each once: none missed, none twice


def cm(name: str, rv: str) -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, namespace="default", resource_version=rv))


def test_event_priorities_replay_resync_and_changes():
    started = [cm("a", "1"), cm("b", "2")]
    priorities = EventPriorities(started)
    assert priorities.replay_pending == 2
    assert priorities.add(cm("a", "1")) is Priority.REPLAY  # replayed as it was at the start
    assert priorities.add(cm("a", "1")) is Priority.EVENT  # once only
    assert priorities.add(cm("b", "3")) is Priority.EVENT  # changed since the start: a change
    assert priorities.add(cm("c", "4")) is Priority.EVENT  # new
    assert priorities.update(cm("a", "1"), cm("a", "1")) is Priority.REPLAY  # a resync
    assert priorities.update(cm("a", "1"), cm("a", "5")) is Priority.EVENT
    assert priorities.delete(cm("a", "5")) is Priority.EVENT
    assert priorities.replay_pending == 1  # "b" as it was: never replayed, it changed first


CONVERGED_COUNT = 2000


def test_a_warm_restart_over_2000_converged_widgets_serves_the_unconverged_and_an_edit_first_and_misses_none(
    widgets, config
):
    for i in range(CONVERGED_COUNT):
        make_widget(widgets, f"w-{i:04d}")
        converge(widgets, f"w-{i:04d}", generation=1)
    make_widget(widgets, "behind")  # never reconciled: no status
    make_widget(widgets, "stale")
    converge(widgets, "stale", generation=1)
    widgets.patch(WIDGETS, "stale", {"spec": {"size": 2}}, "default")  # generation 2: not converged
    ctl = Controller(Widget, config=config, workers=1)
    assert ctl.warm_restart is True  # the default
    ctl.observer = observer = CountAdds()
    calls = Calls()
    first = threading.Event()
    gate = threading.Event()

    @ctl.reconcile()
    def reconcile(widget):
        calls.add(widget.name)
        if not first.is_set():
            first.set()
            assert gate.wait(30)

    with ctl.start(config):
        try:
            assert first.wait(30)
            widgets.patch(WIDGETS, "w-1999", {"spec": {"size": 5}}, "default")  # a user's edit
            observer.adds.wait(lambda adds: len(adds) >= CONVERGED_COUNT + 3, timeout=30)
            depths = dict(ctl.status().queued_by_priority)
        finally:
            gate.set()
        calls.wait(lambda c: len(c) >= CONVERGED_COUNT + 2, timeout=60)
    served = calls.snapshot()
    assert sorted(served) == sorted([f"w-{i:04d}" for i in range(CONVERGED_COUNT)] + ["behind", "stale"])
    # the first pass took whichever key came first (no event had arrived yet); then the edit, then the
    # two that had not converged, then the converged ones, all of them
    edit_at = served.index("w-1999")
    converged_before_edit = [n for n in served[:edit_at] if n not in ("behind", "stale")]
    assert len(converged_before_edit) <= CONVERGED_COUNT // 100  # ≤ 1 % (the done-when of issue 35)
    assert edit_at <= 2
    assert set(served[: edit_at + 3]) >= {"behind", "stale"}
    assert depths["EVENT"] + depths["REPLAY"] + depths["CONVERGED"] == CONVERGED_COUNT + 1
    assert depths["CONVERGED"] >= CONVERGED_COUNT - 2


def test_warm_restart_off_queues_converged_objects_with_the_rest_of_the_replay(widgets, config):
    for name in ("a", "b"):
        make_widget(widgets, name)
        converge(widgets, name, generation=1)
    ctl = Controller(Widget, config=config, workers=1, warm_restart=False)
    ctl.observer = observer = CountAdds()
    first = threading.Event()
    gate = threading.Event()

    @ctl.reconcile()
    def reconcile(widget):
        if not first.is_set():
            first.set()
            assert gate.wait(30)

    with ctl.start(config):
        try:
            assert first.wait(30)
            observer.adds.wait(lambda adds: len(adds) >= 2, timeout=30)
            assert dict(ctl.status().queued_by_priority) == {"EVENT": 0, "REPLAY": 1, "CONVERGED": 0}
        finally:
            gate.set()
    with pytest.raises(TypeError, match="warm_restart"):
        Controller(Widget, warm_restart="yes")


def converge(server, name: str, generation: int) -> None:
    """Write the status this runtime writes after a successful pass for ``generation``."""
    server.patch(
        WIDGETS,
        name,
        {
            "status": {
                "observedGeneration": generation,
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "Reconciled",
                        "message": "",
                        "observedGeneration": generation,
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                ],
            }
        },
        "default",
        subresource="status",
    )


def test_converged_reads_observed_generation_and_the_ready_condition(widgets, config):
    make_widget(widgets, "x")
    obj = Widget.from_dict(widgets.get(WIDGETS, "x", "default"))
    assert not converged(obj)  # no status
    converge(widgets, "x", generation=1)
    obj = Widget.from_dict(widgets.get(WIDGETS, "x", "default"))
    assert obj.metadata.generation == 1 and converged(obj)
    widgets.patch(WIDGETS, "x", {"spec": {"size": 3}}, "default")
    assert not converged(Widget.from_dict(widgets.get(WIDGETS, "x", "default")))  # generation 2
    converge(widgets, "x", generation=2)
    widgets.patch(
        WIDGETS,
        "x",
        {"status": {"conditions": [{"type": "Ready", "status": "False"}]}},
        "default",
        subresource="status",
    )
    assert not converged(Widget.from_dict(widgets.get(WIDGETS, "x", "default")))  # not Ready
    assert not converged(cm("plain", "1"))  # no generation: never converged
