"""Predicates end to end over the fake API server: a controller writing its own status does one pass per
spec change (two without predicates), a child's status churn does not wake its owner when ``owns()``
filters it, and a deletion still reaches a finalizer whatever the predicates say.

No sleeps: a single worker takes keys in order, and a "flush" (a change whose event follows, in the same
informer's handler lane, the event under test) is waited for: once its pass started, any pass the event
under test queued has started too.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from _operator_support import WIDGETS, Widget, install_widgets, make_widget

from cloudcoil_cache.controller import Controller, Funcs, GenerationChanged
from cloudcoil_cache.controller._observe import ControllerObserver
from cloudcoil_cache.models.kubernetes.apps.v1 import Deployment
from cloudcoil_cache.testing import FakeAPIServer

DEPLOYMENTS = "deployments.apps"


class PassLog(ControllerObserver):
    """What each pass reconciled (``started``, recorded by the reconcile function) and which passes ended
    (``finished``: with one worker, the pass that ended is the last one started)."""

    def __init__(self) -> None:
        self.started: list[tuple[str, Any]] = []
        self.finished: list[tuple[str, Any]] = []
        self._cond = threading.Condition()

    def start(self, name: str, seen: Any) -> None:
        with self._cond:
            self.started.append((name, seen))
            self._cond.notify_all()

    def reconciled(self, result: str, seconds: float) -> None:
        with self._cond:
            if self.started:
                self.finished.append(self.started[-1])
            self._cond.notify_all()

    def wait(self, what: str, item: tuple[str, Any], timeout: float = 20.0) -> None:
        with self._cond:
            done = self.started if what == "started" else self.finished
            if not self._cond.wait_for(lambda: item in done, timeout):
                raise AssertionError(f"no pass {what} for {item} within {timeout}s: {self.started}")

    def count(self, item: tuple[str, Any]) -> int:
        with self._cond:
            return self.started.count(item)


@pytest.fixture
def widgets(fake_api_server: FakeAPIServer) -> FakeAPIServer:
    install_widgets(fake_api_server)
    return fake_api_server


def set_size(server: FakeAPIServer, name: str, size: int) -> None:
    server.patch(WIDGETS, name, {"spec": {"size": size}}, "default")


@pytest.mark.parametrize(("predicates", "passes_per_change"), [(None, 1), ([], 2)], ids=["default", "none"])
def test_a_status_write_of_our_own_costs_no_pass(
    widgets: FakeAPIServer, config: Any, predicates: Any, passes_per_change: int
) -> None:
    kwargs = {} if predicates is None else {"predicates": predicates}
    ctl = Controller(Widget, config=config, workers=1, **kwargs)
    ctl.observer = log = PassLog()

    @ctl.reconcile()
    def reconcile(widget: Any, ctx: Any) -> None:
        log.start(widget.name, widget.spec["size"])
        if widget.name != "marker":  # (the marker writes nothing: no conflict with the flushes, no retry)
            ctx.set_status(size=widget.spec["size"])  # a status write: a MODIFIED event, generation unchanged

    make_widget(widgets, "a", 1)
    make_widget(widgets, "marker", 0)
    with ctl.start():
        log.wait("finished", ("a", 1))
        flushes = 1
        set_size(widgets, "marker", flushes)
        log.wait("started", ("marker", flushes))
        for size in (2, 3, 4):
            set_size(widgets, "a", size)
            log.wait("finished", ("a", size))  # its status written: the status event is on its way
            assert widgets.get(WIDGETS, "a", "default")["status"]["size"] == size
            flushes += 1
            set_size(widgets, "marker", flushes)  # its event follows a's status event in the lane
            log.wait("started", ("marker", flushes))
        counts = {size: log.count(("a", size)) for size in (2, 3, 4)}
    assert counts == {2: passes_per_change, 3: passes_per_change, 4: passes_per_change}
    generation = widgets.get(WIDGETS, "a", "default")["metadata"]["generation"]
    assert generation == 4  # three spec changes bumped it; the status writes did not


def deployment(name: str, owner: dict[str, Any], replicas: int = 1) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "metadata": {
            "name": name,
            "ownerReferences": [
                {
                    "apiVersion": owner["apiVersion"],
                    "kind": owner["kind"],
                    "name": owner["metadata"]["name"],
                    "uid": owner["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
        },
    }


@pytest.mark.parametrize(("filtered", "passes_per_status"), [(True, 0), (False, 1)], ids=["filtered", "unfiltered"])
def test_a_childs_status_churn_does_not_wake_its_owner_when_owns_filters_it(
    widgets: FakeAPIServer, config: Any, filtered: bool, passes_per_status: int
) -> None:
    ctl = Controller(Widget, config=config, workers=1)
    ctl.owns(Deployment, predicates=[GenerationChanged()] if filtered else [])
    ctl.observer = log = PassLog()

    @ctl.reconcile()
    def reconcile(widget: Any, ctx: Any) -> None:
        child = ctx.cached(Deployment).get(f"{widget.name}-child")
        log.start(widget.name, None if child is None else child.spec.replicas)

    owner = make_widget(widgets, "owner", 1)
    marker = make_widget(widgets, "marker", 1)
    widgets.create(DEPLOYMENTS, deployment("owner-child", owner), "default")
    widgets.create(DEPLOYMENTS, deployment("marker-child", marker), "default")
    with ctl.start():
        log.wait("finished", ("owner", 1))
        log.wait("finished", ("marker", 1))
        before = len(log.started)
        # the flush: a spec change of the marker's child (a Deployment: the same handler lane) wakes the
        # marker, which reads the new replicas only on the pass that event queued
        for replicas in (2, 3, 4):
            widgets.patch(
                DEPLOYMENTS,
                "owner-child",
                {"status": {"observedGeneration": replicas}},
                "default",
                subresource="status",
            )
            widgets.patch(DEPLOYMENTS, "marker-child", {"spec": {"replicas": replicas}}, "default")
            log.wait("started", ("marker", replicas))
        owner_passes = [item for item in log.started[before:] if item[0] == "owner"]
        assert len(owner_passes) == 3 * passes_per_status
        # a spec change of the child (a new generation) wakes the owner either way
        widgets.patch(DEPLOYMENTS, "owner-child", {"spec": {"replicas": 5}}, "default")
        log.wait("started", ("owner", 5))


def test_a_deletion_reaches_the_finalizer_whatever_the_predicates(
    widgets: FakeAPIServer, config: Any, sharding: Any
) -> None:
    ctl = Controller(Widget, config=config, sharding=sharding, workers=1, predicates=[Funcs(lambda old, new: False)])
    ctl.observer = log = PassLog()
    finalized = threading.Event()

    @ctl.reconcile()
    def reconcile(widget: Any) -> None:
        log.start(widget.name, widget.spec["size"])

    @ctl.finalize("example.com/cleanup")
    def cleanup(widget: Any) -> None:
        finalized.set()

    make_widget(widgets, "w", 1)
    with ctl.start():
        log.wait("finished", ("w", 1))
        assert widgets.get(WIDGETS, "w", "default")["metadata"]["finalizers"] == ["example.com/cleanup"]
        make_widget(widgets, "flush0", 1)  # the pass the finalizer's addition queued (it passes) is done
        log.wait("started", ("flush0", 1))
        assert log.count(("w", 1)) == 2
        set_size(widgets, "w", 2)  # refused by the predicate
        make_widget(widgets, "flush1", 1)  # a creation always passes; its event follows the change's
        log.wait("started", ("flush1", 1))
        assert ("w", 2) not in log.started
        widgets.delete(WIDGETS, "w", "default")  # the deletion mark: an update the predicate would refuse
        assert finalized.wait(20)
    assert ("w", 2) not in log.started  # the finalizer ran, not the reconcile
