"""kubectl against ``serve --tls --token``: apply, create, edit, explain, get all, auth can-i, get -w,
create deployment. Skipped when no kubectl is found (tools/real-apiserver/build makes one)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _kubectl() -> str | None:
    if os.environ.get("KUBECTL"):
        return os.environ["KUBECTL"]
    try:
        from cloudcoil_cache.testing._real import find_assets

        found = find_assets() / "kubectl"
        if os.access(found, os.X_OK):
            return str(found)
    except (ImportError, RuntimeError):
        pass
    return shutil.which("kubectl")


KUBECTL = _kubectl()
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="no kubectl (tools/real-apiserver/build)")


class Cluster:
    """``python -m cloudcoil_cache.testing serve --tls --token`` and a kubectl runner for it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.kubeconfig = folder / "kubeconfig"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cloudcoil_cache.testing",
                "serve",
                "--kubeconfig",
                str(self.kubeconfig),
                "--pods",
                "6",
                "--tls",
                "--token",
                "t0ken",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()  # printed once the kubeconfig is written

    def kubectl(self, *args: str, editor: str | None = None, timeout: float = 60) -> str:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}
        env.update(KUBECONFIG=str(self.kubeconfig), HOME=str(self.folder))
        if editor is not None:
            env["KUBE_EDITOR"] = editor
        done = subprocess.run(
            [str(KUBECTL), *args], capture_output=True, text=True, env=env, timeout=timeout, check=False
        )
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
        return done.stdout

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.communicate(timeout=30)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    running = Cluster(tmp_path_factory.mktemp("kubectl"))
    try:
        assert running.url.startswith("https://")
        yield running
    finally:
        running.stop()


def test_get_all_shows_the_server_side_table_columns(cluster: Cluster) -> None:
    out = cluster.kubectl("get", "all", "-A")
    assert "NAME" in out and "READY" in out and "STATUS" in out and "RESTARTS" in out
    assert "replicaset.apps/" in out
    nodes = cluster.kubectl("get", "nodes")
    assert "Ready" in nodes.splitlines()[1]


def test_apply_create_and_server_side_apply(cluster: Cluster) -> None:
    manifest = cluster.folder / "cm.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  a: '1'\n")
    assert "configmap/demo created" in cluster.kubectl("apply", "-f", str(manifest))
    manifest.write_text(manifest.read_text().replace("'1'", "'2'"))
    assert "configmap/demo configured" in cluster.kubectl("apply", "-f", str(manifest))
    other = cluster.folder / "cm2.yaml"
    other.write_text(manifest.read_text().replace("demo", "demo2"))
    assert "configmap/demo2 created" in cluster.kubectl("create", "-f", str(other))
    assert "serverside-applied" in cluster.kubectl("apply", "--server-side", "-f", str(other))


def test_create_deployment_edit_and_explain(cluster: Cluster) -> None:
    assert "created" in cluster.kubectl("create", "deployment", "web", "--image=nginx:1", "--replicas=2")
    editor = cluster.folder / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/nginx:1/nginx:2/' \"$1\"\n")
    editor.chmod(0o755)
    assert "edited" in cluster.kubectl("edit", "deployment", "web", editor=str(editor))
    wide = cluster.kubectl("get", "deployment", "web", "-o", "wide")
    assert "nginx:2" in wide and "0/2" in wide
    explained = cluster.kubectl("explain", "deployment.spec.strategy")
    assert "DeploymentStrategy" in explained and "rollingUpdate" in explained


def test_auth_can_i_says_yes(cluster: Cluster) -> None:
    assert cluster.kubectl("auth", "can-i", "delete", "pods").strip() == "yes"


def test_get_watch_prints_changes_in_table_columns(cluster: Cluster) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}
    env.update(KUBECONFIG=str(cluster.kubeconfig), HOME=str(cluster.folder))
    watcher = subprocess.Popen(
        [str(KUBECTL), "get", "configmaps", "-w", "--request-timeout=20s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []
    seen = threading.Event()

    def read() -> None:
        assert watcher.stdout is not None
        for line in watcher.stdout:
            lines.append(line)
            if line.startswith("watched "):
                seen.set()

    reader = threading.Thread(target=read, name="kubectl-watch-reader")
    reader.start()
    try:
        cluster.kubectl("create", "configmap", "watched", "--from-literal=x=1")
        assert seen.wait(20), lines
    finally:
        watcher.terminate()
        watcher.communicate(timeout=10)
        reader.join(10)
    assert lines[0].split() == ["NAME", "DATA", "AGE"]
