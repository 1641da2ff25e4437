"""examples/controller.py runs as a process: copies of mirror=yes ConfigMaps appear and follow their source."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "controller.py"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    env.update(extra)
    return env


def test_the_example_mirrors_the_labelled_configmaps_of_its_embedded_fake_cluster():
    done = subprocess.run(
        # 5 s of running: lease, sync and two reconciles need well under 1 s, but 2 s was once too
        # short on 2 cores shared by two test workers and other processes
        [sys.executable, str(EXAMPLE), "--duration", "5", "--health-port", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert "copy default/limits-copy {'cpu': '2'}" in lines
    assert "copy default/settings-copy {'color': 'blue'}" in lines
    assert not [line for line in lines if "private-copy" in line]  # not labelled: left alone
    assert "released the Lease" in done.stderr


def test_the_example_against_a_cluster_follows_changes_and_stops_on_sigterm(fake_api_server, fake_kubeconfig):
    def request(verb: str, name: str):
        return fake_api_server.wait_for_request(
            lambda r: (
                r.verb == verb
                and r.path.endswith(f"/configmaps{'/' + name if verb != 'create' else ''}")
                and (verb != "create" or f'"{name}"'.encode() in (r.body or b""))
            ),
            timeout=60,
            served=True,  # logged on arrival: wait until the server has applied it too
        )

    fake_api_server.create(
        "configmaps", {"metadata": {"name": "app", "labels": {"mirror": "yes"}}, "data": {"v": "1"}}, "default"
    )
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLE), "--health-port", "0", "--identity", "example"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(KUBECONFIG=str(fake_kubeconfig)),
    )
    try:
        request("create", "app-copy")
        fake_api_server.patch("configmaps", "app", {"data": {"v": "2"}}, "default")
        request("update", "app-copy")
        assert fake_api_server.get("configmaps", "app-copy", "default")["data"] == {"v": "2"}
        copy = fake_api_server.get("configmaps", "app-copy", "default")
        app = fake_api_server.get("configmaps", "app", "default")
        assert copy["metadata"]["ownerReferences"][0]["uid"] == app["metadata"]["uid"]
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    assert "copy default/app-copy {'v': '2'}" in out.splitlines()
    lease = fake_api_server.get("leases.coordination.k8s.io", "configmap-mirror", "default")
    assert not lease["spec"].get("holderIdentity")  # released on SIGTERM
