"""pytest plugin (entry point ``cloudcoil_cache``): fake_api_server and fake_kubeconfig fixtures."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from ._server import FakeAPIServer

__all__ = ["fake_api_server", "fake_kubeconfig"]


@pytest.fixture
def fake_api_server() -> Iterator[FakeAPIServer]:
    """A started ``FakeAPIServer`` with test-friendly timings; stopped (threads joined) afterwards.

    Bookmarks every 1 s, watches without ``timeoutSeconds`` end after 5-10 s, and a future
    resourceVersion is answered with 504 after 0.1 s.
    """
    server = FakeAPIServer(
        bookmark_interval=1.0, watch_timeout_range=(5.0, 10.0), too_large_wait=0.1
    )
    with server:
        yield server


@pytest.fixture
def fake_kubeconfig(fake_api_server: FakeAPIServer, tmp_path: Path) -> Path:
    """A kubeconfig file (namespace ``default``) whose current context is ``fake_api_server``."""
    return Path(fake_api_server.write_kubeconfig(tmp_path / "kubeconfig"))
