"""Application.manifests() over kinds from get_dynamic_resource: their plural and scope come from the API
server's discovery, asked when the manifests are made (never at construction); without a server that
serves them, a ConfigError naming the kind."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml

from cloudcoil_cache.application import Application
from cloudcoil_cache.application._rbac import verbs_granted
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller
from cloudcoil_cache.errors import ConfigError
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.resources import get_dynamic_resource
from cloudcoil_cache.testing import FakeAPIServer

_groups = itertools.count()


def served(server: FakeAPIServer, kind: str, *, namespaced: bool = True, status: bool = True) -> tuple[Any, str]:
    """(the dynamic class, its group) of a kind the server serves, in a group of its own (not bound yet)."""
    group = f"dyn-app-{next(_groups)}.example.com"
    server.register_resource(group, "v1", kind, kind.lower() + "s", namespaced=namespaced, status_subresource=status)
    cls = get_dynamic_resource(kind, f"{group}/v1")
    assert cls.plural is None
    return cls, group


def operator(primary: Any, owned: Any, watched: Any) -> Controller:
    ctl = Controller(primary, lambda obj, ctx: None, name="gadgets").owns(owned, ConfigMap)
    ctl.watch(watched, lambda obj: None)
    ctl.finalize("example.com/cleanup")(lambda obj: None)
    return ctl


def rules(docs: list[dict[str, Any]], kind: str) -> set[tuple[str, str, str]]:
    (doc,) = [d for d in docs if d["kind"] == kind]
    return verbs_granted(doc["rules"])


def table(*rows: tuple[str, str, str]) -> set[tuple[str, str, str]]:
    return {(group, resource, verb) for group, resource, verbs in rows for verb in verbs.split()}


def discovery(server: FakeAPIServer) -> list[str]:
    return [r.path for r in server.requests if r.path.startswith("/apis/dyn-app-")]


def test_the_rbac_of_dynamic_kinds_comes_from_discovery_when_the_manifests_are_made(
    fake_api_server: FakeAPIServer, config: Config
) -> None:
    Gadget, gadgets_group = served(fake_api_server, "Gadget")
    Part, parts_group = served(fake_api_server, "Part", status=False)
    Zone, zones_group = served(fake_api_server, "Zone", namespaced=False)  # cluster-scoped, watched
    fake_api_server.clear_requests()
    app = Application("gadgets", operator(Gadget, Part, Zone), config=config, namespace="ops", module="gadgets")
    assert fake_api_server.requests == [] and Gadget.plural is None  # construction asks nothing

    docs = app.manifests()

    assert [d["kind"] for d in docs] == ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]
    assert rules(docs, "Role") == table(
        (gadgets_group, "gadgets", "list watch patch"),  # informer, finalizer
        (gadgets_group, "gadgets/status", "patch"),  # the server lists a status subresource
        (parts_group, "parts", "create list patch watch"),  # owned: informer, ctx.ensure
        ("", "configmaps", "create list patch watch"),
        ("events.k8s.io", "events", "create patch"),
    )
    assert rules(docs, "ClusterRole") == table((zones_group, "zones", "list watch"))
    assert sorted(discovery(fake_api_server)) == sorted(
        f"/apis/{g}/v1" for g in (gadgets_group, parts_group, zones_group)
    )
    fake_api_server.clear_requests()
    assert app.manifests() == docs and discovery(fake_api_server) == []  # learnt once
    whys = {n.why for n in app.needs()}
    assert "gadgets: primary Gadget (informer)" in whys and "gadgets: owns Part (informer)" in whys


def test_manifests_take_a_config_and_the_command_line_a_kubeconfig(
    fake_api_server: FakeAPIServer, fake_kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Gadget, group = served(fake_api_server, "Gadget")
    config = Config(kubeconfig=str(fake_kubeconfig))
    try:
        app = Application("gadgets", Controller(Gadget, lambda obj: None), module="gadgets")
        docs = app.manifests(namespace="ops", config=config)
    finally:
        config.close()
    assert (group, "gadgets", "list") in rules(docs, "Role")

    Other, other_group = served(fake_api_server, "Other")
    cli = Application("others", Controller(Other, lambda obj: None), module="others")
    cli.main(["manifests", "-n", "ops", "--kubeconfig", str(fake_kubeconfig)])
    printed = list(yaml.safe_load_all(capsys.readouterr().out))
    assert (other_group, "others", "watch") in rules(printed, "Role")


def test_without_a_reachable_cluster_the_manifests_fail_naming_the_kind(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    Lonely = get_dynamic_resource("Lonely", f"dyn-app-{next(_groups)}.example.com/v1")
    app = Application("lonely", Controller(Lonely, lambda obj: None), module="lonely")  # offline: fine

    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match=rf"Application 'lonely': the RBAC of Lonely \({Lonely.api_version}\)"):
        app.manifests()

    refused = Config(server="http://127.0.0.1:9", token="t")  # nothing listens on the discard port
    try:
        with pytest.raises(ConfigError, match=r"the RBAC of Lonely .* could not be learnt: ConnectError"):
            app.manifests(config=refused)
    finally:
        refused.close()
    assert Lonely.plural is None


def test_a_kind_the_server_does_not_serve_fails_the_manifests_with_the_clients_message(
    fake_api_server: FakeAPIServer, config: Config
) -> None:
    Missing = get_dynamic_resource("Missing", f"dyn-app-{next(_groups)}.example.com/v1")
    app = Application("missing", Controller(ConfigMap, lambda obj: None).owns(Missing), config=config, module="m")
    with pytest.raises(ConfigError) as failed:
        app.manifests()
    text = str(failed.value)
    assert text.startswith(f"Application 'missing': the RBAC of Missing ({Missing.api_version})")
    assert f"Missing ({Missing.api_version}) is not registered with the server {config.server}" in text
    assert isinstance(failed.value.__cause__, ConfigError)


def test_install_applies_the_crd_first_and_makes_the_rbac_once_its_kind_is_served(
    fake_api_server: FakeAPIServer, config: Config
) -> None:
    group = f"dyn-app-{next(_groups)}.example.com"
    Thing = get_dynamic_resource("Thing", f"{group}/v1")
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"things.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}}}],
        },
    }
    app = Application("things", Controller(Thing, lambda obj: None), crds=[crd], module="things")
    with pytest.raises(ValueError, match="install"):
        app.install(config, namespace="Not A Label")  # a bad argument: nothing applied
    assert fake_api_server.list("customresourcedefinitions.apiextensions.k8s.io") == []

    applied = app.install(config, namespace="ops")

    assert [obj.kind for obj in applied] == ["CustomResourceDefinition", "ServiceAccount", "Role", "RoleBinding"]
    role = fake_api_server.get("roles.rbac.authorization.k8s.io", "things", "ops")
    assert table((group, "things", "list watch"), (group, "things/status", "patch")) <= verbs_granted(role["rules"])
    assert Thing.plural == "things"
