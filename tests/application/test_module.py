"""``python -m <module> run|manifests`` of a module ending in ``app.main()``, in a child process."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import urllib.error
import urllib.request
from pathlib import Path

import yaml

MODULE = textwrap.dedent(
    """
    from cloudcoil_cache.application import Application
    from cloudcoil_cache.controller import Controller
    from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap

    mirror = Controller(ConfigMap, lambda cm, ctx: None, name="mirror").owns(ConfigMap)
    app = Application("mirror", mirror, leader_election=True, image="example.com/mirror:1")

    if __name__ == "__main__":
        app.main()
    """
)


def _module(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "mirror_operator.py").write_text(MODULE)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_manifests_names_the_module_it_was_run_as(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "mirror_operator", "manifests", "-n", "ops"],
        env=_module(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    docs = list(yaml.safe_load_all(out))
    assert [d["kind"] for d in docs] == ["ServiceAccount", "Role", "RoleBinding", "Deployment"]
    container = docs[-1]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][:4] == ["python", "-m", "mirror_operator", "run"]


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
            return answer.status == 200
    except (urllib.error.URLError, OSError):
        return False


def test_run_serves_until_sigterm_then_exits_0(fake_api_server, fake_kubeconfig, tmp_path):
    env = _module(tmp_path)
    env["KUBECONFIG"] = str(fake_kubeconfig)
    port = _free_port()
    child = subprocess.Popen(
        [sys.executable, "-m", "mirror_operator", "run", "--health-port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        pause = threading.Event()

        def leading() -> bool:
            leases = fake_api_server.list("leases.coordination.k8s.io", "default")
            return any(x["metadata"]["name"] == "mirror" and x["spec"].get("holderIdentity") for x in leases)

        for _ in range(300):  # another process: nothing to wait on but its port and the Lease (a bounded poll)
            if (_healthy(port) and leading()) or child.poll() is not None:
                break
            pause.wait(0.1)
        assert _healthy(port) and leading(), child.poll()
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 0, err
    released = fake_api_server.get("leases.coordination.k8s.io", "mirror", "default")
    assert not released["spec"].get("holderIdentity")  # a graceful stop released the Lease
