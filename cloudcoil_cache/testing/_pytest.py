"""pytest plugin (entry point ``cloudcoil_cache``): fake_api_server, fake_kubeconfig, real_api_server fixtures."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from ._real import RealAPIServer, find_assets
from .apiserver.server import FakeAPIServer

__all__ = ["fake_api_server", "fake_kubeconfig", "pytest_configure", "real_api_server"]


@pytest.fixture
def fake_api_server() -> Iterator[FakeAPIServer]:
    """A started ``FakeAPIServer`` with test-friendly timings; stopped (threads joined) afterwards.

    Bookmarks every 1 s, watches without ``timeoutSeconds`` end after 5-10 s, and a future
    resourceVersion is answered with 504 after 0.1 s.
    """
    server = FakeAPIServer(bookmark_interval=1.0, watch_timeout_range=(5.0, 10.0), too_large_wait=0.1)
    with server:
        yield server


@pytest.fixture
def fake_kubeconfig(fake_api_server: FakeAPIServer, tmp_path: Path) -> Path:
    """A kubeconfig file (namespace ``default``) whose current context is ``fake_api_server``."""
    return Path(fake_api_server.write_kubeconfig(tmp_path / "kubeconfig"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "real: needs a real kube-apiserver and etcd (the real_api_server fixture)")


@pytest.fixture(scope="session")
def real_api_server() -> Iterator[RealAPIServer]:
    """A ``RealAPIServer`` (kube-apiserver + etcd on loopback) shared by the session; skips the test
    with the reason when no binaries are found (see ``RealAPIServer``)."""
    try:
        find_assets()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    with RealAPIServer() as server:
        yield server
