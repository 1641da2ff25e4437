"""RealAPIServer itself: binaries lookup, kubeconfigs, compaction, restart, kubectl, the CLI, no orphans."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Namespace
from cloudcoil_cache.testing import RealAPIServer
from cloudcoil_cache.testing._real import BUILD_COMMAND, ETCD_VERSION, KUBERNETES_VERSION, find_assets

REPO = Path(__file__).resolve().parents[2]


def _wait_gone(pid: int, timeout: float) -> bool:
    """Wait for a process that is not our child to end: a pidfd becomes readable when it does."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
        return bool(readable)
    finally:
        os.close(fd)


def test_the_pinned_versions_are_the_build_scripts() -> None:
    go_mod = (REPO / "tools" / "real-apiserver" / "go.mod").read_text()
    assert re.search(rf"^\s*k8s\.io/kubernetes {re.escape(KUBERNETES_VERSION)}$", go_mod, re.M)
    assert re.search(rf"^\s*go\.etcd\.io/etcd/server/v3 {re.escape(ETCD_VERSION)}$", go_mod, re.M)
    minor = KUBERNETES_VERSION.split(".")[1]
    patch = KUBERNETES_VERSION.split(".")[2]
    staging = re.findall(r"^\s*(k8s\.io/[a-z-]+) => (k8s\.io/[a-z-]+) (v\S+)$", go_mod, re.M)
    assert len(staging) > 20 and all(a == b and v == f"v0.{minor}.{patch}" for a, b, v in staging)


def test_no_binaries_is_a_runtime_error_naming_every_place_and_the_build_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBEBUILDER_ASSETS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(RuntimeError) as info:
        RealAPIServer(tmp_path / "nothing")
    message = str(info.value)
    assert str(tmp_path / "nothing") in message
    assert "KUBEBUILDER_ASSETS (not set)" in message
    assert str(tmp_path / "cache" / "cloudcoil_cache" / "real-apiserver") in message
    assert BUILD_COMMAND in message


def test_kubebuilder_assets_wins_over_the_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for folder in (tmp_path / "envtest", tmp_path / "cache" / "cloudcoil_cache" / "real-apiserver" / "v1-v3"):
        folder.mkdir(parents=True)
        for name in ("kube-apiserver", "etcd"):
            (folder / name).write_text("#!/bin/sh\n")
            (folder / name).chmod(0o755)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(tmp_path / "envtest"))
    assert find_assets() == tmp_path / "envtest"
    monkeypatch.delenv("KUBEBUILDER_ASSETS")
    assert find_assets() == tmp_path / "cache" / "cloudcoil_cache" / "real-apiserver" / "v1-v3"


def test_admin_and_restricted_kubeconfigs(real: RealAPIServer, namespace: str, tmp_path: Path) -> None:
    admin = Config(kubeconfig=real.write_kubeconfig(tmp_path / "admin", namespace=namespace))
    restricted = Config(kubeconfig=real.write_kubeconfig(tmp_path / "restricted", user="restricted"))
    try:
        assert Namespace.client(admin).get(namespace).metadata.name == namespace
        from cloudcoil_cache.errors import Forbidden

        with pytest.raises(Forbidden, match="restricted"):
            ConfigMap.client(restricted).list(namespace=namespace)
    finally:
        admin.close()
        restricted.close()
    status, body = real.request("GET", "/version")
    assert status == 200 and body["gitVersion"] == KUBERNETES_VERSION


def test_compact_makes_older_revisions_unreadable(real: RealAPIServer, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    status, created = real.request("POST", path, {"metadata": {"name": "a"}})
    assert status == 201
    old = created["metadata"]["resourceVersion"]
    real.request("POST", path, {"metadata": {"name": "b"}})
    revision = real.compact()
    assert revision > int(old) and real.etcd_revision() == revision
    # An exact LIST at the old revision reaches etcd, which has forgotten it.
    status, body = real.request("GET", f"{path}?resourceVersion={old}&resourceVersionMatch=Exact")
    assert status == 410 and body["reason"] == "Expired", body


def test_kubectl_is_a_real_client_of_the_same_server(real: RealAPIServer, namespace: str, tmp_path: Path) -> None:
    if real.kubectl_path is None:
        pytest.skip(f"no kubectl in {real.assets}")
    manifest = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "from-kubectl", "namespace": namespace, "labels": {"a": "b"}},
            "data": {"k": "v"},
        }
    )
    applied = real.kubectl("apply", "--server-side", "-f", "-", input=manifest)
    assert applied.returncode == 0, applied.stderr
    config = Config(kubeconfig=real.write_kubeconfig(tmp_path / "kc", namespace=namespace))
    try:
        got = ConfigMap.client(config).get("from-kubectl")
        assert got.data == {"k": "v"} and got.metadata.labels == {"a": "b"}
        ConfigMap.client(config).patch("from-kubectl", {"data": {"k": "w"}})
    finally:
        config.close()
    listed = real.kubectl("get", "configmaps", "-n", namespace, "-l", "a=b", "-o", "json")
    assert listed.returncode == 0, listed.stderr
    assert [i["data"] for i in json.loads(listed.stdout)["items"]] == [{"k": "w"}]
    denied = real.kubectl("get", "configmaps", "-n", namespace, user="restricted")
    assert denied.returncode != 0 and "forbidden" in denied.stderr.lower()


def _start_cli(tmp_path: Path) -> tuple[subprocess.Popen[str], dict[str, int], Path]:
    kubeconfig = tmp_path / "cli-kubeconfig"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cloudcoil_cache.testing", "real", "--kubeconfig", str(kubeconfig)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    url = proc.stdout.readline().strip()  # printed once the server is ready
    assert url.startswith("https://127.0.0.1:"), (url, proc.stderr.read() if proc.poll() is not None else "")
    line = proc.stderr.readline()
    pids = {name: int(pid) for name, pid in re.findall(r"'([a-z-]+)': (\d+)", line)}
    assert set(pids) == {"etcd", "kube-apiserver"}, line
    return proc, pids, kubeconfig


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs os.pidfd_open (Linux, Python 3.9+)")
def test_cli_serves_until_sigterm_and_its_processes_die_with_it(real: RealAPIServer, tmp_path: Path) -> None:
    proc, pids, kubeconfig = _start_cli(tmp_path)
    try:
        config = Config(kubeconfig=str(kubeconfig))
        try:
            assert Namespace.client(config).get("default").metadata.name == "default"
        finally:
            config.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        for name, pid in pids.items():
            assert _wait_gone(pid, 5), f"{name} ({pid}) outlived the CLI"
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or not hasattr(os, "pidfd_open"), reason="PR_SET_PDEATHSIG is Linux-only"
)
def test_killing_the_python_process_kills_etcd_and_kube_apiserver(real: RealAPIServer, tmp_path: Path) -> None:
    proc, pids, _ = _start_cli(tmp_path)
    workdir = os.readlink(f"/proc/{pids['etcd']}/cwd")  # the server's temporary folder, left behind
    try:
        proc.kill()  # SIGKILL: no Python clean-up runs
        proc.wait(10)
        for name, pid in pids.items():
            assert _wait_gone(pid, 10), f"{name} ({pid}) survived its parent's SIGKILL"
    finally:
        if "cloudcoil-real-apiserver-" in workdir:
            shutil.rmtree(workdir, ignore_errors=True)
        proc.kill()
        proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]


def test_restart_apiserver_keeps_etcd_data_and_the_port(real: RealAPIServer, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    assert real.request("POST", path, {"metadata": {"name": "kept"}})[0] == 201
    before = dict(real.pids)
    started = time.monotonic()
    real.restart_apiserver()
    assert time.monotonic() - started < 60
    after = real.pids
    assert after["etcd"] == before["etcd"] and after["kube-apiserver"] != before["kube-apiserver"]
    status, body = real.request("GET", f"{path}/kept")
    assert status == 200 and body["metadata"]["name"] == "kept"
