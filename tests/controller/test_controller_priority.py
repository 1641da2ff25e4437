"""A controller's queue by priority over the fake API server: a restart's replay behind users' edits."""

from __future__ import annotations

import threading

from _controller_support import Calls

from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.controller import Controller, Priority, QueueHooks
from cloudcoil_cache.controller._observe import ControllerObserver
from cloudcoil_cache.controller._priorities import EventPriorities
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap

N = 5000


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
