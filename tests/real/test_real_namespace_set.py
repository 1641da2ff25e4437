"""An operator over 3 of 6 namespaces on kube-apiserver (issue 35), under a user bound only to the
Roles ``Application.manifests()`` prints for those 3 (no ClusterRole): it reconciles the objects of
the 3 and none of the others; a 4th namespace, granted and added at run time, is served and its
objects reconciled by the running controller within a sync; a namespace removed is no longer reconciled."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path
from typing import Any

import pytest
from cluster_support import FAST
from controller._controller_support import Calls

from cloudcoil_cache.application import Application
from cloudcoil_cache.caching import Cache, NamespaceSelector
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller
from cloudcoil_cache.errors import CacheUnavailableError
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.testing import RealAPIServer

pytestmark = pytest.mark.real

_runs = itertools.count()
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def _noop(obj: Any) -> None:
    return None


def grant(real: RealAPIServer, docs: list[dict[str, Any]], namespace: str) -> None:
    """Create the printed Role and RoleBinding of ``namespace``, bound to the ``restricted`` user, and
    wait until the authorizer answers with them (a bounded wait on an Event, as test_real_application)."""
    for doc in docs:
        if doc["kind"] in ("Role", "RoleBinding") and doc["metadata"]["namespace"] == namespace:
            body = dict(doc)
            if doc["kind"] == "RoleBinding":
                body["subjects"] = [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "restricted"}]
            plural = "roles" if doc["kind"] == "Role" else "rolebindings"
            status, answer = real.request("POST", f"{RBAC}/namespaces/{namespace}/{plural}", body)
            assert status == 201, answer
    settled = threading.Event()
    for _ in range(100):
        if allowed(real, namespace, "watch"):
            return
        settled.wait(0.1)
    raise AssertionError(f"the Role in {namespace} is not in effect")


def allowed(real: RealAPIServer, namespace: str | None, verb: str) -> bool:
    attributes = {"verb": verb, "group": "", "resource": "configmaps"}
    if namespace is not None:
        attributes["namespace"] = namespace
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"user": "restricted", "resourceAttributes": attributes},
    }
    status, body = real.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
    assert status == 201, body
    return bool(body["status"].get("allowed"))


def test_an_operator_over_3_of_6_namespaces_under_roles_only(real_api_server: RealAPIServer, tmp_path: Path):
    real = real_api_server
    run = next(_runs)
    namespaces = [f"tenant-{run}-{i}" for i in range(6)]
    for ns in namespaces:
        status, body = real.request(
            "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        )
        assert status == 201, body
        status, body = real.request(
            "POST",
            f"/api/v1/namespaces/{ns}/configmaps",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{ns}", "namespace": ns}},
        )
        assert status == 201, body
    watched, fourth = namespaces[:3], namespaces[3]
    kubeconfig = real.write_kubeconfig(tmp_path / "kubeconfig", user="restricted", namespace=watched[0])
    cache = Cache(resources=[ConfigMap], namespaces=watched, tuning=FAST, mode="strict")
    config = Config(kubeconfig=kubeconfig, cache=cache)
    try:
        ctl = Controller(ConfigMap, config=config)
        calls = Calls()
        ctl.reconcile(lambda cm: calls.add((cm.namespace, cm.name)))
        app = Application(f"tenants-{run}", ctl, config=config, module="tenants.app")
        docs = app.manifests(namespace=watched[0])
        assert not [d for d in docs if d["kind"].startswith("Cluster")]  # Roles only
        assert {d["metadata"]["namespace"] for d in docs if d["kind"] == "Role"} == set(watched)
        for ns in watched:
            grant(real, docs, ns)
        assert not allowed(real, None, "list")  # no cluster-wide grant
        with config, ctl:
            calls.wait(lambda c: {(ns, f"cm-{ns}") for ns in watched} <= set(c), timeout=30)
            assert not {ns for ns, _ in calls.snapshot()} - set(watched)
            with pytest.raises(CacheUnavailableError, match="outside the cache's set"):
                ConfigMap.get(f"cm-{fourth}", fourth)
            assert {cm.namespace for cm in ConfigMap.list(all_namespaces=True)} == set(watched)
            # a 4th namespace at run time: granted its Role, added, served within a sync
            grant(
                real,
                Application(f"tenants-{run}", Controller(ConfigMap, _noop, namespace=fourth)).manifests(
                    namespace=watched[0]
                ),
                fourth,
            )
            cache.add_namespace(fourth)
            # the running controller follows the set: its objects reconciled within a sync
            calls.wait(lambda c: (fourth, f"cm-{fourth}") in c, timeout=30)
            assert ctl.status().namespaces == (*watched, fourth)
            assert cache.wait(30)
            assert ConfigMap.get(f"cm-{fourth}", fourth).metadata.name == f"cm-{fourth}"
            listed = ConfigMap.list(all_namespaces=True)
            assert listed.namespaces == [*watched, fourth]
            assert {cm.namespace for cm in listed} == {*watched, fourth}
            assert cache.status().reads["ConfigMap"].fallbacks == 0
            # a namespace removed at run time: its new objects are not reconciled, the others' are
            cache.remove_namespace(watched[1])
            for ns, name in ((watched[1], "late-removed"), (fourth, "late-added")):
                status, body = real.request(
                    "POST",
                    f"/api/v1/namespaces/{ns}/configmaps",
                    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}},
                )
                assert status == 201, body
            calls.wait(lambda c: (fourth, "late-added") in c, timeout=30)
            assert (watched[1], "late-removed") not in calls.snapshot()
            assert ctl.status().namespaces == (watched[0], watched[2], fourth)
    finally:
        config.close()


def _wait_allowed(real: RealAPIServer, expected: bool) -> None:
    """Wait until the authorizer's answer on a cluster-wide list of ConfigMaps is ``expected``."""
    settled = threading.Event()
    for _ in range(100):
        if allowed(real, None, "list") is expected:
            return
        settled.wait(0.1)
    raise AssertionError(f"a cluster-wide list is {'not ' if expected else ''}allowed yet")


def test_an_operator_over_a_namespace_selector_under_its_cluster_role(real_api_server: RealAPIServer, tmp_path: Path):
    """``Cache(namespaces=NamespaceSelector(...))`` on kube-apiserver, under the ClusterRole
    ``Application.manifests()`` prints for it (list/watch of Namespaces): a namespace labelled after
    the start is reconciled, one unlabelled leaves the set (kube-apiserver's watch of a label
    selector sends the object that stops matching as deleted) and is no longer reconciled."""
    real = real_api_server
    run = next(_runs)
    team = f"team-{run}"
    labelled, later = f"sel-{run}-a", f"sel-{run}-b"
    for ns, labels in ((labelled, {"team": team}), (later, {})):
        status, body = real.request(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": labels}},
        )
        assert status == 201, body
        status, body = real.request(
            "POST",
            f"/api/v1/namespaces/{ns}/configmaps",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": ns}},
        )
        assert status == 201, body
    kubeconfig = real.write_kubeconfig(tmp_path / "kubeconfig", user="restricted", namespace=labelled)
    cache = Cache(resources=[ConfigMap], namespaces=NamespaceSelector(f"team={team}"), tuning=FAST, mode="strict")
    config = Config(kubeconfig=kubeconfig, cache=cache)
    binding = f"selector-{run}"
    try:
        ctl = Controller(ConfigMap, config=config)
        calls = Calls()
        ctl.reconcile(lambda cm: calls.add((cm.namespace, (cm.data or {}).get("v"))))
        docs = Application(binding, ctl, config=config, module="tenants.app").manifests(namespace=labelled)
        (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
        status, answer = real.request("POST", f"{RBAC}/clusterroles", role)
        assert status == 201, answer
        status, answer = real.request(
            "POST",
            f"{RBAC}/clusterrolebindings",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": binding},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": role["metadata"]["name"],
                },
                "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "restricted"}],
            },
        )
        assert status == 201, answer
        _wait_allowed(real, True)
        with config, ctl:
            calls.wait(lambda c: (labelled, None) in c, timeout=30)
            assert ctl.status().namespaces == (labelled,)
            changed = threading.Condition()

            def notify(namespace: str, added: bool) -> None:  # (after the controller's own listener)
                with changed:
                    changed.notify_all()

            cache.on_namespaces_changed(notify)
            status, body = real.request(
                "PATCH",
                f"/api/v1/namespaces/{later}",
                {"metadata": {"labels": {"team": team}}},
                content_type="application/merge-patch+json",
            )
            assert status == 200, body
            calls.wait(lambda c: (later, None) in c, timeout=30)  # labelled after the start: reconciled
            status, body = real.request(
                "PATCH",
                f"/api/v1/namespaces/{labelled}",
                {"metadata": {"labels": {"team": None}}},
                content_type="application/merge-patch+json",
            )
            assert status == 200, body
            with changed:  # the set follows the Namespace informer's event, then the controller
                assert changed.wait_for(lambda: ctl.status().namespaces == (later,), 30), cache.namespaces
            assert cache.namespaces == (later,)
            for ns in (labelled, later):
                status, body = real.request(
                    "PATCH",
                    f"/api/v1/namespaces/{ns}/configmaps/cm",
                    {"data": {"v": "late"}},
                    content_type="application/merge-patch+json",
                )
                assert status == 200, body
            calls.wait(lambda c: (later, "late") in c, timeout=30)
            assert (labelled, "late") not in calls.snapshot()
    finally:
        config.close()
        real.request("DELETE", f"{RBAC}/clusterrolebindings/{binding}")
        _wait_allowed(real, False)  # the restricted user has no cluster-wide grant again
