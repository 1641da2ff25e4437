"""The fake API server starts, serves keep-alive HTTP/1.1, writes kubeconfigs and stops cleanly."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests
import yaml
from fake_server_helpers import RawResponse

from cloudcoil_cache.testing import FakeAPIServer


def test_a_started_server_listens_on_loopback_at_a_random_port() -> None:
    with FakeAPIServer() as server:
        assert server.url.startswith("http://127.0.0.1:")
        assert server.port > 0
        assert requests.get(server.url + "/version", timeout=5).json()["gitVersion"] == "v1.30.2"


def test_stop_refuses_new_connections_and_ends_its_threads() -> None:
    server = FakeAPIServer().start()
    port = server.port
    requests.get(server.url + "/api", timeout=5)
    server.stop()
    assert not [t for t in threading.enumerate() if t.name.startswith(f"fake-apiserver-{port}")]
    assert not [t for t in threading.enumerate() if f"conn-{port}-" in t.name]
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/api", timeout=5)


def test_stop_cuts_open_watches_without_a_terminating_chunk() -> None:
    server = FakeAPIServer().start()
    raw = RawResponse(server.port, "/api/v1/pods?watch=true&timeoutSeconds=30")
    try:
        server.wait_for_watches(1)
        server.stop()
        with pytest.raises(EOFError):
            raw.chunk()
    finally:
        raw.close()
        server.stop()


def test_stop_ends_idle_keep_alive_connections() -> None:
    server = FakeAPIServer().start()
    session = requests.Session()
    session.get(server.url + "/api", timeout=5)  # the pooled connection stays open
    server.stop()
    session.close()


def test_one_keep_alive_connection_serves_several_requests(fake_api_server: FakeAPIServer) -> None:
    with socket.create_connection(("127.0.0.1", fake_api_server.port), timeout=5) as sock:
        file = sock.makefile("rb")
        for _ in range(3):
            sock.sendall(b"GET /api HTTP/1.1\r\nHost: x\r\n\r\n")
            assert file.readline().startswith(b"HTTP/1.1 200")
            length = 0
            while line := file.readline().strip():
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            assert json.loads(file.read(length))["kind"] == "APIVersions"
        file.close()


def test_starting_twice_is_an_error() -> None:
    with FakeAPIServer() as server:
        with pytest.raises(RuntimeError, match="already started"):
            server.start()


def test_write_kubeconfig_points_the_current_context_at_the_server(tmp_path: Path) -> None:
    with FakeAPIServer() as server:
        path = server.write_kubeconfig(tmp_path / "kc", namespace="team-a", token="s3cret")
        config = yaml.safe_load(Path(path).read_text())
    assert config["current-context"] == "fake"
    assert config["clusters"][0]["cluster"]["server"] == server_url_of(config)
    assert config["contexts"][0]["context"]["namespace"] == "team-a"
    assert config["users"][0]["user"] == {"token": "s3cret"}


def server_url_of(config: dict) -> str:
    return config["clusters"][0]["cluster"]["server"]


def test_the_fixtures_give_a_started_server_and_its_kubeconfig(
    fake_api_server: FakeAPIServer, fake_kubeconfig: Path
) -> None:
    config = yaml.safe_load(fake_kubeconfig.read_text())
    assert server_url_of(config) == fake_api_server.url
    assert fake_api_server.bookmark_interval == 1.0


def test_the_expected_token_rejects_other_credentials_with_401() -> None:
    with FakeAPIServer(expected_token="tok-1") as server:
        bad = requests.get(server.url + "/api/v1/pods", headers={"Authorization": "Bearer nope"}, timeout=5)
        good = requests.get(server.url + "/api/v1/pods", headers={"Authorization": "Bearer tok-1"}, timeout=5)
    assert (bad.status_code, bad.json()["reason"], bad.json()["message"]) == (
        401,
        "Unauthorized",
        "Unauthorized",
    )
    assert good.status_code == 200


def test_recorded_requests_hide_the_token_in_their_repr(fake_api_server: FakeAPIServer) -> None:
    requests.get(fake_api_server.url + "/api", headers={"Authorization": "Bearer s3cret"}, timeout=5)
    req = fake_api_server.requests[-1]
    assert req.headers["Authorization"] == "Bearer s3cret"
    assert "s3cret" not in repr(req)


def test_the_cli_serves_seeded_pods_and_stops_on_sigterm(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cloudcoil_cache.testing",
            "serve",
            "--kubeconfig",
            str(kubeconfig),
            "--pods",
            "12",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        pods = requests.get(url + "/api/v1/pods", timeout=5).json()["items"]
        assert len(pods) == 12
        assert len({p["metadata"]["namespace"] for p in pods}) == 4
        assert server_url_of(yaml.safe_load(kubeconfig.read_text())) == url
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_stop_wakes_requests_waiting_for_a_future_resource_version() -> None:
    server = FakeAPIServer(too_large_wait=30.0).start()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            path = f"/api/v1/pods?watch=1&resourceVersion={server.revision + 100}"
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            server.wait_for_request(lambda r: r.verb == "watch")
            start = time.monotonic()
            server.stop()
            assert time.monotonic() - start < 2.0
    finally:
        server.stop()
