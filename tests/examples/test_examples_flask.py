"""The Flask example as users run it: under waitress (8 threads) with concurrent clients, and in a browser."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import requests

NAMESPACES = ("default", "payments", "search", "web")
PODS = {ns: tuple(f"{ns}-{i:02d}" for i in range(12)) for ns in NAMESPACES}
CLIENTS = 8
REQUESTS_PER_CLIENT = 100  # 800 requests in all: every path, from every client, many times over


@pytest.fixture
def flask_served(load_example) -> Any:
    """The example app served by waitress (8 threads) from the set_default() cache its import started,
    over a fake cluster of the test's."""
    pytest.importorskip("waitress")
    fake = load_example("_fake_cluster")
    wsgi = load_example("_wsgi")
    with fake.cluster(PODS) as server:
        flask_app = load_example("flask_app")  # imported as a server imports it: its cache starts
        try:
            assert flask_app.config.cache.status().ready
            with wsgi.WaitressThread(flask_app.app, threads=8) as web:
                server.clear_requests()
                yield server, web.url
        finally:
            flask_app.stop()


def _client(url: str, index: int, latencies: list[float], failures: list[str]) -> None:
    namespace = NAMESPACES[index % len(NAMESPACES)]
    paths = [
        f"/api/pods?namespace={namespace}",
        f"/pods/{namespace}/{namespace}-03",
        "/pods?namespace=web",
        "/api/pods",
    ]
    with requests.Session() as session:
        for i in range(REQUESTS_PER_CLIENT):
            path = paths[i % len(paths)]
            t0 = time.perf_counter()
            response = session.get(url + path, timeout=30)
            latencies.append(time.perf_counter() - t0)
            if response.status_code != 200:
                failures.append(f"{path}: {response.status_code}")


def test_concurrent_clients_are_served_from_the_cache_with_no_list(flask_served, artifacts, capsys):
    server, url = flask_served
    first = requests.get(url + "/api/pods", timeout=30).json()
    assert {ns: [p["name"] for p in pods] for ns, pods in first["namespaces"].items()} == {
        ns: list(names) for ns, names in PODS.items()
    }

    latencies: list[float] = []
    failures: list[str] = []
    clients = [
        threading.Thread(target=_client, args=(url, i, latencies, failures), name=f"test-client-{i}")
        for i in range(CLIENTS)
    ]
    started = time.perf_counter()
    for client in clients:
        client.start()
    for client in clients:
        client.join(300)
    elapsed = time.perf_counter() - started
    assert not failures, failures[:5]
    assert len(latencies) == CLIENTS * REQUESTS_PER_CLIENT

    api_reads = [f"{r.verb} {r.path}" for r in server.requests if r.verb in ("list", "get")]
    assert api_reads == []  # 800 requests, and not one LIST (or GET) reached the API server

    cuts = statistics.quantiles(latencies, n=100)
    figures = {
        "requests": len(latencies),
        "clients": CLIENTS,
        "waitress_threads": 8,
        "p50_ms": round(cuts[49] * 1000, 2),
        "p99_ms": round(cuts[98] * 1000, 2),
        "requests_per_s": round(len(latencies) / elapsed),
    }
    (artifacts / "flask-load.json").write_text(json.dumps(figures, indent=2) + "\n")
    with capsys.disabled():
        print(f"\nflask under waitress: {figures} (also in {artifacts / 'flask-load.json'})")


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _headless(browser: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_page_renders_a_table_per_namespace_in_headless_chromium(flask_served, artifacts, capsys):
    browser = _chromium()
    if browser is None:
        pytest.skip("headless Chromium is not installed (Debian: apt-get install -y chromium)")
    server, url = flask_served
    dom = _headless(browser, "--dump-dom", url + "/")
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert "48 pods in 4 namespaces" in html
    for namespace, names in PODS.items():
        table = html.split(f'<table id="pods-{namespace}">', 1)[1].split("</table>", 1)[0]
        assert [cell.split("</td>", 1)[0] for cell in table.split("<tr><td>")[1:]] == list(names)
    assert all(r.verb not in ("list", "get") for r in server.requests)

    screenshot = artifacts / "flask-pods.png"
    screenshot.unlink(missing_ok=True)
    shot = _headless(browser, f"--screenshot={screenshot}", "--window-size=1100,1400", url + "/")
    assert shot.returncode == 0, shot.stderr[-2000:]
    assert screenshot.stat().st_size > 10_000 and screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with capsys.disabled():
        print(f"\nscreenshot of the Flask example's page: {screenshot}")


def test_the_script_serves_under_waitress_until_ctrl_c(tmp_path):
    pytest.importorskip("waitress")
    examples = Path(__file__).resolve().parents[2] / "examples"
    with socket.socket() as probe:  # a free port for the script's --port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    proc = subprocess.Popen(
        [sys.executable, "flask_app.py", "--serve", "--port", str(port)],
        cwd=examples,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith(f"serving on http://127.0.0.1:{port}/")
        answer = requests.get(f"http://127.0.0.1:{port}/api/pods", timeout=30).json()
        assert {ns: [p["name"] for p in pods] for ns, pods in answer["namespaces"].items()} == {
            "default": ["web-0", "web-1"],
            "other": ["web-0"],
        }
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.communicate()
