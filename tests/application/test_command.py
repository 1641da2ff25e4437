"""Application.main(): the run, manifests and install subcommands."""

from __future__ import annotations

import threading
import urllib.request
from typing import Any

import pytest
import yaml

from cloudcoil_cache.application import Application
from cloudcoil_cache.controller import Controller
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap


def make_app(config: Any = None, **options: Any) -> Application:
    ctl = Controller(ConfigMap, lambda cm, ctx: None, name="mirror").owns(ConfigMap)
    return Application("mirror", ctl, config=config, module="mirror.main", **options)


def test_manifests_prints_yaml_documents(capsys):
    app = make_app(leader_election=True)
    app.main(["manifests", "--namespace", "ops", "--image", "example.com/mirror:1", "--create-namespace"])
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert docs == app.manifests(namespace="ops", image="example.com/mirror:1", create_namespace=True)
    assert [d["kind"] for d in docs][0] == "Namespace"


def test_install_applies_with_the_given_kubeconfig(fake_api_server, fake_kubeconfig, capsys):
    make_app().main(["install", "--kubeconfig", str(fake_kubeconfig), "-n", "ops"])
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "ServiceAccount ops/mirror applied",
        "Role ops/mirror applied",
        "RoleBinding ops/mirror applied",
    ]
    assert fake_api_server.get("rolebindings.rbac.authorization.k8s.io", "mirror", "ops")


def test_install_failure_is_one_line_and_exit_status_1(fake_api_server, fake_kubeconfig, capsys):
    fake_api_server.expected_token = "not-the-one-in-the-kubeconfig"
    with pytest.raises(SystemExit) as info:
        make_app().main(["install", "--kubeconfig", str(fake_kubeconfig)])
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("mirror install: Unauthorized:") and err.count("\n") == 1
    assert "not-the-one" not in err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        make_app().main(["deploy"])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        make_app().main(["run", "--health-port", "70000"])
    assert info.value.code == 2


def test_run_serves_health_and_reconciles_until_stopped(fake_api_server, config):
    reconciled = threading.Event()
    ctl = Controller(ConfigMap, lambda cm, ctx: reconciled.set(), name="mirror")
    app = Application("mirror", ctl, config=config, module="mirror.main", health_port=0)
    fake_api_server.create("configmaps", {"metadata": {"name": "one"}}, "default")
    manager = app.manager()
    with manager:
        assert reconciled.wait(10)
        with urllib.request.urlopen(f"http://127.0.0.1:{manager.health_port}/readyz", timeout=5) as answer:
            assert answer.status == 200
    stop = threading.Event()
    stop.set()  # run() starts, sees stop set, stops: every thread joined
    app.run(stop, health_port=0)
