"""The RBAC Application.manifests() prints is enough and no more, on a real kube-apiserver.

The example operator (a Widget custom resource owning a ConfigMap, a finalizer, status, Events,
leader election) runs as the real tier's ``restricted`` user bound to the printed Role only: it
works. Then each granted verb is removed in turn, and the test observes something break (a verb
the operator never used would leave it working: an extra grant fails its case). A table test checks
that every printed verb comes from a declaration.
"""

from __future__ import annotations

import datetime
import itertools
import json
import threading
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from cluster_support import FAST

from cloudcoil_cache.application import Application
from cloudcoil_cache.application._rbac import verbs_granted
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, LeaderElection
from cloudcoil_cache.errors import CloudcoilError, ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.models.kubernetes.events.v1 import Event
from cloudcoil_cache.resources import GenericResource
from cloudcoil_cache.testing import RealAPIServer

pytestmark = pytest.mark.real

GROUP = "apps.application.cloudcoil.dev"
Widget = GenericResource.define(api_version=f"{GROUP}/v1", kind="Widget", plural="widgets", namespaced=True)
FINALIZER = f"{GROUP}/cleanup"
#: How long a run waits for the operator to do everything (a denied informer or Lease shows as a timeout).
RUN_TIMEOUT = 8.0
_runs = itertools.count()


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Run:
    """What one run of the operator did: ``done`` once every write succeeded, ``touched`` once a later
    change of the child reached the reconcile, ``errors`` from the first failure on."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.done = False
        self.touched = False
        self.errors: list[str] = []

    def note(self, *, done: bool = False, touched: bool = False, error: str | None = None) -> None:
        with self.cond:
            self.done = self.done or done
            self.touched = self.touched or touched
            if error is not None and not self.errors:
                self.errors.append(error)
            self.cond.notify_all()

    def wait(self, predicate: Callable[[], bool], timeout: float) -> None:
        with self.cond:
            self.cond.wait_for(lambda: predicate() or bool(self.errors), timeout)


def reconcile_steps(widget: Any, config: Config) -> None:
    """Every write the operator declares, each once: finalizer (patch, update), child (get, create,
    apply = patch, update), status (update, patch), an Event (create, then patch as a series)."""
    ns, name = widget.metadata.namespace, widget.metadata.name
    widgets = Widget.client(config)
    fresh = widgets.get(name, namespace=ns)
    widgets.patch(name, {"metadata": {"finalizers": [FINALIZER]}}, namespace=ns)
    data = widgets.get(name, namespace=ns).to_dict()
    data["metadata"].setdefault("annotations", {})[f"{GROUP}/seen"] = "yes"
    widgets.update(Widget.from_dict(data))
    configmaps = ConfigMap.client(config)
    child = f"{name}-child"
    owner = {"apiVersion": Widget.api_version, "kind": "Widget", "name": name, "uid": fresh.metadata.uid}
    try:
        configmaps.get(child, namespace=ns)
    except ResourceNotFound:
        meta = {"name": child, "namespace": ns, "ownerReferences": [{**owner, "controller": True}]}
        configmaps.create(ConfigMap.from_dict({"metadata": meta}))
    applied = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": child, "namespace": ns}}
    configmaps.apply(ConfigMap.from_dict({**applied, "data": {"size": "1"}}), field_manager="widgets", force=True)
    current = configmaps.get(child, namespace=ns).to_dict()
    current["metadata"].setdefault("annotations", {})[f"{GROUP}/checked"] = "yes"
    configmaps.update(ConfigMap.from_dict(current))
    data = widgets.get(name, namespace=ns).to_dict()
    data["status"] = {"child": child}
    widgets.update_status(Widget.from_dict(data))
    widgets.patch(name, {"status": {"ready": True}}, namespace=ns, subresource="status")
    event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.reconciled", "namespace": ns},
        "eventTime": _now(),
        "reportingController": f"{GROUP}/widgets",
        "reportingInstance": "widgets-0",
        "action": "Reconcile",
        "reason": "Reconciled",
        "type": "Normal",
        "note": f"child {child} written",
        "regarding": {**owner, "namespace": ns},
    }
    events = Event.client(config)
    events.create(Event.from_dict(event))
    events.patch(f"{name}.reconciled", {"series": {"count": 2, "lastObservedTime": _now()}}, namespace=ns)


def make_app(config: Config | None, namespace: str, run_id: int = 0, run: Run | None = None) -> Application:
    ctl = Controller(Widget, name="widgets", config=config, label_selector=f"run={run_id}").owns(ConfigMap)
    ctl.finalize(FINALIZER)(lambda widget: None)

    @ctl.reconcile()
    def sync(widget: Any, ctx: Any) -> None:
        if run is None or run.errors:
            return
        try:
            if run.done:  # then the test changes the child: its event must bring the Widget back
                child = ctx.cached(ConfigMap).get(f"{widget.metadata.name}-child")
                run.note(touched=child is not None and (child.data or {}).get("touched") == "yes")
                return
            reconcile_steps(widget, ctx.config)
        except CloudcoilError as exc:
            run.note(error=f"reconcile: {type(exc).__name__}: {exc}")
            return
        run.note(done=True)

    election = LeaderElection(
        f"widgets-{run_id}",
        namespace=namespace,
        identity=f"widgets-{run_id}",
        lease_duration=4,
        renew_deadline=3,
        retry_period=0.3,
    )
    return Application(
        "widgets", ctl, namespace=namespace, config=config, leader_election=election, health_port=None, sync_timeout=5
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
        (GROUP, "widgets", "get"): "widgets: primary Widget (informer, reads)",
        (GROUP, "widgets", "list"): "widgets: primary Widget (informer, reads)",
        (GROUP, "widgets", "watch"): "widgets: primary Widget (informer, reads)",
        (GROUP, "widgets", "patch"): f"widgets: finalizers {FINALIZER}",
        (GROUP, "widgets", "update"): f"widgets: finalizers {FINALIZER}",
        (GROUP, "widgets/status", "patch"): "widgets: status updates",
        (GROUP, "widgets/status", "update"): "widgets: status updates",
        ("", "configmaps", "create"): "widgets: owns ConfigMap (informer, writes)",
        ("", "configmaps", "get"): "widgets: owns ConfigMap (informer, writes)",
        ("", "configmaps", "list"): "widgets: owns ConfigMap (informer, writes)",
        ("", "configmaps", "patch"): "widgets: owns ConfigMap (informer, writes)",
        ("", "configmaps", "update"): "widgets: owns ConfigMap (informer, writes)",
        ("", "configmaps", "watch"): "widgets: owns ConfigMap (informer, writes)",
        ("events.k8s.io", "events", "create"): "widgets: Events",
        ("events.k8s.io", "events", "patch"): "widgets: Events",
        ("coordination.k8s.io", "leases", "create"): "leader election: Lease widgets-0",
        ("coordination.k8s.io", "leases", "get"): "leader election: Lease widgets-0",
        ("coordination.k8s.io", "leases", "update"): "leader election: Lease widgets-0",
    }


# ------------------------------------------------------------------------------------------ fixtures
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


def _until(check: Callable[[], bool], timeout: float) -> bool:
    pause = threading.Event()
    for _ in range(int(timeout / 0.1)):
        if check():
            return True
        pause.wait(0.1)  # nothing to watch for: a bounded poll
    return check()


class Cluster:
    """The real server with the Widget CRD, a namespace, and the Role bound to ``restricted``."""

    def __init__(self, real: RealAPIServer, namespace: str, restricted_kubeconfig: str) -> None:
        self.real = real
        self.namespace = namespace
        self.restricted_kubeconfig = restricted_kubeconfig
        self.role = printed_role(namespace)

    def grant(self, removed: tuple[str, str, str] | None = None) -> None:
        """Apply the printed Role without ``removed`` (bound to the restricted user); wait until
        the authorizer answers accordingly for every printed verb."""
        rules = []
        for rule in self.role["rules"]:
            verbs = [v for v in rule["verbs"] if removed != (rule["apiGroups"][0], rule["resources"][0], v)]
            if verbs:
                rules.append({**rule, "verbs": verbs})
        role = {**self.role, "rules": rules}
        status, body = self.real.request(
            "PATCH",
            f"/apis/rbac.authorization.k8s.io/v1/namespaces/{self.namespace}/roles/widgets?fieldManager=test&force=true",
            role,
            content_type="application/apply-patch+yaml",
        )
        assert status in (200, 201), body
        assert _until(lambda: all(self.allowed(*row) == (row != removed) for row in GRANTED), 10), "RBAC not in effect"

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

    def get(self, path: str) -> dict[str, Any] | None:
        status, body = self.real.request("GET", path)
        return body if status == 200 else None

    def operate(self) -> tuple[int, Run, list[str]]:
        """Run the operator as ``restricted`` on a new Widget; returns what failed (empty: it all worked)."""
        run_id, run, ns = next(_runs), Run(), self.namespace
        status, body = self.real.request(
            "POST",
            f"/apis/{GROUP}/v1/namespaces/{ns}/widgets",
            {
                "apiVersion": f"{GROUP}/v1",
                "kind": "Widget",
                "metadata": {"name": f"w{run_id}", "labels": {"run": str(run_id)}},
            },
        )
        assert status == 201, body
        config = Config(kubeconfig=self.restricted_kubeconfig, namespace=ns, cache=Cache(resources=[], tuning=FAST))
        problems: list[str] = []
        try:
            manager = make_app(config, ns, run_id, run).manager()
            try:
                manager.start()
            except Exception as exc:  # an informer that cannot list or watch: the start fails, named
                problems.append(f"start: {type(exc).__name__}: {exc}")
            else:
                run.wait(lambda: run.done, RUN_TIMEOUT)
                if run.done:
                    self._touch(f"w{run_id}-child")
                    run.wait(lambda: run.touched, RUN_TIMEOUT)
                    if not run.touched and not run.errors:
                        problems.append("a change of the child did not reach the controller")
                if not _until(lambda: self._renewed(run_id), 3):
                    problems.append("the Lease was not held and renewed")
            finally:
                manager.stop()
        finally:
            config.close()
        problems += run.errors
        if not run.done and not run.errors:
            problems.append("the reconcile did not run to its end")
        return run_id, run, problems

    def _touch(self, child: str) -> None:
        status, body = self.real.request(
            "PATCH",
            f"/api/v1/namespaces/{self.namespace}/configmaps/{child}",
            {"data": {"touched": "yes"}},
            content_type="application/merge-patch+json",
        )
        assert status == 200, body

    def _renewed(self, run_id: int) -> bool:
        lease = self.get(f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases/widgets-{run_id}")
        spec = (lease or {}).get("spec") or {}
        return spec.get("holderIdentity") == f"widgets-{run_id}" and spec.get("renewTime", "") > spec.get(
            "acquireTime", ""
        )


@pytest.fixture(scope="module")
def cluster(real_api_server: RealAPIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    real = real_api_server
    namespace = f"application-{next(_runs)}"
    status, body = real.request(
        "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    )
    assert status == 201, body
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }
    status, body = real.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert status in (201, 409), body
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


# ---------------------------------------------------------------------------------------------- tests
def test_the_printed_role_is_enough(cluster: Cluster) -> None:
    cluster.grant()
    run_id, run, problems = cluster.operate()
    assert problems == []
    ns = cluster.namespace
    child = cluster.get(f"/api/v1/namespaces/{ns}/configmaps/w{run_id}-child")
    assert child is not None and child["data"] == {"size": "1", "touched": "yes"}
    assert child["metadata"]["ownerReferences"][0]["name"] == f"w{run_id}"
    widget = cluster.get(f"/apis/{GROUP}/v1/namespaces/{ns}/widgets/w{run_id}")
    assert widget is not None and widget["status"] == {"child": f"w{run_id}-child", "ready": True}
    assert widget["metadata"]["finalizers"] == [FINALIZER]
    event = cluster.get(f"/apis/events.k8s.io/v1/namespaces/{ns}/events/w{run_id}.reconciled")
    assert event is not None and event["series"]["count"] == 2
    lease = cluster.get(f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/widgets-{run_id}")
    assert lease is not None and lease["spec"]["holderIdentity"] == ""  # held, then released on stop


#: Removals seen only through their effect (no Forbidden reaches the reconcile): what the test observes.
INDIRECT = {
    ("coordination.k8s.io", "leases", "create"): "the Lease was not held and renewed",
    ("coordination.k8s.io", "leases", "get"): "the Lease was not held and renewed",
    ("coordination.k8s.io", "leases", "update"): "the Lease was not held and renewed",
    (GROUP, "widgets", "watch"): "the reconcile did not run to its end",  # the primary informer is failing
}
#: Another observation of a removal: the owned informer's watch denied, a change of the child is never seen
#: (the 403 reaches the reconcile as CacheUnavailableError when a read comes after the informer failed).
ALSO = {("", "configmaps", "watch"): "a change of the child did not reach the controller"}


@pytest.mark.parametrize("removed", GRANTED, ids=lambda row: f"{row[1]}-{row[2]}")
def test_each_printed_verb_is_needed(cluster: Cluster, removed: tuple[str, str, str]) -> None:
    cluster.grant(removed)
    _, _, problems = cluster.operate()
    assert problems, f"the operator worked without {removed}: the printed Role grants an extra verb"
    group, resource, verb = removed
    if removed in INDIRECT:
        assert INDIRECT[removed] in problems
    else:  # the 403 names the verb: a failure for another reason would not pass
        forbidden = f'cannot {verb} resource "{resource}" in API group "{group}"'
        assert any(forbidden in p or p == ALSO.get(removed) for p in problems), problems
