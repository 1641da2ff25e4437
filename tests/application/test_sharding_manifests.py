"""Application(sharding=Ring(...)): the ring's webhook registered, its Lease and label RBAC, the Manager it builds."""

from __future__ import annotations

from typing import Any

import pytest

from cloudcoil_cache.admission import AdmissionWebhook
from cloudcoil_cache.application import Application
from cloudcoil_cache.application._rbac import verbs_granted
from cloudcoil_cache.controller import Controller, LeaderElection, Ring
from cloudcoil_cache.models.kubernetes.apps.v1 import Deployment
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap


def _noop(obj: Any, ctx: Any) -> None:
    return None


def app(**options: Any) -> Application:
    ctl = Controller(Deployment, _noop, namespace="ops").owns(ConfigMap)
    return Application("widgets", ctl, module="widgets.main", **options)


def by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def test_manifests_grant_the_ring_its_leases_and_labels_and_register_its_webhook() -> None:
    application = app(sharding=Ring("widgets", identity="r-0"), replicas=3)
    docs = application.manifests(namespace="ops", image="img:1")
    (role,) = by_kind(docs, "Role")
    granted = verbs_granted(role["rules"])
    for verb in ("create", "delete", "get", "list", "update", "watch"):
        assert ("coordination.k8s.io", "leases", verb) in granted
    assert ("apps", "deployments", "patch") in granted  # the sharder's and the drains' labels
    assert ("", "configmaps", "patch") in granted
    (mutating,) = by_kind(docs, "MutatingWebhookConfiguration")
    hooks = {h["clientConfig"]["service"]["path"]: h for h in mutating["webhooks"]}
    assert set(hooks) == {"/shard/widgets/apps/v1/deployments", "/shard/widgets/core/v1/configmaps"}
    for hook in hooks.values():
        assert hook["failurePolicy"] == "Ignore"
        assert hook["objectSelector"] == {
            "matchExpressions": [{"key": "shard.cloudcoil.dev/widgets", "operator": "DoesNotExist"}]
        }
        assert sorted(hook["rules"][0]["operations"]) == ["CREATE", "UPDATE"]
        assert hook["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "ops"}}
    assert by_kind(docs, "Deployment")[0]["spec"]["replicas"] == 3
    manager = application.manager()
    assert manager.sharding is application.sharding and manager.leader_election is None


def test_the_ring_joins_an_applications_own_webhooks() -> None:
    hooks = AdmissionWebhook()

    @hooks.validating(ConfigMap, path="/validate-configmaps")
    def check(request: Any) -> None:
        return None

    application = app(sharding=Ring("widgets", identity="r-0"), webhooks=hooks)
    assert application.webhooks is not None
    assert {r.path for r in application.webhooks.webhook.routes} == {
        "/validate-configmaps",
        "/shard/widgets/apps/v1/deployments",
        "/shard/widgets/core/v1/configmaps",
    }


@pytest.mark.parametrize(
    ("options", "error", "text"),
    [
        ({"sharding": "widgets"}, TypeError, "expects a Ring"),
        ({"sharding": Ring("w", identity="r-0"), "leader_election": True}, ValueError, "exclude each other"),
        ({"sharding": Ring("w", identity="r-0"), "leader_election": LeaderElection("x")}, ValueError, "exclude"),
    ],
)
def test_bad_sharding_options_are_named(options: dict[str, Any], error: type[Exception], text: str) -> None:
    with pytest.raises(error, match=text):
        app(**options)


def test_without_the_shard_webhook_the_sharder_labels_everything() -> None:
    application = app(sharding=Ring("widgets", identity="r-0"), shard_webhook=False)
    assert application.webhooks is None
    docs = application.manifests(namespace="ops", image="img:1")
    assert not by_kind(docs, "MutatingWebhookConfiguration")
    (role,) = by_kind(docs, "Role")
    assert ("coordination.k8s.io", "leases", "watch") in verbs_granted(role["rules"])
