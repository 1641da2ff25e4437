"""``status``, ``serve`` and ``real``, and the top-level usage, run as a user runs them."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

from _cli_support import ROOT, LineReader, one_line_error

import cloudcoil_cache
from cloudcoil_cache import testing
from cloudcoil_cache.testing import FakeAPIServer


def test_status_syncs_each_kind_and_prints_a_row_per_informer(cli):
    result = cli("status", "pods", "deploy", "cm", "--fake")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "cache: ready=True mode=fallback informers=3 objects=32"
    assert lines[1].split()[:6] == ["KIND", "NAMESPACE", "SELECTOR", "SYNCED", "STATE", "OBJECTS"]
    rows = {line.split()[0]: line.split() for line in lines[2:]}
    assert set(rows) == {"Pod", "Deployment", "ConfigMap"}
    assert rows["Pod"][1:6] == ["*", "-", "yes", "current", "24"]
    assert rows["Deployment"][5] == "4" and rows["ConfigMap"][5] == "4"


def test_status_of_a_kind_that_cannot_be_read_reports_it_and_fails(cli, tmp_path):
    with FakeAPIServer() as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        server.fail_next(100, 403, verb="list", path="/configmaps")
        result = cli("status", "pods", "configmaps", "--kubeconfig", kubeconfig, "--timeout", "10")
    assert result.returncode == 1
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[2:]}
    assert "yes" in rows["Pod"].split() and "no" in rows["ConfigMap"].split()
    assert "Forbidden" in rows["ConfigMap"]
    assert "error: not every informer synced" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1  # the one line: no log lines of the library beside it


def test_a_server_throttling_until_the_deadline_is_reported_as_throttling(cli, tmp_path):
    with FakeAPIServer() as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        server.fail_next(1000, 429, verb="list", path="/pods", retry_after=1)
        result = cli("get", "po", "--kubeconfig", kubeconfig, "--timeout", "3")
    assert result.returncode == 1
    assert one_line_error(result).startswith("error: the API server kept refusing GET /api/v1/namespaces/default/pods")
    assert "429 TooManyRequests" in result.stderr


def test_serve_runs_the_fake_server_until_ctrl_c(cli_env, tmp_path: Path):
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cloudcoil_cache", "serve", "--kubeconfig", str(kubeconfig), "--pods", "5", "-v"],
        cwd=ROOT,
        env=cli_env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        url = LineReader(proc.stdout).until("http://")[0]
        assert url.startswith("http://127.0.0.1:") and kubeconfig.exists()
        env = dict(cli_env, KUBECONFIG=str(kubeconfig))
        listed = subprocess.run(
            [sys.executable, "-m", "cloudcoil_cache", "get", "po", "-A", "-o", "name"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert listed.returncode == 0 and len(listed.stdout.splitlines()) == 5, listed.stderr
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 0
        assert proc.stderr is not None and "GET /api/v1/pods" in proc.stderr.read()  # -v: every request
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


def test_serve_names_a_busy_port_and_a_missing_kubeconfig_folder(cli, tmp_path: Path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = cli("serve", "--kubeconfig", str(tmp_path / "kc"), "--port", str(port))
    assert busy.returncode == 1
    assert one_line_error(busy).startswith(f"error: cannot listen on 127.0.0.1:{port}")
    missing = cli("serve", "--kubeconfig", str(tmp_path / "none" / "kc"))
    assert missing.returncode == 2
    assert one_line_error(missing) == f"error: --kubeconfig {tmp_path / 'none' / 'kc'}: no folder {tmp_path / 'none'}"
    assert not (tmp_path / "kc").exists()


def test_real_delegates_to_the_real_server_command_or_says_it_is_missing(cli):
    result = cli("real", "--help")
    if hasattr(testing, "RealAPIServer"):
        assert result.returncode == 0, result.stderr
        assert "--kubeconfig" in result.stdout
    else:
        assert result.returncode == 2
        assert "real API server is not available" in one_line_error(result)


def test_usage_lists_every_command(cli):
    result = cli("--help")
    assert result.returncode == 0
    for command in ("demo", "get", "status", "serve", "real"):
        assert command in result.stdout
    missing = cli()
    assert missing.returncode == 2 and "required" in missing.stderr


def test_version_prints_the_librarys_version(cli):
    result = cli("--version")
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        f"cloudcoil_cache {cloudcoil_cache.__version__}\n",
        "",
    )
    assert "--version" in cli("--help").stdout
