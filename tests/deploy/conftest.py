"""Fixtures of the deploy tier: the fake API server the servers under test talk to."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from cluster_support import seed

from cloudcoil_cache.testing import FakeAPIServer


@pytest.fixture
def cluster_pods() -> int:
    """How many pods ``cluster`` seeds in "default" (a module may override it)."""
    return 10


@pytest.fixture
def cluster(tmp_path: Path, cluster_pods: int) -> Iterator[tuple[FakeAPIServer, str]]:
    """``(server, kubeconfig)``: a fake API server in this process, seeded, and a kubeconfig for it."""
    with FakeAPIServer() as server:
        seed(server, cluster_pods)
        yield server, str(server.write_kubeconfig(tmp_path / "kubeconfig"))
