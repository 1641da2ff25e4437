"""``get``: kubectl-like listings from an informer cache, as a subprocess against the embedded or a test cluster."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from _cli_support import ROOT, LineReader, one_line_error

from cloudcoil_cache.cli import main
from cloudcoil_cache.testing import FakeAPIServer, make_pod


def test_pods_of_one_namespace_as_a_table(cli):
    result = cli("get", "po", "--fake", "-n", "team-a", "--output-watch-events")  # ignored without -w
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert len(lines) == 1 + 6  # 24 pods over 4 namespaces
    assert all(
        line.split()[0].endswith(("-00002", "-00006", "-00010", "-00014", "-00018", "-00022")) for line in lines[1:]
    )
    assert {line.split()[2] for line in lines[1:]} <= {
        "Running",
        "ContainerCreating",
        "Pending",
        "Completed",
        "Succeeded",
    }


def test_all_namespaces_wide_adds_namespace_ip_and_node(cli):
    result = cli("get", "pods", "--fake", "-A", "-o", "wide")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    assert len(lines) == 25
    assert {line.split()[0] for line in lines[1:]} == {"default", "kube-system", "team-a", "team-b"}
    assert all(line.split()[-1].startswith("node-") for line in lines[1:])


def test_kinds_by_kubectl_names_and_short_names(cli):
    result = cli("get", "deploy", "--fake", "-o", "name")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["deployment.apps/api", "deployment.apps/web"]


@pytest.mark.parametrize("name", ["deployments", "deployment", "deployments.apps", "Deployment", "DEPLOY"])
def test_other_spellings_of_a_kind_in_process(name, capsys, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    assert main(["get", name, "--fake", "-o", "name"]) == 0
    assert capsys.readouterr().out.splitlines() == ["deployment.apps/api", "deployment.apps/web"]


def test_json_list_and_yaml_object(cli):
    listed = json.loads(cli("get", "cm", "--fake", "-A", "-o", "json").stdout)
    assert listed["kind"] == "List"
    assert sorted(i["metadata"]["name"] for i in listed["items"]) == [
        "api-config",
        "api-config",
        "web-config",
        "web-config",
    ]
    one = yaml.safe_load(cli("get", "configmap", "web-config", "--fake", "-o", "yaml").stdout)
    assert (one["kind"], one["metadata"]["name"], one["data"]) == (
        "ConfigMap",
        "web-config",
        {"config.yaml": "logLevel: info\n"},
    )


def test_cluster_scoped_kinds(cli):
    namespaces = cli("get", "ns", "--fake").stdout.splitlines()
    assert namespaces[0].split() == ["NAME", "STATUS", "AGE"]
    rows = [line.split()[:2] for line in namespaces[1:]]
    assert rows == sorted(rows)
    assert {"default", "kube-system", "team-a", "team-b"} <= {name for name, _ in rows}
    assert {status for _, status in rows} == {"Active"}
    nodes = cli("get", "no", "--fake").stdout.splitlines()
    assert nodes[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert nodes[1].split()[:3] == ["node-00", "Ready", "control-plane"]


def test_label_and_field_selectors(cli):
    frontend = cli("get", "po", "--fake", "-A", "-l", "tier=frontend", "-o", "name").stdout.splitlines()
    assert len(frontend) == 12  # every other pod
    pending = cli("get", "po", "--fake", "-A", "--field-selector", "status.phase=Pending", "-o", "json").stdout
    items = json.loads(pending)["items"]
    assert items and all(i["status"]["phase"] == "Pending" for i in items)


def test_no_match_says_so_on_stderr(cli):
    result = cli("get", "po", "--fake", "-l", "app=nothing")
    assert result.returncode == 0 and result.stdout == ""
    assert result.stderr.strip() == "No resources found in default namespace."


def test_custom_resources_by_plural_through_discovery(cli, cli_env, tmp_path):
    with FakeAPIServer() as server:
        server.register_resource("example.com", "v1", "Widget", "widgets", True)
        server.create(
            "widgets",
            {
                "apiVersion": "example.com/v1",
                "kind": "Widget",
                "metadata": {"name": "gear", "namespace": "default"},
                "spec": {"size": 3},
            },
            "default",
        )
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        for name in ("widgets", "widget", "widgets.example.com"):
            result = cli("get", name, "--kubeconfig", kubeconfig)
            assert result.returncode == 0, result.stderr
            assert [line.split()[0] for line in result.stdout.splitlines()] == ["NAME", "gear"]
        obj = json.loads(cli("get", "widgets", "gear", "--kubeconfig", kubeconfig, "-o", "json").stdout)
        assert obj["spec"] == {"size": 3}


def test_errors_are_one_line_with_what_to_do(cli, cli_env, tmp_path):
    unknown = cli("get", "gizmos", "--fake")
    assert unknown.returncode == 1
    assert 'no resource type "gizmos"' in one_line_error(unknown)

    bad_selector = cli("get", "po", "--fake", "-l", "a in (b")
    assert bad_selector.returncode == 2
    assert "invalid label selector 'a in (b'" in one_line_error(bad_selector)

    no_config = cli("get", "po")
    assert no_config.returncode == 1
    assert "no Kubernetes configuration found" in one_line_error(no_config)
    assert "--kubeconfig" in no_config.stderr and "--fake" in no_config.stderr

    missing = cli("get", "po", "nope", "--fake")
    assert missing.returncode == 1
    assert one_line_error(missing) == 'error: pods "nope" not found in default namespace'

    by_name_everywhere = cli("get", "po", "web", "-A", "--fake")
    assert by_name_everywhere.returncode == 2
    one_line_error(by_name_everywhere)


def test_unreachable_server_and_forbidden(cli, tmp_path):
    with FakeAPIServer() as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        server.fail_next(1, 403, verb="list", path="/pods")
        forbidden = cli("get", "po", "--kubeconfig", kubeconfig)
        assert forbidden.returncode == 1
        line = one_line_error(forbidden)
        assert line.startswith("error: forbidden:") and "permission" in line
    # the server is gone: nothing listens on its port any more
    unreachable = cli("get", "po", "--kubeconfig", kubeconfig)
    assert unreachable.returncode == 1
    assert "cannot reach the API server" in one_line_error(unreachable)


def test_debug_shows_the_traceback(cli):
    result = cli("--debug", "get", "gizmos", "--fake")
    assert result.returncode != 0
    assert "Traceback" in result.stderr and "CliError" in result.stderr


def test_watch_prints_changes_until_ctrl_c(cli_env, tmp_path: Path):
    with FakeAPIServer() as server:
        server.create("pods", make_pod("web-0", "default"), "default")
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cloudcoil_cache",
                "get",
                "po",
                "-w",
                "--output-watch-events",
                "--kubeconfig",
                kubeconfig,
            ],
            cwd=ROOT,
            env=cli_env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            out = LineReader(proc.stdout)
            out.until("web-0")
            server.wait_for_watches(1, timeout=20)
            server.create("pods", make_pod("web-1", "default"), "default")
            out.until("web-1")
            server.patch("pods", "web-1", {"metadata": {"labels": {"x": "y"}}}, "default")
            server.delete("pods", "web-0", "default")
            seen = out.until("DELETED")
            assert seen[0].split()[:2] == ["EVENT", "NAME"]
            assert [line.split()[:2] for line in seen[1:]] == [
                ["ADDED", "web-0"],
                ["ADDED", "web-1"],
                ["MODIFIED", "web-1"],
                ["DELETED", "web-0"],
            ]
            proc.send_signal(signal.SIGINT)
            assert proc.wait(20) == 0
            out.join()
            assert proc.stderr is not None and "Traceback" not in proc.stderr.read()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
    assert os.environ.get("KUBECONFIG") == cli_env.get("KUBECONFIG")
