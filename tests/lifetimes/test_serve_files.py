"""``serve --tls --token``: the kubeconfig holding the token and the TLS key are 0600, and gone after SIGTERM."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_serve_writes_its_secrets_owner_only_and_removes_them_on_sigterm(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("an older file, readable by all\n")
    kubeconfig.chmod(0o644)  # replaced while serve runs (0600), and put back when it exits
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cloudcoil_cache",
            "serve",
            "--kubeconfig",
            str(kubeconfig),
            "--tls",
            "--token",
            "s3cret-t0ken",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()  # printed once the files are written
        assert url.startswith("https://127.0.0.1:"), proc.stderr.read() if proc.stderr else ""
        assert yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"] == "s3cret-t0ken"
        assert _mode(kubeconfig) == 0o600
        keys = list(temp.glob("cloudcoil-fake-tls-*/*.key"))
        assert keys, list(temp.rglob("*"))
        assert {_mode(key) for key in keys} == {0o600}
        assert {_mode(folder) for folder in temp.iterdir()} == {0o700}
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    # a user's own file at --kubeconfig (even ~/.kube/config) comes back as it was
    assert kubeconfig.read_text() == "an older file, readable by all\n" and _mode(kubeconfig) == 0o644
    assert list(temp.iterdir()) == []  # the key, the certificates and their folder
    assert not list(tmp_path.glob(".kubeconfig.*"))  # no temporary file of the atomic write left over


def test_a_kubeconfig_the_fake_writes_is_owner_only(tmp_path: Path) -> None:
    from cloudcoil_cache.testing import FakeAPIServer

    with FakeAPIServer(expected_token="t0ken") as server:
        path = Path(server.write_kubeconfig(tmp_path / "kc"))
    assert _mode(path) == 0o600
    assert yaml.safe_load(path.read_text())["users"][0]["user"]["token"] == "t0ken"
