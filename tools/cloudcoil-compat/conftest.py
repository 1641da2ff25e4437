"""cc_compat harness: the fixtures cloudcoil's suite gets from its plugin and conftest, over this project's clusters.

cloudcoil's suite gets ``test_config`` (a ``Config`` for a kind/k3d cluster made by its pytest plugin, chosen
with the ``configure_test_cluster`` marker) and ``wait_for_crd_discovery`` (its tests/conftest.py). Here:

* ``CC_TARGET=fake`` (default): every test that asks for ``test_config`` gets a fresh
  ``cloudcoil_cache.testing.FakeAPIServer`` on loopback (default, server-like timings), a kubeconfig for it,
  and the server is stopped (threads joined) after the test.
* ``CC_TARGET=fake CC_FAKE_PROCESS=1``: the same fake, but in a process of its own per test
  (``python -m cloudcoil_cache.testing serve``), so that its objects do not count in the test's gc.
* ``CC_TARGET=real``: one ``cloudcoil_cache.testing.RealAPIServer`` (kube-apiserver + etcd from
  ``KUBEBUILDER_ASSETS`` or the build script's cache folder) for the session, as cloudcoil's suite shares one
  cluster; after each test the namespaces and CRDs the test created are deleted (the cluster is cleaned).
* The ``configure_test_cluster`` marker is accepted and ignored.
* ``test_config`` is ``Config(kubeconfig=...)`` exactly as cloudcoil's plugin builds it, closed after the test.
* Every test is checked for threads it leaves running (after a 5 s join grace); leaks are listed in
  ``$CC_LEAK_LOG`` and as warnings, not failures (they are the library's behaviour, not the test's).

The harness talks to the cluster itself (raw HTTP), never through the library under test.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.request
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

TARGET = os.environ.get("CC_TARGET", "fake")
#: CC_FAKE_PROCESS=1: the fake runs in a process of its own (see _fake_process), not in the test process.
FAKE_PROCESS = os.environ.get("CC_FAKE_PROCESS", "0") == "1"
if TARGET not in ("fake", "real"):
    raise pytest.UsageError(f"CC_TARGET must be 'fake' or 'real', got {TARGET!r}")

_THREAD_GRACE_SECONDS = 5.0


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "configure_test_cluster(**kwargs): cloudcoil's cluster marker (accepted and ignored here)"
    )


def pytest_report_header(config: pytest.Config) -> str:
    return f"cc_compat: CC_TARGET={TARGET} CC_FAKE_PROCESS={int(FAKE_PROCESS)}"


# --------------------------------------------------------------------------- clusters


class _Cluster:
    """What the harness needs of a cluster: a kubeconfig and raw HTTP requests."""

    kubeconfig: str

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        raise NotImplementedError


class _FakeCluster(_Cluster):
    def __init__(self, url: str, kubeconfig: str, token: str | None = None) -> None:
        self.url = url
        self.token = token
        self.kubeconfig = kubeconfig

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode("utf-8", "replace")


class _RealCluster(_Cluster):
    def __init__(self, real: Any, kubeconfig: str) -> None:
        self.real = real
        self.kubeconfig = kubeconfig

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        result: tuple[int, Any] = self.real.request(method, path, body)
        return result


@pytest.fixture(scope="session")
def _real_server() -> Iterator[Any]:
    """The session's RealAPIServer (real mode only); an error, never a skip, when there are no binaries."""
    from cloudcoil_cache.testing import RealAPIServer
    from cloudcoil_cache.testing._real import find_assets

    try:
        find_assets()
    except RuntimeError as exc:
        raise RuntimeError(f"cc_compat harness (CC_TARGET=real): {exc}") from None
    with RealAPIServer() as server:
        yield server


def _names(cluster: _Cluster, path: str) -> set[str]:
    status, body = cluster.request("GET", path)
    if status != 200 or not isinstance(body, dict):
        raise RuntimeError(f"cc_compat harness: GET {path} -> {status}: {str(body)[:300]}")
    return {item["metadata"]["name"] for item in body.get("items") or []}


_NAMESPACES = "/api/v1/namespaces"
_CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture
def cc_cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[_Cluster]:
    """The cluster under test: a fresh fake per test, or the session's real server (cleaned afterwards)."""
    if TARGET == "fake" and FAKE_PROCESS:
        yield from _fake_process(tmp_path)
        return
    if TARGET == "fake":
        from cloudcoil_cache.testing import FakeAPIServer

        server = FakeAPIServer()
        server.start()
        try:
            yield _FakeCluster(server.url, server.write_kubeconfig(tmp_path / "kubeconfig"), server.expected_token)
        finally:
            server.stop()
        return
    real = request.getfixturevalue("_real_server")
    cluster = _RealCluster(real, real.write_kubeconfig(tmp_path / "kubeconfig"))
    namespaces, crds = _names(cluster, _NAMESPACES), _names(cluster, _CRDS)
    yield cluster
    _clean(cluster, namespaces, crds)


#: What the suite creates in its namespaces. kube-apiserver deletes a CRD's objects itself.
_NAMESPACED = (
    "/api/v1/namespaces/{ns}/configmaps",
    "/api/v1/namespaces/{ns}/secrets",
    "/apis/apps/v1/namespaces/{ns}/deployments",
)


def _clean(cluster: _Cluster, namespaces: set[str], crds: set[str]) -> None:
    """Delete the CRDs and namespaces a test made, as the controllers of a full cluster would: the RealAPIServer
    runs no namespace controller, so the namespaces' objects are deleted here and the namespaces finalized."""
    for name in sorted(_names(cluster, _CRDS) - crds):
        cluster.request("DELETE", f"{_CRDS}/{name}")
    for name in sorted(_names(cluster, _NAMESPACES) - namespaces):
        for collection in _NAMESPACED:
            cluster.request("DELETE", collection.format(ns=name))
        cluster.request("DELETE", f"{_NAMESPACES}/{name}")
        status, body = cluster.request("GET", f"{_NAMESPACES}/{name}")
        if status == 200 and isinstance(body, dict):
            body.setdefault("spec", {})["finalizers"] = []
            cluster.request("PUT", f"{_NAMESPACES}/{name}/finalize", body)
    left = sorted(_names(cluster, _NAMESPACES) - namespaces)
    if left:
        warnings.warn(f"cc_compat harness: namespaces not cleaned: {left}", stacklevel=1)


def _fake_process(tmp_path: Path) -> Iterator[_Cluster]:
    """The fake in a process of its own (``python -m cloudcoil_cache.testing serve``), as a cluster is: its objects
    do not count in the test process's gc and it does not share the test's GIL."""
    import subprocess
    import sys

    import yaml

    kubeconfig = tmp_path / "kubeconfig"
    log = open(tmp_path / "fake-server.log", "wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cloudcoil_cache.testing",
            "serve",
            "--kubeconfig",
            str(kubeconfig),
            "--no-namespace-lifecycle",
        ],  # as FakeAPIServer() (the in-process default)
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        pause, deadline = threading.Event(), time.monotonic() + 30
        doc: Any = None
        while not (isinstance(doc, dict) and doc.get("clusters")):
            if proc.poll() is not None or time.monotonic() > deadline:
                err = (tmp_path / "fake-server.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"cc_compat harness: the fake server process did not start: {err}")
            pause.wait(0.05)
            doc = yaml.safe_load(kubeconfig.read_text()) if kubeconfig.exists() else None
        url = doc["clusters"][0]["cluster"]["server"]
        token = (doc["users"][0].get("user") or {}).get("token")
        private = tmp_path / "kubeconfig-test"  # serve removes its file at exit; the test keeps a copy
        private.write_text(kubeconfig.read_text())
        cluster = _FakeCluster(url, str(private), token)
        while cluster.request("GET", "/version")[0] != 200:  # serving (urlopen errors propagate after 30 s)
            if time.monotonic() > deadline:
                raise RuntimeError("cc_compat harness: the fake server process does not answer /version")
            pause.wait(0.05)
        yield cluster
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()


# --------------------------------------------------------------------------- cloudcoil's fixtures


@pytest.fixture
def test_config(cc_cluster: _Cluster) -> Iterator[Any]:
    """cloudcoil's ``test_config``: ``Config(kubeconfig=<the cluster's kubeconfig>)``; closed after the test."""
    from cloudcoil_cache.client import Config

    config = Config(kubeconfig=cc_cluster.kubeconfig)
    yield config
    config.close()


def _api_version_and_kind(resource: Any) -> tuple[str, str]:
    gvk = resource.gvk() if callable(getattr(resource, "gvk", None)) else None
    api_version = getattr(gvk, "api_version", None) or getattr(resource, "api_version", None)
    kind = getattr(gvk, "kind", None) or getattr(resource, "kind", None)
    if not isinstance(api_version, str) or not isinstance(kind, str) or "/" not in api_version:
        raise RuntimeError(
            f"cc_compat harness: wait_for_crd_discovery cannot tell the group/version/kind of {resource!r}"
            f" (gvk()={gvk!r})"
        )
    return api_version, kind


@pytest.fixture
def wait_for_crd_discovery(test_config: Any, cc_cluster: _Cluster) -> Callable[..., None]:
    """cloudcoil's ``wait_for_crd_discovery(resource, timeout=30)``: wait until the server's discovery lists the
    custom resource with its ``status`` and ``scale`` subresources, then ``test_config.refresh_api_resources()``
    (when the library has it) so that the client's own discovery has caught up, as cloudcoil's fixture ensures."""
    from cloudcoil_cache.errors import WaitTimeout

    def wait(resource: Any, timeout: float = 30) -> None:
        api_version, kind = _api_version_and_kind(resource)
        path = f"/apis/{api_version}"
        deadline = time.monotonic() + timeout
        pause = threading.Event()
        while True:
            status, body = cc_cluster.request("GET", path)
            if status == 200 and isinstance(body, dict):
                entries = body.get("resources") or []
                plural = next((r["name"] for r in entries if r.get("kind") == kind and "/" not in r["name"]), None)
                names = {r["name"] for r in entries}
                if plural and {f"{plural}/status", f"{plural}/scale"} <= names:
                    break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WaitTimeout(
                    f"cc_compat harness: discovery did not expose {api_version} {kind} with status and scale "
                    f"within {timeout}s (last GET {path}: {status})"
                )
            pause.wait(min(0.1, remaining))
        refresh = getattr(test_config, "refresh_api_resources", None)
        if callable(refresh):
            refresh()

    return wait


# --------------------------------------------------------------------------- thread hygiene


@pytest.fixture(autouse=True)
def _cc_thread_check(request: pytest.FixtureRequest) -> Iterator[None]:
    """Report threads a test leaves running (joined for a grace period first)."""
    if TARGET == "real" and "test_config" in request.fixturenames:
        request.getfixturevalue("_real_server")  # session-long threads are not the test's
    before = set(threading.enumerate())
    yield
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    deadline = time.monotonic() + _THREAD_GRACE_SECONDS
    for thread in leaked:
        thread.join(max(0.0, deadline - time.monotonic()))
    still = sorted(t.name for t in leaked if t.is_alive())
    if still:
        message = f"{request.node.nodeid}: left running threads: {still}"
        warnings.warn(message, stacklevel=1)
        log = os.environ.get("CC_LEAK_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(message + "\n")
