"""An operator over 3 of 6 namespaces on kube-apiserver (issue 35), under a user bound only to the
Roles ``Application.manifests()`` prints for those 3 (no ClusterRole): it reconciles the objects of
the 3 and none of the others; a 4th namespace, granted and added at run time, is served within a sync."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path
from typing import Any

import pytest
from cluster_support import FAST
from controller._controller_support import Calls

from cloudcoil_cache.application import Application
from cloudcoil_cache.caching import Cache
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
            assert cache.wait(30)
            assert ConfigMap.get(f"cm-{fourth}", fourth).metadata.name == f"cm-{fourth}"
            listed = ConfigMap.list(all_namespaces=True)
            assert listed.namespaces == [*watched, fourth]
            assert {cm.namespace for cm in listed} == {*watched, fourth}
    finally:
        config.close()
