"""An operator over the fake API server: a Widget with an owned ConfigMap, a finalizer, Ready and a custom
condition, Events; create, edit, delete, and a failing reconcile."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from _operator_support import (
    EVENTS,
    WIDGETS,
    Passes,
    Widget,
    conditions,
    install_widgets,
    make_widget,
    widget_crd,
    writes_by_kind,
)

from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.controller import Controller, TerminalError, Wait
from cloudcoil_cache.errors import ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.testing import FakeAPIServer

FINALIZER = "example.com/cleanup"


def widget_operator(config: Any, *, fail: threading.Event | None = None) -> tuple[Controller, list[str]]:
    """The Widget operator: a ConfigMap ``<name>`` with the widget's size, ``status.size``, a ``Synced``
    condition, an Event when the child changed, and a cleanup finalizer (recorded in the list)."""
    ctl = Controller(Widget, config=config, report_status=True).owns(ConfigMap)
    finalized: list[str] = []

    @ctl.reconcile()
    def reconcile(widget: Any, ctx: Any) -> None:
        if fail is not None and fail.is_set():
            raise RuntimeError("the backend is down")
        size = str(widget.spec["size"])
        before = ctx.cached(ConfigMap).get(widget.name)
        child = ctx.ensure(ConfigMap(metadata=ObjectMeta(name=widget.name), data={"size": size}))
        ctx.set_status(size=widget.spec["size"], child=child.name)
        ctx.condition("Synced", True, reason="ChildApplied", message=f"size {size}")
        if before is None or (before.data or {}).get("size") != size:
            ctx.event("ChildApplied", f"ConfigMap {child.name} has size {size}")

    @ctl.finalize(FINALIZER)
    def cleanup(widget: Any) -> None:
        finalized.append(widget.name)

    return ctl, finalized


@pytest.fixture
def widgets(fake_api_server: FakeAPIServer) -> FakeAPIServer:
    install_widgets(fake_api_server)
    return fake_api_server


def test_create_edit_delete(widgets: FakeAPIServer, config: Any) -> None:
    ctl, finalized = widget_operator(config)
    ctl.observer = passes = Passes()
    make_widget(widgets, "w1", size=1)

    def widget() -> dict[str, Any]:
        return widgets.get(WIDGETS, "w1", "default")

    def child_size() -> str | None:
        try:
            return str(widgets.get("configmaps", "w1", "default")["data"]["size"])
        except ResourceNotFound:
            return None

    with ctl.start():
        # create: the child appears, the status says Ready, the finalizer is on
        passes.wait_for(lambda: conditions(widget()).get("Ready", ("",))[0] == "True")
        obj = widget()
        assert child_size() == "1"
        assert obj["metadata"]["finalizers"] == [FINALIZER]
        assert obj["status"]["size"] == 1 and obj["status"]["child"] == "w1"
        assert obj["status"]["observedGeneration"] == 1
        assert conditions(obj) == {"Synced": ("True", "ChildApplied", "size 1"), "Ready": ("True", "Reconciled", "")}
        assert all(c["observedGeneration"] == 1 for c in obj["status"]["conditions"])
        cm = widgets.get("configmaps", "w1", "default")
        [owner] = cm["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
            "Widget",
            "w1",
            obj["metadata"]["uid"],
            True,
        )
        assert {m["manager"] for m in cm["metadata"]["managedFields"]} == {"widget"}
        [event] = widgets.list(EVENTS, "default")
        assert (event["type"], event["reason"], event["note"]) == ("Normal", "ChildApplied", "ConfigMap w1 has size 1")
        assert event["reportingController"] == "widget" and event["regarding"]["uid"] == obj["metadata"]["uid"]
        ready_since = {c["type"]: c["lastTransitionTime"] for c in obj["status"]["conditions"]}

        # edit: the child follows, the status records the new generation; Ready did not flip
        widgets.patch(WIDGETS, "w1", {"spec": {"size": 3}}, "default")
        passes.wait_for(lambda: widget()["status"].get("observedGeneration") == 2)
        obj = widget()
        assert child_size() == "3" and obj["status"]["size"] == 3
        assert conditions(obj)["Synced"] == ("True", "ChildApplied", "size 3")
        assert {c["type"]: c["lastTransitionTime"] for c in obj["status"]["conditions"]} == ready_since
        assert sorted(e["note"] for e in widgets.list(EVENTS, "default")) == [
            "ConfigMap w1 has size 1",
            "ConfigMap w1 has size 3",
        ]

        # delete: the finalizer function runs once, then the object goes
        widgets.clear_requests()
        widgets.delete(WIDGETS, "w1", "default")
        passes.wait_for(lambda: bool(finalized))
        widgets.wait_for_request(lambda r: r.verb == "patch" and r.path.endswith("/widgets/w1"), served=True)
        with pytest.raises(ResourceNotFound):
            widget()
        finalized_writes = writes_by_kind(widgets.requests)
    assert finalized == ["w1"]
    assert finalized_writes == {"widgets": 1}  # the finalizer's removal (the test deleted it directly)


def test_the_finalizer_is_removed_only_after_its_function_succeeds(
    widgets: FakeAPIServer, config: Any, sharding: Any
) -> None:
    ctl = Controller(Widget, config=config, sharding=sharding)
    attempts: list[int] = []

    @ctl.reconcile()
    def reconcile(widget: Any) -> None:
        pass

    @ctl.finalize(FINALIZER)
    def cleanup(widget: Any) -> None:
        attempts.append(len(attempts))
        if len(attempts) < 3:
            raise RuntimeError("cleanup failed")

    ctl.observer = passes = Passes()
    make_widget(widgets, "w1")
    with ctl.start():
        passes.wait_for(lambda: widgets.get(WIDGETS, "w1", "default")["metadata"].get("finalizers") == [FINALIZER])
        widgets.delete(WIDGETS, "w1", "default")
        passes.wait_for(lambda: passes.results["error"] >= 2)
        assert widgets.get(WIDGETS, "w1", "default")["metadata"]["finalizers"] == [FINALIZER]
        passes.wait_for(lambda: len(attempts) == 3 and not widgets.list(WIDGETS, "default"))
    assert attempts == [0, 1, 2]


def test_no_finalizer_is_added_to_an_object_being_deleted(widgets: FakeAPIServer, config: Any) -> None:
    widgets.create(
        WIDGETS, {"metadata": {"name": "w1", "finalizers": ["other.example.com/keep"]}, "spec": {}}, "default"
    )
    widgets.delete(WIDGETS, "w1", "default")  # kept by the other finalizer, being deleted
    ctl = Controller(Widget, config=config)
    reconciled: list[str] = []
    ctl.reconcile(lambda widget: reconciled.append(widget.name))
    ctl.finalize(FINALIZER)(lambda widget: reconciled.append("finalize"))
    ctl.observer = passes = Passes()
    with ctl.start():
        passes.wait_for(lambda: passes.total() >= 1)
    assert widgets.get(WIDGETS, "w1", "default")["metadata"]["finalizers"] == ["other.example.com/keep"]
    assert reconciled == []  # neither the reconcile nor a finalizer that is not on the object


def test_a_failing_reconcile_shows_a_warning_and_ready_false_without_a_write_per_retry(
    widgets: FakeAPIServer, config: Any
) -> None:
    fail = threading.Event()
    fail.set()
    ctl, _ = widget_operator(config, fail=fail)
    ctl.observer = passes = Passes()
    make_widget(widgets, "w1")
    with ctl.start():
        passes.wait_for(lambda: passes.results["error"] >= 5)
        obj = widgets.get(WIDGETS, "w1", "default")
        assert conditions(obj)["Ready"] == ("False", "ReconcileFailed", "RuntimeError: the backend is down")
        [event] = widgets.list(EVENTS, "default")  # a repeated event is a series, not new objects
        assert (event["type"], event["reason"]) == ("Warning", "ReconcileFailed")
        assert event["series"]["count"] >= 2
        counts = writes_by_kind(widgets.requests)
        # one finalizer patch, one status write (Ready=False once), one Event and one series update
        assert counts == {"widgets": 1, "widgets/status": 1, "events": 2}, counts
        fail.clear()
        ctl.enqueue("default/w1")
        passes.wait_for(lambda: conditions(widgets.get(WIDGETS, "w1", "default"))["Ready"][0] == "True")
    assert conditions(widgets.get(WIDGETS, "w1", "default"))["Ready"] == ("True", "Reconciled", "")


def test_a_coroutine_finalizer_and_live_reads_through_the_context(
    widgets: FakeAPIServer, config: Any, sharding: Any
) -> None:
    ctl = Controller(Widget, config=config, sharding=sharding, events=False)
    seen: list[Any] = []
    finalized: list[str] = []

    @ctl.reconcile()
    def reconcile(widget: Any, ctx: Any) -> None:
        assert ctx.resource is widget
        live = ctx.get(Widget, widget.name)
        seen.append((live.metadata.uid == widget.metadata.uid, ctx.client(Widget).live_get(widget.name).spec))
        ctx.event("Ignored", "events=False records nothing")

    @ctl.finalize(FINALIZER)
    async def cleanup(widget: Any, ctx: Any) -> None:
        finalized.append(ctx.resource.name)

    ctl.observer = passes = Passes()
    make_widget(widgets, "w1", size=7)
    with ctl.start():
        passes.wait_for(lambda: bool(seen))
        widgets.delete(WIDGETS, "w1", "default")
        passes.wait_for(lambda: finalized == ["w1"] and not widgets.list(WIDGETS, "default"))
    assert seen[0] == (True, {"size": 7})
    assert widgets.list(EVENTS, "default") == []


def test_without_finalizers_an_object_being_deleted_is_reconciled_as_before(
    widgets: FakeAPIServer, config: Any, sharding: Any
) -> None:
    widgets.create(
        WIDGETS, {"metadata": {"name": "w1", "finalizers": ["other.example.com/keep"]}, "spec": {}}, "default"
    )
    widgets.delete(WIDGETS, "w1", "default")
    ctl = Controller(Widget, config=config, sharding=sharding)
    reconciled: list[bool] = []
    ctl.reconcile(lambda widget: reconciled.append(widget.metadata.deletion_timestamp is not None))
    ctl.observer = passes = Passes()
    with ctl.start():
        passes.wait_for(lambda: passes.total() >= 1)
    assert reconciled and all(reconciled)  # under load a relist may deliver it twice: each pass saw it going


def test_ready_says_waiting_or_terminal_error_with_the_reason(
    widgets: FakeAPIServer, config: Any, sharding: Any
) -> None:
    ctl = Controller(Widget, config=config, sharding=sharding, report_status=True)

    @ctl.reconcile()
    def reconcile(widget: Any, ctx: Any) -> Any:
        if widget.name == "waits":
            return Wait("the database is not up", after=60)
        raise TerminalError("spec.size must be positive")

    ctl.observer = passes = Passes()
    make_widget(widgets, "waits")
    make_widget(widgets, "broken")

    def ready(name: str) -> tuple[str, str, str]:
        return conditions(widgets.get(WIDGETS, name, "default")).get("Ready", ("", "", ""))

    with ctl.start():
        passes.wait_for(lambda: ready("waits")[0] == "False" and ready("broken")[0] == "False")
    assert ready("waits") == ("False", "Waiting", "the database is not up")
    assert ready("broken") == ("False", "TerminalError", "TerminalError: spec.size must be positive")
    [event] = widgets.list(EVENTS, "default")  # a Wait is not a failure: no Warning
    assert (event["type"], event["reason"], event["regarding"]["name"]) == ("Warning", "TerminalError", "broken")


def test_ensure_of_a_kind_not_declared_with_owns_warns_once(
    widgets: FakeAPIServer, config: Any, caplog: pytest.LogCaptureFixture
) -> None:
    ctl = Controller(Widget, config=config)  # no .owns(ConfigMap)
    ctl.observer = passes = Passes()

    @ctl.reconcile()
    def reconcile(widget: Any, ctx: Any) -> None:
        ctx.ensure(ConfigMap(metadata=ObjectMeta(name=widget.name), data={"size": str(widget.spec["size"])}))

    make_widget(widgets, "w1", size=1)
    make_widget(widgets, "w2", size=2)
    with caplog.at_level("WARNING"), ctl.start():
        passes.wait_for(lambda: child_data(widgets, "w1") == {"size": "1"} and child_data(widgets, "w2") is not None)
        widgets.patch(WIDGETS, "w1", {"spec": {"size": 3}}, "default")
        passes.wait_for(lambda: child_data(widgets, "w1") == {"size": "3"})
    unowned = [r.getMessage() for r in caplog.records if ".owns(ConfigMap)" in r.getMessage()]
    assert len(unowned) == 1, unowned
    assert "ensure(ConfigMap)" in unowned[0] and "reads the child live" in unowned[0]


def child_data(server: FakeAPIServer, name: str) -> dict[str, Any] | None:
    try:
        return dict(server.get("configmaps", name, "default")["data"])
    except ResourceNotFound:
        return None


def test_a_kind_without_a_status_subresource_fails_its_passes_saying_so(
    fake_api_server: FakeAPIServer, config: Any
) -> None:
    crd = widget_crd()
    del crd["spec"]["versions"][0]["subresources"]
    fake_api_server.create("customresourcedefinitions", crd)
    ctl = Controller(Widget, config=config, report_status=True, events=False)
    ctl.observer = passes = Passes()

    @ctl.reconcile()
    def reconcile(widget: Any, ctx: Any) -> None:
        ctx.set_status(size=1)

    make_widget(fake_api_server, "w1")
    with ctl.start():
        passes.wait_for(lambda: passes.results["error"] >= 1)
        error = ctl.status().last_errors["default/w1"]
    assert "widgets 'w1' has no status subresource" in error and "subresources: {status: {}}" in error
    assert "status" not in fake_api_server.get(WIDGETS, "w1", "default")  # nothing written elsewhere instead
