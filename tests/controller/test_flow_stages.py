"""Stages and cases (cloudcoil 0.8's ctl.stage / ctl.case / ctl.otherwise) over the fake API server."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from _controller_support import Calls
from _operator_support import WIDGETS, Passes, Widget, conditions, install_widgets, make_widget

from cloudcoil_cache.controller import Controller, Wait
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap


def test_stages_run_in_dependency_order_every_pass_and_a_wait_stops_the_pass(config, fake_api_server, make_cm):
    make_cm("app", {"ready": "no"})
    ctl = Controller(ConfigMap, config=config)
    calls = Calls()

    # declared out of order: depends= decides, never registration order
    fetch_stage = ctl.stage("Fetch")  # a scope: decorated below

    @ctl.stage("Serve", depends="Configure")
    def serve(cm, ctx):
        calls.add(("serve", cm.data["ready"]))

    @ctl.stage("Configure", depends=fetch_stage)
    def configure(cm):
        calls.add(("configure", cm.data["ready"]))
        if cm.data["ready"] != "yes":
            return Wait("not ready yet", after=60)  # returned: the pass stops here
        return None

    @fetch_stage
    def fetch(cm):
        calls.add(("fetch", cm.data["ready"]))

    with ctl:
        calls.wait(lambda c: ("configure", "no") in c)
        assert ("serve", "no") not in calls.snapshot()
        status = ctl.status()
        assert status.delayed == 1  # the Wait's requeue timer (not a failure)
        fake_api_server.patch("configmaps", "app", {"data": {"ready": "yes"}}, "default")
        calls.wait(lambda c: ("serve", "yes") in c)
    passes = calls.snapshot()
    assert passes[:2] == [("fetch", "no"), ("configure", "no")]
    assert passes[-3:] == [("fetch", "yes"), ("configure", "yes"), ("serve", "yes")]  # from the first stage again
    assert ctl.status().errors == 0


def test_a_stage_with_cases_runs_the_first_match_and_otherwise_else(config, make_cm):
    make_cm("small", {"size": "1"})
    make_cm("big", {"size": "100"})
    make_cm("none")
    ctl = Controller(ConfigMap, config=config)
    calls = Calls()
    scale = ctl.stage("Scale")

    @scale.case(when=lambda cm: "size" in cm.data and int(cm.data["size"]) > 10, after="grow")
    def shrink(cm):
        calls.add(("shrink", cm.name))

    @scale.case(when=lambda cm, ctx: "size" in cm.data)
    def grow(cm):
        calls.add(("grow", cm.name))

    @scale.otherwise()
    def leave(cm, ctx):
        calls.add(("leave", ctx.name))

    with ctl:
        calls.wait(lambda c: len(c) >= 3)
    # "grow" comes first (shrink is after it) and matches both sized maps: first match wins
    assert sorted(calls.snapshot()) == [("grow", "big"), ("grow", "small"), ("leave", "none")]


def test_top_level_cases_and_an_async_stage_handler(config, make_cm):
    make_cm("x", {"mode": "a"})
    make_cm("y", {"mode": "b"})
    ctl = Controller(ConfigMap, config=config)
    calls = Calls()

    @ctl.case(when=lambda cm: cm.data.get("mode") == "a")
    async def mode_a(cm, ctx):
        calls.add(("a", cm.name))

    @ctl.otherwise()
    def other(cm):
        raise Wait("nothing to do")  # raised works like returned

    with ctl:
        calls.wait(lambda c: ("a", "x") in c)
        ctl_status = ctl.status()
    assert calls.snapshot() == [("a", "x")]
    assert ctl_status.errors == 0


def test_a_failing_stage_fails_the_pass_and_is_retried_with_backoff(config, make_cm):
    make_cm("flaky")
    ctl = Controller(ConfigMap, config=config)
    calls = Calls()

    @ctl.stage("First")
    def first(cm, ctx):
        calls.add(("first", ctx.retries))
        if ctx.retries < 2:
            raise RuntimeError("boom")

    @ctl.stage("Second", depends=first)  # a dependency may name the stage's function
    def second(cm):
        calls.add(("second", None))

    with ctl:
        calls.wait(lambda c: ("second", None) in c)
    assert [c for c in calls.snapshot() if c[0] == "first"][:3] == [("first", 0), ("first", 1), ("first", 2)]
    assert ctl.status().errors >= 2


def test_declaration_errors_are_clear_and_typed(config):
    ctl = Controller(ConfigMap, config=config)
    with pytest.raises(ValueError, match="other than 'Ready'"):
        ctl.stage(condition="Ready")
    with pytest.raises(ValueError, match="an identifier"):
        ctl.stage(condition="not valid")
    with pytest.raises(ValueError, match="give a name or a condition"):
        ctl.stage()
    with pytest.raises(TypeError, match="def f\\(obj\\) or def f\\(obj, ctx\\)"):
        ctl.stage("NoArgs")(lambda: None)
    with pytest.raises(TypeError, match="must be a plain function"):

        async def predicate(cm: Any) -> bool:
            return True

        ctl.case(when=predicate)
    ctl.stage("A")(lambda cm: None)
    with pytest.raises(ValueError, match="already registered"):
        ctl.stage("A")

    # two stages without an order: an error at start, naming them
    ctl = Controller(ConfigMap, config=config)
    ctl.stage("A")(lambda cm: None)
    ctl.stage("B")(lambda cm: None)
    with pytest.raises(ValueError, match=r"\['A', 'B'\] have no order: declare it \(depends=\)"):
        ctl.start(config)
    assert not ctl.running and ctl.threads() == []


@pytest.mark.parametrize(
    "declare, error, match",
    [
        ("cycle", ValueError, "form a cycle"),
        ("unknown", ValueError, "depends on 'Nope', which is not a stage"),
        ("no otherwise", ValueError, "need an otherwise\\(\\) handler"),
        ("both", ValueError, "register one entrypoint"),
        ("empty stage", ValueError, "has no handler"),
    ],
)
def test_bad_declarations_fail_the_start(config, declare, error, match):
    ctl = Controller(ConfigMap, config=config)
    if declare == "cycle":
        ctl.stage("A", depends="B")(lambda cm: None)
        ctl.stage("B", depends="A")(lambda cm: None)
    elif declare == "unknown":
        ctl.stage("A", depends="Nope")(lambda cm: None)
    elif declare == "no otherwise":
        ctl.case(when=lambda cm: True)(lambda cm: None)
    elif declare == "both":
        ctl.stage("A")(lambda cm: None)
        ctl.reconcile()(lambda cm: None)
    else:
        ctl.stage("A")
    with pytest.raises(error, match=match):
        ctl.start(config)
    assert ctl.threads() == []


def test_registration_closes_when_the_controller_starts(config, make_cm):
    make_cm("one")
    ctl = Controller(ConfigMap, config=config)
    calls = Calls()
    ctl.stage("Only")(lambda cm: calls.add(cm.name))
    with ctl:
        calls.wait(lambda c: "one" in c)
        with pytest.raises(RuntimeError, match="after the controller started"):
            ctl.stage("Late")
    with ctl:  # started again: the same stages
        calls.wait(lambda c: c.count("one") >= 2)


@pytest.mark.parametrize("report_status", [False, True])
def test_stage_outcomes_map_to_conditions_as_in_cloudcoil_0_8(fake_api_server, config, report_status):
    install_widgets(fake_api_server)
    make_widget(fake_api_server, "w1")
    waiting = threading.Event()
    waiting.set()
    ctl = Controller(Widget, config=config, report_status=report_status)
    ctl.observer = passes = Passes()

    @ctl.stage("Fetch", condition="Fetched")
    def fetch(widget):
        return None

    pick = ctl.stage("Pick", condition="Picked", depends=fetch)

    @pick.case(when=lambda widget: True)
    def use_cache(widget):
        return None

    pick.otherwise()(lambda widget: None)

    @ctl.stage("Serve", condition="Served", depends=pick)
    def serve(widget):
        if waiting.is_set():
            raise Wait("backend down", after=0.05)

    ctl.stage("Log", depends=serve)(lambda widget: None)  # no condition: not reported
    ctl.stage("Last", condition="Done", depends="Log")(lambda widget: None)

    def written():
        return {t: c[:2] for t, c in conditions(fake_api_server.get(WIDGETS, "w1", "default")).items()}

    with ctl:
        passes.wait_for(lambda: "Ready" in written())
        assert written() == {
            "Fetched": ("True", "Reconciled"),
            "Picked": ("True", "UseCache"),  # the case that ran, in CamelCase
            "Served": ("False", "Waiting"),
            "Done": ("Unknown", "DependencyNotReady"),  # Log has no condition: not reported
            "Ready": ("False", "Waiting"),
        }
        waiting.clear()
        passes.wait_for(lambda: written().get("Ready") == ("True", "Reconciled"))
        assert written()["Served"] == ("True", "Reconciled") and written()["Done"] == ("True", "Reconciled")


def test_an_object_being_deleted_gets_no_pass(config, fake_api_server, make_cm):
    fake_api_server.create(
        "configmaps", {"metadata": {"name": "going", "namespace": "default", "finalizers": ["x.io/hold"]}}, "default"
    )
    make_cm("staying")
    ctl = Controller(ConfigMap, config=config)
    calls = Calls()
    ctl.stage("Only")(lambda cm: calls.add((cm.name, cm.metadata.deletion_timestamp is not None)))
    with ctl:
        calls.wait(lambda c: ("going", False) in c and ("staying", False) in c)
        fake_api_server.delete("configmaps", "going", "default")  # held by its finalizer: deletionTimestamp set
        fake_api_server.patch("configmaps", "staying", {"data": {"v": "1"}}, "default")
        calls.wait(lambda c: len(c) >= 3 and c[-1] == ("staying", False))
        assert ("going", True) not in calls.snapshot()
        fake_api_server.patch("configmaps", "going", {"metadata": {"finalizers": None}}, "default")
