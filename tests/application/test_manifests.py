"""Application.manifests(): apply order, the RBAC each declaration needs, the Deployment, stable output."""

from __future__ import annotations

from typing import Any

import pytest

from cloudcoil_cache.application import Application, Need
from cloudcoil_cache.application._rbac import verbs_granted
from cloudcoil_cache.controller import Controller, LeaderElection
from cloudcoil_cache.models.kubernetes.apps.v1 import Deployment
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Namespace, Secret
from cloudcoil_cache.resources import GenericResource

Widget = GenericResource.define(api_version="example.com/v1", kind="Widget", plural="widgets", namespaced=True)
Cluster = GenericResource.define(api_version="example.com/v1", kind="Cluster", plural="clusters", namespaced=False)


def finalizing(**options: Any) -> Controller:
    """A Widget controller with a finalizer."""
    ctl = Controller(Widget, _noop, **options)
    ctl.finalize("example.com/cleanup")(_noop)
    return ctl


def _noop(obj: Any, ctx: Any) -> None:
    return None


def controller(kind: Any = Widget, cls: type[Controller] = Controller, **options: Any) -> Controller:
    return cls(kind, _noop, **options)


def by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def grants(doc: dict[str, Any]) -> set[tuple[str, str, str]]:
    return verbs_granted(doc["rules"])


def table(*rows: tuple[str, str, str]) -> set[tuple[str, str, str]]:
    """Rows of (group, resource, "verb verb ...") as a set of (group, resource, verb)."""
    return {(group, resource, verb) for group, resource, verbs in rows for verb in verbs.split()}


# What the runtime sends: informers LIST/WATCH, ensure server-side applies (create + patch), Events
# are created then patched as a series, status and finalizers are guarded PATCHes.
READ, OWNED, EVENTS = "list watch", "create list patch watch", "create patch"


def test_apply_order_and_names():
    app = Application(
        "widgets", controller(), leader_election=True, image="example.com/widgets:1", module="widgets.app"
    )
    docs = app.manifests(namespace="ops", create_namespace=True)
    assert [d["kind"] for d in docs] == ["Namespace", "ServiceAccount", "Role", "RoleBinding", "Deployment"]
    assert docs[0]["metadata"]["name"] == "ops"
    for doc in docs[1:]:
        assert doc["metadata"]["name"] == "widgets" and doc["metadata"]["namespace"] == "ops"
        assert doc["metadata"]["labels"]["app.kubernetes.io/name"] == "widgets"
    binding = by_kind(docs, "RoleBinding")[0]
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "widgets"}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "widgets", "namespace": "ops"}]


def test_namespaced_controller_rbac_is_exactly_its_declarations():
    ctl = controller().owns(ConfigMap)
    ctl.watch(Secret, lambda s: None)
    docs = Application("widgets", ctl, namespace="ops").manifests()
    assert not by_kind(docs, "ClusterRole")
    (role,) = by_kind(docs, "Role")
    assert role["metadata"]["namespace"] == "ops"
    assert grants(role) == table(
        ("example.com", "widgets", READ),
        ("example.com", "widgets/status", "patch"),
        ("", "configmaps", OWNED),
        ("", "secrets", READ),
        ("events.k8s.io", "events", EVENTS),
    )


def test_finalizers_add_patch_on_the_primary_and_nothing_else():
    docs = Application("widgets", finalizing()).manifests()
    (role,) = by_kind(docs, "Role")
    assert {v for g, r, v in grants(role) if r == "widgets"} == {"list", "watch", "patch"}
    without = Application("widgets", controller()).manifests()
    assert {v for g, r, v in grants(by_kind(without, "Role")[0]) if r == "widgets"} == {"list", "watch"}


def test_no_status_or_events_rules_when_the_controller_writes_neither():
    docs = Application("widgets", controller(status_updates=False, events=False)).manifests()
    assert grants(by_kind(docs, "Role")[0]) == table(("example.com", "widgets", READ))


def test_extra_rules_add_what_the_reconcile_does_itself():
    ctl = controller()
    rules = [
        {"apiGroups": [""], "resources": ["secrets", "services"], "verbs": ["get", "update"]},
        Need(None, "", "nodes", ("get",), "reads nodes"),
    ]
    app = Application("widgets", ctl, extra_rules=rules)
    docs = app.manifests(namespace="ops")
    assert grants(by_kind(docs, "ClusterRole")[0]) == table(("", "nodes", "get"))
    assert table(("", "secrets", "get update"), ("", "services", "get update")) <= grants(by_kind(docs, "Role")[0])
    assert {n.why for n in app.needs("ops") if n.resource in ("secrets", "services")} == {"extra_rules[0]"}


@pytest.mark.parametrize(
    ("rules", "error", "text"),
    [
        ({"apiGroups": [""]}, TypeError, "takes a list"),
        ([{"apiGroups": [""], "resources": ["pods"]}], ValueError, "'verbs' must be a non-empty list"),
        ([{"apiGroups": [""], "resources": [""], "verbs": ["get"]}], ValueError, "must not hold empty strings"),
        ([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": ["a"]}], ValueError, "only"),
        (["get pods"], TypeError, "extra_rules[0]"),
    ],
)
def test_bad_extra_rules_are_named(rules, error, text):
    with pytest.raises(error) as info:
        Application("widgets", controller(), extra_rules=rules)
    assert text in str(info.value)


def test_a_controller_in_its_own_namespace_gets_a_role_there():
    docs = Application("widgets", controller(namespace="team-a"), leader_election=True).manifests(namespace="ops")
    roles = {d["metadata"]["namespace"]: grants(d) for d in by_kind(docs, "Role")}
    assert set(roles) == {"ops", "team-a"}
    assert roles["ops"] == table(("coordination.k8s.io", "leases", "create get update"))  # only the Lease
    assert ("example.com", "widgets", "watch") in roles["team-a"]
    bindings = {d["metadata"]["namespace"]: d["subjects"] for d in by_kind(docs, "RoleBinding")}
    assert bindings["team-a"] == [{"kind": "ServiceAccount", "name": "widgets", "namespace": "ops"}]


def test_all_namespaces_and_cluster_kinds_go_to_a_cluster_role():
    ns_ctl = controller(all_namespaces=True, name="everywhere").owns(ConfigMap)
    cluster_ctl = controller(Cluster).owns(Namespace)
    docs = Application("widgets", ns_ctl, cluster_ctl, leader_election=True).manifests(namespace="ops")
    assert [d["kind"] for d in docs] == [
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "Role",
        "RoleBinding",
    ]
    (cluster_role,) = by_kind(docs, "ClusterRole")
    assert cluster_role["metadata"] == {"name": "widgets.ops", "labels": cluster_role["metadata"]["labels"]}
    assert grants(cluster_role) == table(
        ("example.com", "widgets", READ),
        ("example.com", "widgets/status", "patch"),
        ("", "configmaps", OWNED),
        ("events.k8s.io", "events", EVENTS),  # all namespaces: Events wherever the primaries are
        ("example.com", "clusters", READ),
        ("example.com", "clusters/status", "patch"),
        ("", "namespaces", OWNED),
    )
    roles = {d["metadata"]["namespace"]: grants(d) for d in by_kind(docs, "Role")}
    assert roles == {
        "default": table(("events.k8s.io", "events", EVENTS)),  # Events of cluster objects (client-go's namespace)
        "ops": table(("coordination.k8s.io", "leases", "create get update")),
    }
    (binding,) = by_kind(docs, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == "widgets.ops"


def test_rules_are_merged_per_group_and_resource_and_sorted():
    one = controller(name="one").owns(ConfigMap)
    two = controller(ConfigMap, name="two")
    two.watch(Widget, lambda w: None)
    (role,) = by_kind(Application("widgets", one, two).manifests(), "Role")
    keys = [(r["apiGroups"][0], r["resources"][0]) for r in role["rules"]]
    assert keys == sorted(keys) and len(keys) == len(set(keys))
    configmaps = next(r for r in role["rules"] if r["resources"] == ["configmaps"])
    assert configmaps["verbs"] == sorted(OWNED.split())
    assert all(r["verbs"] == sorted(r["verbs"]) for r in role["rules"])


def test_every_granted_verb_maps_to_a_declared_need():
    ctl = finalizing().owns(ConfigMap)
    ctl.watch(Secret, lambda s: None)
    app = Application("widgets", ctl, leader_election=LeaderElection("lock", namespace="locks"))
    docs = app.manifests(namespace="ops")
    declared = {
        (need.target, need.group, need.resource, verb): need.why for need in app.needs("ops") for verb in need.verbs
    }
    for role in by_kind(docs, "Role") + by_kind(docs, "ClusterRole"):
        target = role["metadata"].get("namespace")
        for group, resource, verb in grants(role):
            assert (target, group, resource, verb) in declared, (target, group, resource, verb)
    whys = {need.why for need in app.needs("ops")}
    assert whys == {
        "widget: primary Widget (informer)",
        "widget: finalizers example.com/cleanup",
        "widget: status updates",
        "widget: owns ConfigMap (informer)",
        "widget: owns ConfigMap (ctx.ensure: server-side apply)",
        "widget: watches Secret (informer)",
        "widget: Events",
        "leader election: Lease lock",
    }
    assert by_kind(docs, "Role")[0]["metadata"]["namespace"] == "locks"


def test_the_deployment_runs_the_module_with_probes_and_the_service_account():
    app = Application("widgets", controller(), replicas=2, health_port=9000, module="widgets.main")
    (deployment,) = by_kind(app.manifests(namespace="ops", image="example.com/widgets:2"), "Deployment")
    spec = deployment["spec"]
    assert spec["replicas"] == 2
    assert spec["selector"]["matchLabels"] == {"app.kubernetes.io/name": "widgets"}
    assert spec["template"]["metadata"]["labels"]["app.kubernetes.io/name"] == "widgets"
    pod = spec["template"]["spec"]
    assert pod["serviceAccountName"] == "widgets"
    (container,) = pod["containers"]
    assert container["image"] == "example.com/widgets:2"
    assert container["command"] == [
        "python",
        "-m",
        "widgets.main",
        "run",
        "--health-host",
        "0.0.0.0",
        "--health-port",
        "9000",
    ]
    assert container["ports"] == [{"name": "health", "containerPort": 9000, "protocol": "TCP"}]
    assert container["livenessProbe"] == {"httpGet": {"path": "/healthz", "port": "health"}}
    assert container["readinessProbe"] == {"httpGet": {"path": "/readyz", "port": "health"}}
    Deployment.from_dict(deployment)  # a valid Deployment for the models


def test_no_deployment_without_an_image_and_the_module_defaults_to_the_caller():
    app = Application("widgets", controller())
    assert app.module == __name__
    assert not by_kind(app.manifests(), "Deployment")
    assert by_kind(app.manifests(image="img:1"), "Deployment")[0]["spec"]["template"]["spec"]["containers"][0][
        "command"
    ][:4] == ["python", "-m", __name__, "run"]


def test_output_is_stable():
    def build() -> list[dict[str, Any]]:
        ctl = finalizing().owns(Secret, ConfigMap)
        ctl.watch(Namespace, lambda n: None)
        return Application("widgets", ctl, leader_election=True, image="img:1", module="m").manifests(namespace="ops")

    first = build()
    assert build() == first
    other_order = finalizing().owns(ConfigMap, Secret)
    other_order.watch(Namespace, lambda n: None)
    assert (
        Application("widgets", other_order, leader_election=True, image="img:1", module="m").manifests(namespace="ops")
        == first
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"name": "Widgets"}, ValueError, "Application(name) must be a DNS label"),
        ({"namespace": "a_b"}, ValueError, "Application(namespace) must be a DNS label"),
        ({"replicas": 0}, ValueError, "replicas"),
        ({"image": "has space"}, ValueError, "image"),
        ({"module": "not-a-module"}, ValueError, "module"),
        ({"leader_election": "yes"}, TypeError, "leader_election"),
        ({"webhooks": object()}, TypeError, "expects an AdmissionWebhook or a WebhookServer"),
        ({"ca_bundle": b"-----BEGIN CERTIFICATE-----"}, ValueError, "give webhooks= too"),
        ({"health_port": 70000}, ValueError, "health_port"),
        ({"crds": [{"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "x"}}]}, ValueError, "crds"),
    ],
)
def test_bad_input_is_named(kwargs, error, text):
    options = {"name": "widgets", **kwargs}
    with pytest.raises(error, match=None) as info:
        Application(options.pop("name"), controller(), **options)
    assert text in str(info.value)


def test_bad_controllers_and_kinds_are_named():
    with pytest.raises(ValueError, match="at least one Controller"):
        Application("widgets")
    with pytest.raises(ValueError, match=r"unique; repeated: \['widget'\]"):
        Application("widgets", controller(), controller())
    with pytest.raises(TypeError, match="takes Controllers"):
        Application("widgets", object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"manifests\(namespace=...\) must be a DNS label"):
        Application("widgets", controller()).manifests(namespace="Bad")
