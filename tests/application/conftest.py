"""Fixtures of the Application tests: a Config on the fake API server."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from cloudcoil_cache.client import Config


@pytest.fixture
def config(fake_kubeconfig: Path) -> Iterator[Config]:
    """An uncached Config on ``fake_api_server`` (namespace ``default``)."""
    cfg = Config(kubeconfig=str(fake_kubeconfig), namespace="default")
    yield cfg
    cfg.close()
