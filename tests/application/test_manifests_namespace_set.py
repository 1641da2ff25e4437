"""Application.manifests() for controllers over a cache's set of namespaces (issue 35): a Role and a
RoleBinding in each namespace of the set for the namespaced kinds, never a ClusterRole for them."""

from __future__ import annotations

from typing import Any

from cloudcoil_cache.application import Application
from cloudcoil_cache.application._rbac import controller_scopes, verbs_granted
from cloudcoil_cache.caching import Cache, NamespaceSelector
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Namespace, Secret


def _noop(obj: Any, ctx: Any) -> None:
    return None


def over_set(*namespaces: str, **cache: Any) -> Config:
    return Config(server="http://127.0.0.1:1", namespace="ops", cache=Cache(namespaces=list(namespaces), **cache))


def test_a_role_per_namespace_of_the_set_and_no_cluster_role():
    config = over_set("a", "b", "c")
    try:
        ctl = Controller(ConfigMap, _noop, config=config).owns(Secret)
        docs = Application("tenants", ctl, module="tenants.app").manifests(namespace="ops")
        assert not [d for d in docs if d["kind"].startswith("Cluster")]
        roles = {d["metadata"]["namespace"]: d for d in docs if d["kind"] == "Role"}
        bindings = {d["metadata"]["namespace"]: d for d in docs if d["kind"] == "RoleBinding"}
        assert set(roles) == set(bindings) == {"a", "b", "c"}
        for namespace in ("a", "b", "c"):
            granted = verbs_granted(roles[namespace]["rules"])
            assert {("", "configmaps", "list"), ("", "configmaps", "watch")} <= granted
            assert {("", "secrets", "create"), ("", "secrets", "patch"), ("", "secrets", "watch")} <= granted
            subject = bindings[namespace]["subjects"][0]
            assert subject == {"kind": "ServiceAccount", "name": "tenants", "namespace": "ops"}
    finally:
        config.close()


def test_the_applications_config_gives_the_set_too_and_a_named_namespace_wins():
    config = over_set("a", "b")
    try:
        app_ctl = Controller(ConfigMap, _noop)
        assert controller_scopes(app_ctl, "ops", config) == ["a", "b"]
        assert controller_scopes(app_ctl, "ops") == ["ops"]  # no cache over a set: the app's namespace
        assert controller_scopes(Controller(ConfigMap, _noop, namespace="x"), "ops", config) == ["x"]
        assert controller_scopes(Controller(ConfigMap, _noop, all_namespaces=True), "ops", config) == [None]
        assert controller_scopes(Controller(Namespace, _noop), "ops", config) == ["ops"]  # cluster-scoped
        docs = Application("tenants", app_ctl, config=config, module="tenants.app").manifests(namespace="ops")
        assert {d["metadata"]["namespace"] for d in docs if d["kind"] == "Role"} == {"a", "b"}
    finally:
        config.close()


def test_a_kind_with_its_own_set():
    config = Config(
        server="http://127.0.0.1:1",
        namespace="ops",
        cache=Cache(per_resource={ConfigMap: {"namespaces": ["x", "y"]}}),
    )
    try:
        docs = Application("t", Controller(ConfigMap, _noop, config=config), module="t.app").manifests(namespace="ops")
        assert {d["metadata"]["namespace"] for d in docs if d["kind"] == "Role"} == {"x", "y"}
    finally:
        config.close()


def test_a_namespace_selector_needs_a_cluster_role_to_follow_the_namespaces():
    config = Config(server="http://127.0.0.1:1", namespace="ops", cache=Cache(namespaces=NamespaceSelector("team=a")))
    try:
        ctl = Controller(ConfigMap, _noop, config=config).owns(Secret)
        assert controller_scopes(ctl, "ops") == [None]  # the namespaces are not known ahead of time
        docs = Application("tenants", ctl, module="tenants.app").manifests(namespace="ops")
        assert not [d for d in docs if d["kind"] == "Role" and d["metadata"]["namespace"] != "ops"]
        (cluster_role,) = [d for d in docs if d["kind"] == "ClusterRole"]
        granted = verbs_granted(cluster_role["rules"])
        assert {("", "namespaces", "list"), ("", "namespaces", "watch")} <= granted
        assert {("", "configmaps", "list"), ("", "configmaps", "watch"), ("", "secrets", "patch")} <= granted
        assert ("", "namespaces", "get") not in granted  # what the informer sends, nothing more
        assert [d for d in docs if d["kind"] == "ClusterRoleBinding"]
    finally:
        config.close()
