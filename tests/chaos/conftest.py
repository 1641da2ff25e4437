"""Every test module of this tier runs with busy processes beside it (``cpu_load``, ``tests/cpu_load.py``)."""

from __future__ import annotations

import pytest
from cpu_load import BusyLoad


@pytest.fixture(scope="module", autouse=True)
def _under_cpu_load(cpu_load: BusyLoad) -> BusyLoad:
    return cpu_load
