"""The example operator under exactly the RBAC Application.manifests() prints, on a real kube-apiserver.

examples/operator.py's controller (a Widget custom resource owning a ConfigMap, a cleanup finalizer,
``Ready`` and ``Synced`` conditions, Events) runs with leader election as the real tier's
``restricted`` user, bound to the printed Role only: create → the child appears and the status
says Ready; a changed child is put back; edit → the child follows; a Widget whose reconcile fails
gets ``Ready=False`` and one Warning Event series (retried with backoff, not a hot loop); delete →
the finalizer runs once and the object goes; ``kubectl describe widget`` shows the conditions and
the Events. Then each printed verb is removed in turn and the run breaks with a 403 naming that verb
(an extra verb would leave it working and fail its case). A table test maps every printed verb to
the declaration it comes from.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import json
import logging
import re
import threading
import time
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator

import pytest
from cluster_support import FAST

from cloudcoil_cache.application import Application
from cloudcoil_cache.application._rbac import verbs_granted
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import LeaderElection
from cloudcoil_cache.controller._observe import ControllerObserver
from cloudcoil_cache.testing import RealAPIServer

pytestmark = pytest.mark.real

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "operator.py"


def _load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_operator_real", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


example = _load_example()
GROUP = "example.com"
WIDGETS = f"/apis/{GROUP}/v1/namespaces/{{ns}}/widgets"
FINALIZER = "example.com/cleanup"
#: How long one step of a run waits for the operator (a run with a verb removed ends at its first 403).
STEP = 15.0
#: A 403 as kube-apiserver words it: the verb, the resource (with its subresource) and the group.
FORBIDDEN = re.compile(r'cannot (\w+) resource "([^"]+)" in API group "([^"]*)"')
_runs = itertools.count()


def make_app(config: Config | None, namespace: str, run_id: int = 0, cleaned: list[str] | None = None) -> Application:
    """examples/operator.py's controller, packaged as the example packages it, with short Lease timings."""
    ctl = example.widget_operator([] if cleaned is None else cleaned, config=config, label_selector=f"run={run_id}")
    election = LeaderElection(
        f"widgets-{run_id}",
        namespace=namespace,
        identity=f"widgets-{run_id}",
        lease_duration=4,
        renew_deadline=3,
        retry_period=0.3,
    )
    return example.application(  # type: ignore[no-any-return]
        ctl, namespace=namespace, config=config, leader_election=election, health_port=None, sync_timeout=5
    )


def printed_role(namespace: str) -> dict[str, Any]:
    docs = make_app(None, namespace).manifests(namespace=namespace)
    assert [d["kind"] for d in docs] == ["ServiceAccount", "Role", "RoleBinding"]
    return docs[1]


#: Every (group, resource, verb) the printed Role grants: each gets a removal case below.
GRANTED = sorted(verbs_granted(printed_role("x")["rules"]))


def test_every_printed_verb_comes_from_a_declaration():
    app = make_app(None, "x")
    declared = {(n.group, n.resource, verb): n.why for n in app.needs("x") for verb in n.verbs}
    assert {row: declared[row] for row in GRANTED} == {
        (GROUP, "widgets", "list"): "widget: primary Widget (informer)",
        (GROUP, "widgets", "watch"): "widget: primary Widget (informer)",
        (GROUP, "widgets", "patch"): f"widget: finalizers {FINALIZER}",
        (GROUP, "widgets/status", "patch"): "widget: status updates",
        ("", "configmaps", "list"): "widget: owns ConfigMap (informer)",
        ("", "configmaps", "watch"): "widget: owns ConfigMap (informer)",
        ("", "configmaps", "create"): "widget: owns ConfigMap (ctx.ensure: server-side apply)",
        ("", "configmaps", "patch"): "widget: owns ConfigMap (ctx.ensure: server-side apply)",
        ("events.k8s.io", "events", "create"): "widget: Events",
        ("events.k8s.io", "events", "patch"): "widget: Events",
        ("coordination.k8s.io", "leases", "create"): "leader election: Lease widgets-0",
        ("coordination.k8s.io", "leases", "get"): "leader election: Lease widgets-0",
        ("coordination.k8s.io", "leases", "update"): "leader election: Lease widgets-0",
    }


# ------------------------------------------------------------------------------------- observing a run
class Signals(ControllerObserver, logging.Handler):
    """What a run shows: the controller's finished passes (its observer) and the 403s in the library's
    log (the controller's, the informers', the Event recorder's, leader election's), both waking
    ``wait``. Reads the log records only: never the project's code."""

    def __init__(self) -> None:
        logging.Handler.__init__(self, logging.INFO)
        self.cond = threading.Condition()
        self.forbidden: list[tuple[str, str, str]] = []
        self.failed_passes = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.saw(record.getMessage())

    def saw(self, text: str) -> None:
        with self.cond:
            self.forbidden += [m for m in FORBIDDEN.findall(text) if m not in self.forbidden]
            self.cond.notify_all()

    def reconciled(self, result: str, seconds: float) -> None:
        with self.cond:
            self.failed_passes += result == "error"
            self.cond.notify_all()

    def wait(self, check: Callable[[], bool], timeout: float) -> bool:
        """Until ``check()`` holds (re-checked after each pass, each log record, and every 0.2 s for
        what no pass announces) or a 403 was seen; True when ``check()`` held. ``check`` reads the
        server: it runs without the lock (the library's threads log through ``emit``)."""
        deadline = time.monotonic() + timeout
        while True:
            with self.cond:
                if self.forbidden:
                    return False
            if check():
                return True
            with self.cond:
                left = deadline - time.monotonic()
                if self.forbidden or left <= 0:
                    return False
                self.cond.wait(min(0.2, left))

    def pause(self, seconds: float) -> None:
        with self.cond:
            self.cond.wait(seconds)


@dataclasses.dataclass
class Report:
    run_id: int
    problems: list[str]
    forbidden: list[tuple[str, str, str]]
    failed_passes: int = 0
    cleaned: list[str] = dataclasses.field(default_factory=list)
    observed: dict[str, Any] = dataclasses.field(default_factory=dict)


def _wait_established(real: RealAPIServer, name: str) -> None:
    request = urllib.request.Request(
        f"{real.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        f"?watch=true&fieldSelector=metadata.name%3D{name}&timeoutSeconds=30",
        headers={"Authorization": f"Bearer {real.tokens['admin']}"},
    )
    with urllib.request.urlopen(request, timeout=35, context=real.ssl_context()) as stream:
        for line in stream:
            conditions = (json.loads(line)["object"].get("status") or {}).get("conditions") or []
            if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                return
    raise AssertionError(f"CRD {name} not established within 30 s")


def conditions(obj: dict[str, Any] | None) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in ((obj or {}).get("status") or {}).get("conditions") or ()}


class Cluster:
    """The real server with the Widget CRD, a namespace, and the printed Role bound to ``restricted``."""

    def __init__(self, real: RealAPIServer, namespace: str, restricted_kubeconfig: str) -> None:
        self.real = real
        self.namespace = namespace
        self.restricted_kubeconfig = restricted_kubeconfig
        self.role = printed_role(namespace)

    # ----------------------------------------------------------------- RBAC
    def grant(self, removed: tuple[str, str, str] | None = None) -> None:
        """Apply the printed Role without ``removed``; wait until the authorizer answers accordingly."""
        rules = []
        for rule in self.role["rules"]:
            verbs = [v for v in rule["verbs"] if removed != (rule["apiGroups"][0], rule["resources"][0], v)]
            if verbs:
                rules.append({**rule, "verbs": verbs})
        status, body = self.real.request(
            "PATCH",
            f"/apis/rbac.authorization.k8s.io/v1/namespaces/{self.namespace}/roles/widgets?fieldManager=test&force=true",
            {**self.role, "rules": rules},
            content_type="application/apply-patch+yaml",
        )
        assert status in (200, 201), body
        settled = threading.Event()
        for _ in range(100):  # the authorizer's cache follows the Role within moments: a bounded poll
            if all(self.allowed(*row) == (row != removed) for row in GRANTED):
                return
            settled.wait(0.1)
        raise AssertionError(f"RBAC without {removed} not in effect")

    def allowed(self, group: str, resource: str, verb: str) -> bool:
        plural, _, sub = resource.partition("/")
        attributes = {"namespace": self.namespace, "verb": verb, "group": group, "resource": plural}
        if sub:
            attributes["subresource"] = sub
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {"user": "restricted", "resourceAttributes": attributes},
        }
        status, body = self.real.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
        assert status == 201, body
        return bool(body["status"].get("allowed"))

    # ------------------------------------------------------------- reads and writes as admin
    def get(self, path: str) -> dict[str, Any] | None:
        status, body = self.real.request("GET", path.format(ns=self.namespace))
        return body if status == 200 else None

    def widget(self, name: str) -> dict[str, Any] | None:
        return self.get(f"{WIDGETS}/{name}")

    def child(self, name: str) -> dict[str, str] | None:
        found = self.get(f"/api/v1/namespaces/{{ns}}/configmaps/{name}")
        return None if found is None else found.get("data") or {}

    def write(self, method: str, path: str, body: Any, *, merge: bool = False) -> None:
        content_type = "application/merge-patch+json" if merge else "application/json"
        status, answer = self.real.request(method, path.format(ns=self.namespace), body, content_type=content_type)
        assert status in (200, 201), answer

    def events(self, name: str) -> list[dict[str, Any]]:
        found = self.get("/apis/events.k8s.io/v1/namespaces/{ns}/events") or {"items": []}
        return [e for e in found["items"] if e["regarding"]["name"] == name]

    def lease_renewed(self, run_id: int) -> bool:
        lease = self.get(f"/apis/coordination.k8s.io/v1/namespaces/{{ns}}/leases/widgets-{run_id}")
        spec = (lease or {}).get("spec") or {}
        return spec.get("holderIdentity") == f"widgets-{run_id}" and spec.get("renewTime", "") > spec.get(
            "acquireTime", ""
        )

    # ------------------------------------------------------------------ the run
    def operate(self, *, describe: bool = False) -> Report:
        """Run the example operator as ``restricted`` through the scenario; stop at the first step that
        fails or at the first 403."""
        run_id, signals, cleaned = next(_runs), Signals(), []
        report = Report(run_id, [], [], cleaned=cleaned)
        config = Config(
            kubeconfig=self.restricted_kubeconfig, namespace=self.namespace, cache=Cache(resources=[], tuning=FAST)
        )
        library = logging.getLogger("cloudcoil_cache")
        level = library.level
        library.setLevel(logging.INFO)  # leader election reports a denied Lease at INFO
        library.addHandler(signals)
        try:
            app = make_app(config, self.namespace, run_id, cleaned)
            app.controllers[0].observer = signals
            manager = app.manager()
            try:
                manager.start()
            except Exception as exc:  # an informer that cannot list: the start fails, naming it
                signals.saw(str(exc))
                report.problems.append(f"start: {type(exc).__name__}: {exc}")
            else:
                try:
                    self._scenario(run_id, signals, report, describe)
                finally:
                    manager.stop()
        finally:
            library.removeHandler(signals)
            library.setLevel(level)
            config.close()
        report.forbidden = list(signals.forbidden)
        report.failed_passes = signals.failed_passes
        report.problems += [f"403: cannot {v} {r} in {g!r}" for v, r, g in signals.forbidden]
        return report

    def _scenario(self, run_id: int, signals: Signals, report: Report, describe: bool) -> None:
        """Each step: an admin's action, then what the operator must have done (within ``STEP`` s)."""
        good, bad, labels = f"w{run_id}", f"b{run_id}", {"run": str(run_id)}
        steps: list[tuple[str, Callable[[], None], Callable[[], bool]]] = [
            ("create: no child of size 2 and Ready", lambda: self.create(good, 2, labels), self.ready(good, 1, "2")),
            ("drift: the changed child was not put back", lambda: self.drift(good, report), self.sized(good, "2")),
            ("edit: the child did not follow", lambda: self.resize(good, 5), self.ready(good, 2, "5")),
            (
                "failure: no Ready=False and no Warning series",
                lambda: self.create(bad, "many", labels),
                self.failed(bad),
            ),
            (
                "leader election: the Lease was not held and renewed",
                lambda: self.observe(report, signals, describe, good, bad),
                lambda: self.lease_renewed(run_id),
            ),
            ("delete: the finalizer did not let the Widgets go", lambda: self.delete(good, bad), self.gone(good, bad)),
        ]
        for what, act, check in steps:
            act()
            if not signals.wait(check, STEP):
                report.problems.append(what)
                return

    # the admin's actions
    def create(self, name: str, size: Any, labels: dict[str, str]) -> None:
        self.write("POST", WIDGETS, {**_kind(), "metadata": {"name": name, "labels": labels}, "spec": {"size": size}})

    def drift(self, name: str, report: Report) -> None:
        report.observed["created"] = self.widget(name)
        self.write("PATCH", f"/api/v1/namespaces/{{ns}}/configmaps/{name}", {"data": {"size": "9"}}, merge=True)

    def resize(self, name: str, size: int) -> None:
        self.write("PATCH", f"{WIDGETS}/{name}", {"spec": {"size": size}}, merge=True)

    def observe(self, report: Report, signals: Signals, describe: bool, good: str, bad: str) -> None:
        signals.pause(1.0)  # what a hot loop would fill with failed passes
        report.observed["failed"] = self.widget(bad)
        report.observed["warnings"] = [e for e in self.events(bad) if e["type"] == "Warning"]
        report.observed["events"] = self.events(good)
        for name in (good, bad) if describe else ():
            done = self.real.kubectl("describe", f"widgets.{GROUP}", name, "-n", self.namespace)
            assert done.returncode == 0, done.stderr
            report.observed[f"describe {name}"] = done.stdout

    def delete(self, *names: str) -> None:
        for name in names:
            self.write("DELETE", f"{WIDGETS}/{name}", None)

    # what the operator must have done
    def ready(self, name: str, generation: int, size: str) -> Callable[[], bool]:
        def check() -> bool:
            obj = self.widget(name) or {}
            return (
                conditions(obj).get("Ready") == ("True", "Reconciled")
                and (obj.get("status") or {}).get("observedGeneration") == generation
                and self.sized(name, size)()
            )

        return check

    def sized(self, name: str, size: str) -> Callable[[], bool]:
        return lambda: (self.child(name) or {}).get("size") == size

    def failed(self, name: str) -> Callable[[], bool]:
        def check() -> bool:
            series = [(e.get("series") or {}).get("count", 1) for e in self.events(name) if e["type"] == "Warning"]
            return (
                conditions(self.widget(name)).get("Ready") == ("False", "ReconcileFailed") and max(series or [0]) >= 2
            )

        return check

    def gone(self, *names: str) -> Callable[[], bool]:
        return lambda: all(self.widget(name) is None for name in names)


def _kind() -> dict[str, str]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Widget"}


@pytest.fixture(scope="module")
def cluster(real_api_server: RealAPIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    real = real_api_server
    namespace = f"application-{next(_runs)}"
    status, body = real.request(
        "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    )
    assert status == 201, body
    status, body = real.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", example.WIDGET_CRD)
    assert status in (201, 409), body  # 409: another real test of the session installed the same CRD
    _wait_established(real, f"widgets.{GROUP}")
    kubeconfig = real.write_kubeconfig(
        Path(tmp_path_factory.mktemp("application")) / "kubeconfig", user="restricted", namespace=namespace
    )
    cluster = Cluster(real, namespace, kubeconfig)
    binding = {
        **next(d for d in make_app(None, namespace).manifests(namespace=namespace) if d["kind"] == "RoleBinding"),
        "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "restricted"}],
    }
    status, body = real.request(
        "POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings", binding
    )
    assert status == 201, body
    yield cluster
    for kind in ("rolebindings", "roles"):  # the restricted user has no grants again
        real.request("DELETE", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/{kind}/widgets")


@pytest.fixture(scope="module")
def full_run(cluster: Cluster) -> Report:
    """One run of the whole scenario under the printed Role, as printed."""
    cluster.grant()
    return cluster.operate(describe=True)


# ---------------------------------------------------------------------------------------------- tests
def test_the_example_operator_runs_under_exactly_the_printed_role(full_run: Report) -> None:
    assert full_run.problems == []
    created = full_run.observed["created"]
    assert created["metadata"]["finalizers"] == [FINALIZER]
    assert conditions(created) == {"Synced": ("True", "ChildApplied"), "Ready": ("True", "Reconciled")}
    assert created["status"]["size"] == 2 and created["status"]["configMap"] == f"w{full_run.run_id}"
    assert sorted(e["reason"] for e in full_run.observed["events"]) == ["ChildApplied", "ChildApplied"]
    assert sorted(full_run.cleaned) == [f"b{full_run.run_id}", f"w{full_run.run_id}"]  # once each


def test_a_failing_reconcile_shows_ready_false_and_one_warning_series_not_a_hot_loop(full_run: Report) -> None:
    failed = full_run.observed["failed"]
    (ready,) = [c for c in failed["status"]["conditions"] if c["type"] == "Ready"]
    assert (ready["status"], ready["reason"]) == ("False", "ReconcileFailed")
    assert "spec.size must be a whole number >= 0, got 'many'" in ready["message"]
    (warning,) = full_run.observed["warnings"]  # one Event object: the retries are a series
    assert warning["reason"] == "ReconcileFailed" and warning["series"]["count"] >= 2
    # retried with the queue's exponential backoff: a few passes in the seconds the run watched, not thousands
    assert 2 <= full_run.failed_passes <= 40


def test_kubectl_describe_widget_shows_the_conditions_and_events(full_run: Report) -> None:
    good = full_run.observed[f"describe w{full_run.run_id}"]
    status = good.split("\nStatus:", 1)[1].split("\nEvents:", 1)[0]
    assert re.search(r"Reason:\s+Reconciled\s+Status:\s+True\s+Type:\s+Ready", status), status
    assert re.search(r"Reason:\s+ChildApplied\s+Status:\s+True\s+Type:\s+Synced", status), status
    events = good.split("\nEvents:", 1)[1]
    assert re.search(r"Normal\s+ChildApplied\s+.*widget\s+ConfigMap w\d+ has size 2", events), events
    assert re.search(r"Normal\s+ChildApplied\s+.*widget\s+ConfigMap w\d+ has size 5", events), events
    bad = full_run.observed[f"describe b{full_run.run_id}"]
    assert re.search(r"Reason:\s+ReconcileFailed\s+Status:\s+False\s+Type:\s+Ready", bad), bad
    assert re.search(r"Warning\s+ReconcileFailed\s+.*widget\s+ValueError: spec.size", bad.split("\nEvents:", 1)[1]), bad


@pytest.mark.parametrize("removed", GRANTED, ids=lambda row: f"{row[1]}-{row[2]}")
def test_each_printed_verb_is_needed(cluster: Cluster, full_run: Report, removed: tuple[str, str, str]) -> None:
    cluster.grant(removed)
    try:
        report = cluster.operate()
    finally:
        cluster.grant()
    assert report.problems, f"the example operator worked without {removed}: the printed Role grants an extra verb"
    group, resource, verb = removed
    assert (verb, resource, group) in report.forbidden, report.problems  # the 403 names the removed verb
