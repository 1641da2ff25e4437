"""The operator story over a CRD with no generated class, on a real kube-apiserver: the kind is
``get_dynamic_resource("Gadget", "acc.example.com/v1")`` (its plural and scope from discovery), the RBAC is
what the application's ``manifests`` command prints (run as a program, asking the server's discovery), and
the operator runs as the ``restricted`` user bound to exactly that Role.

Create → a ConfigMap child owned by the Gadget, the finalizer, ``Ready``/``Synced`` with
``observedGeneration``, an Event; a changed child is put back; edit → the child follows (generation 2);
a Gadget whose reconcile fails gets ``Ready=False`` and one Warning series, retried with backoff (not a hot
loop); delete → the finalizer runs once each and the Gadgets go. ``Application.run()`` runs on a thread and
``Application.stop()`` from the test thread ends it. No 403 anywhere.

Also a program: ``python tests/real/test_real_dynamic_operator.py manifests -n NS --kubeconfig FILE``.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import yaml

from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.application import Application
from cloudcoil_cache.application._rbac import verbs_granted
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, LeaderElection
from cloudcoil_cache.controller._observe import ControllerObserver
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.resources import get_dynamic_resource

pytestmark = pytest.mark.real

GROUP = "acc.example.com"
#: No class is generated or declared for the kind: only this, whose plural and scope the server tells.
Gadget = get_dynamic_resource("Gadget", f"{GROUP}/v1")
FINALIZER = f"{GROUP}/cleanup"
GADGETS = f"/apis/{GROUP}/v1/namespaces/{{ns}}/gadgets"
FORBIDDEN = re.compile(r'cannot (\w+) resource "([^"]+)" in API group "([^"]*)"')
STEP = 20.0  # how long one step waits for the operator

GADGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"gadgets.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
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


# ------------------------------------------------------------------------------------------ the operator
def gadget_operator(cleaned: list[str], **options: Any) -> Controller:
    """Each Gadget gets a ConfigMap with its ``spec.size``, ``status.size``, a ``Synced`` condition (and
    ``Ready`` from each pass's outcome), an Event when the child changed, and a cleanup finalizer."""
    ctl = Controller(Gadget, report_status=True, **options).owns(ConfigMap)

    @ctl.reconcile()
    def reconcile(gadget: Any, ctx: Any) -> None:
        wanted = gadget["spec"].get("size", 1)
        if isinstance(wanted, bool) or not isinstance(wanted, int) or wanted < 0:
            raise ValueError(f"spec.size must be a whole number >= 0, got {wanted!r}")
        size = str(wanted)
        before = ctx.cached(ConfigMap).get(gadget.name)
        child = ctx.ensure(ConfigMap(metadata=ObjectMeta(name=gadget.name), data={"size": size}))
        ctx.set_status(size=wanted, configMap=child.name)
        ctx.condition("Synced", True, reason="ChildApplied", message=f"ConfigMap {child.name} has size {size}")
        if before is None or (before.data or {}).get("size") != size:
            ctx.event("ChildApplied", f"ConfigMap {child.name} has size {size}")

    @ctl.finalize(FINALIZER)
    def cleanup(gadget: Any, ctx: Any) -> None:
        cleaned.append(gadget.name)
        ctx.event("CleanedUp", "released the gadget's resources")

    return ctl


def application(cleaned: list[str], config: Config | None = None) -> Application:
    """The operator packaged, with leader election on the Lease ``gadgets`` (short timings)."""
    election = LeaderElection("gadgets", identity="gadgets-0", lease_duration=4, renew_deadline=3, retry_period=0.3)
    return Application(
        "gadgets",
        gadget_operator(cleaned, config=config),
        config=config,
        leader_election=election,
        health_port=None,
        module="gadgets",
        sync_timeout=10,
    )


# ------------------------------------------------------------------------------------------- observing
class Signals(ControllerObserver, logging.Handler):
    """The controller's finished passes and the 403s in the library's log; both wake ``wait``."""

    def __init__(self) -> None:
        logging.Handler.__init__(self, logging.INFO)
        self.cond = threading.Condition()
        self.forbidden: list[tuple[str, str, str]] = []
        self.failed_passes = 0

    def emit(self, record: logging.LogRecord) -> None:
        found = FORBIDDEN.findall(record.getMessage())
        with self.cond:
            self.forbidden += [m for m in found if m not in self.forbidden]
            self.cond.notify_all()

    def reconciled(self, result: str, seconds: float) -> None:
        with self.cond:
            self.failed_passes += result == "error"
            self.cond.notify_all()

    def wait(self, check: Callable[[], bool], what: str, timeout: float = STEP) -> None:
        """Until ``check()`` holds (re-checked after each pass and every 0.2 s); fails at once on a 403."""
        deadline = time.monotonic() + timeout
        while True:
            with self.cond:
                assert not self.forbidden, f"{what}: 403 {self.forbidden}"
            if check():
                return
            with self.cond:
                left = deadline - time.monotonic()
                assert left > 0, f"{what}: not within {timeout:g} s"
                self.cond.wait(min(0.2, left))


class Cluster:
    """The real server (admin requests) in one namespace."""

    def __init__(self, real: Any, namespace: str) -> None:
        self.real = real
        self.namespace = namespace

    def get(self, path: str) -> dict[str, Any] | None:
        status, body = self.real.request("GET", path.format(ns=self.namespace))
        return body if status == 200 else None

    def write(self, method: str, path: str, body: Any, *, merge: bool = False) -> dict[str, Any]:
        content_type = "application/merge-patch+json" if merge else "application/json"
        status, answer = self.real.request(method, path.format(ns=self.namespace), body, content_type=content_type)
        assert status in (200, 201), answer
        return dict(answer)

    def gadget(self, name: str) -> dict[str, Any] | None:
        return self.get(f"{GADGETS}/{name}")

    def child(self, name: str) -> dict[str, Any] | None:
        return self.get(f"/api/v1/namespaces/{{ns}}/configmaps/{name}")

    def events(self, name: str) -> list[dict[str, Any]]:
        found = self.get("/apis/events.k8s.io/v1/namespaces/{ns}/events") or {"items": []}
        return [e for e in found["items"] if e["regarding"]["name"] == name]

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


def conditions(obj: dict[str, Any] | None) -> dict[str, tuple[str, str, int | None]]:
    return {
        c["type"]: (c["status"], c["reason"], c.get("observedGeneration"))
        for c in ((obj or {}).get("status") or {}).get("conditions") or ()
    }


def _wait_established(real: Any, name: str) -> None:
    request = urllib.request.Request(
        f"{real.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        f"?watch=true&fieldSelector=metadata.name%3D{name}&timeoutSeconds=30",
        headers={"Authorization": f"Bearer {real.tokens['admin']}"},
    )
    with urllib.request.urlopen(request, timeout=35, context=real.ssl_context()) as stream:
        for line in stream:
            found = (json.loads(line)["object"].get("status") or {}).get("conditions") or []
            if any(c["type"] == "Established" and c["status"] == "True" for c in found):
                return
    raise AssertionError(f"CRD {name} not established within 30 s")


# -------------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def cluster(real_api_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, Path, Path]]:
    """The Gadget CRD, a namespace, and kubeconfigs of the admin and the restricted user."""
    real = real_api_server
    namespace = "dynamic-operator"
    status, body = real.request(
        "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    )
    assert status == 201, body
    status, body = real.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", GADGET_CRD)
    assert status in (201, 409), body
    _wait_established(real, f"gadgets.{GROUP}")
    folder = Path(tmp_path_factory.mktemp("dynamic-operator"))
    admin = Path(real.write_kubeconfig(folder / "admin", namespace=namespace))
    restricted = Path(real.write_kubeconfig(folder / "restricted", user="restricted", namespace=namespace))
    yield Cluster(real, namespace), admin, restricted
    for kind in ("rolebindings", "roles"):  # the restricted user has no grants again
        real.request("DELETE", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/{kind}/gadgets")


def printed_manifests(namespace: str, kubeconfig: Path) -> list[dict[str, Any]]:
    """What ``<program> manifests -n NS --kubeconfig FILE`` prints: a process of its own, whose dynamic
    class learns its plural there (this process's stays unbound until the operator starts)."""
    done = subprocess.run(
        [sys.executable, __file__, "manifests", "-n", namespace, "--kubeconfig", str(kubeconfig)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return list(yaml.safe_load_all(done.stdout))


# ----------------------------------------------------------------------------------------------- tests
def test_the_dynamic_operator_runs_under_exactly_the_rbac_its_manifests_print(
    cluster: tuple[Cluster, Path, Path],
) -> None:
    from cluster_support import FAST  # (imported here: the module is also run as a program)

    admin, admin_kubeconfig, restricted_kubeconfig = cluster
    ns = admin.namespace

    # the RBAC, printed by the program from the server's discovery, bound to the restricted user
    docs = printed_manifests(ns, admin_kubeconfig)
    assert [d["kind"] for d in docs] == ["ServiceAccount", "Role", "RoleBinding"]
    role = docs[1]
    granted = verbs_granted(role["rules"])
    assert {
        (GROUP, "gadgets", "list"),
        (GROUP, "gadgets", "watch"),
        (GROUP, "gadgets", "patch"),
        (GROUP, "gadgets/status", "patch"),
        ("", "configmaps", "create"),
        ("", "configmaps", "patch"),
    } <= granted
    assert {g for g, _, _ in granted} == {GROUP, "", "events.k8s.io", "coordination.k8s.io"}
    admin.write("POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles", role)
    binding = {**docs[2], "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "restricted"}]}
    admin.write("POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings", binding)
    settled = threading.Event()
    for _ in range(100):  # the authorizer follows the new binding within moments: a bounded poll
        if all(admin.allowed(*row) for row in granted):
            break
        settled.wait(0.1)
    else:
        raise AssertionError("the printed RBAC is not in effect")

    # the operator, as the restricted user; its kind learns its plural when the application starts
    assert Gadget.plural is None
    signals, cleaned = Signals(), []
    config = Config(kubeconfig=str(restricted_kubeconfig), namespace=ns, cache=Cache(resources=[], tuning=FAST))
    app = application(cleaned, config)
    app.controllers[0].observer = signals
    library = logging.getLogger("cloudcoil_cache")
    level = library.level
    library.setLevel(logging.INFO)
    library.addHandler(signals)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            app.run()
        except BaseException as exc:  # reported below
            errors.append(exc)

    runner = threading.Thread(target=run, name="test-dynamic-operator-run", daemon=True)
    runner.start()
    try:
        # create: the child, the finalizer, Ready and Synced for generation 1, an Event
        created = admin.write("POST", GADGETS, _gadget("g1", 2))
        signals.wait(lambda: _ready(admin, "g1", 1, "2"), "create")
        assert (Gadget.plural, Gadget.namespaced) == ("gadgets", True)
        obj = admin.gadget("g1") or {}
        assert obj["metadata"]["finalizers"] == [FINALIZER]
        assert conditions(obj) == {"Synced": ("True", "ChildApplied", 1), "Ready": ("True", "Reconciled", 1)}
        assert obj["status"]["size"] == 2 and obj["status"]["configMap"] == "g1"
        [owner] = (admin.child("g1") or {})["metadata"]["ownerReferences"]
        assert (owner["apiVersion"], owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
            f"{GROUP}/v1",
            "Gadget",
            "g1",
            created["metadata"]["uid"],
            True,
        )
        signals.wait(lambda: [e["reason"] for e in admin.events("g1")] == ["ChildApplied"], "the create's Event")

        # drift: a changed child is put back
        admin.write("PATCH", "/api/v1/namespaces/{ns}/configmaps/g1", {"data": {"size": "9"}}, merge=True)
        signals.wait(lambda: _size(admin, "g1") == "2", "drift")

        # edit: the child follows, generation 2
        admin.write("PATCH", f"{GADGETS}/g1", {"spec": {"size": 5}}, merge=True)
        signals.wait(lambda: _ready(admin, "g1", 2, "5"), "edit")

        # failure: Ready=False and one Warning series, retried with backoff
        admin.write("POST", GADGETS, _gadget("b1", "many"))
        signals.wait(lambda: _failed(admin, "b1"), "failure")
        failed = admin.gadget("b1") or {}
        assert "spec.size must be a whole number >= 0, got 'many'" in str(failed["status"]["conditions"])
        (warning,) = [e for e in admin.events("b1") if e["type"] == "Warning"]  # one Event: a series
        assert warning["reason"] == "ReconcileFailed" and warning["series"]["count"] >= 2
        threading.Event().wait(1.0)  # what a hot loop would fill with failed passes
        assert 2 <= signals.failed_passes <= 40

        # delete: the finalizer runs once for each, then the Gadgets go
        for name in ("g1", "b1"):
            admin.write("DELETE", f"{GADGETS}/{name}", None)
        signals.wait(lambda: admin.gadget("g1") is None and admin.gadget("b1") is None, "delete")
        assert sorted(cleaned) == ["b1", "g1"]
    finally:
        app.stop()  # from this thread: run() returns
        runner.join(30)
        library.removeHandler(signals)
        library.setLevel(level)
        config.close()
    assert not runner.is_alive() and errors == []
    assert signals.forbidden == []


def _gadget(name: str, size: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": name}, "spec": {"size": size}}


def _size(admin: Cluster, name: str) -> str | None:
    return ((admin.child(name) or {}).get("data") or {}).get("size")


def _ready(admin: Cluster, name: str, generation: int, size: str) -> bool:
    obj = admin.gadget(name) or {}
    return (
        conditions(obj).get("Ready") == ("True", "Reconciled", generation)
        and (obj.get("status") or {}).get("observedGeneration") == generation
        and _size(admin, name) == size
    )


def _failed(admin: Cluster, name: str) -> bool:
    series = [(e.get("series") or {}).get("count", 1) for e in admin.events(name) if e["type"] == "Warning"]
    return (
        conditions(admin.gadget(name)).get("Ready", ("",))[:2] == ("False", "ReconcileFailed")
        and max(series or [0]) >= 2
    )


if __name__ == "__main__":  # the program whose `manifests` command the test runs
    application([]).main()
