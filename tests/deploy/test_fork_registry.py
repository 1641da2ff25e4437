"""The fork hooks' registry holds its objects weakly and does not grow with objects that are gone."""

from __future__ import annotations

from cloudcoil_cache import _fork
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config


def test_configs_made_and_dropped_leave_no_growing_registry() -> None:
    for _ in range(2000):
        Config(server="http://127.0.0.1:1", cache=Cache()).close()
    assert len(_fork._hooks) < 1000
