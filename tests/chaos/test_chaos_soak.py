"""Issue 8 §E: a seeded chaos soak (writes + every fault of the fake server) must leave every cache and
every handler log equal to the server, with events in order, no hot loop and no thread behind.

The long run is ``benchmarks/chaos.py``; the harness is ``chaos_harness.py`` beside this file.
"""

from __future__ import annotations

import pytest
from chaos_harness import FAULT_KINDS, ChaosSettings, format_report, run_chaos

#: The CI run: every fault kind once per seed, about 400 writes (a few seconds per seed).
SHORT = dict(events=400, faults=len(FAULT_KINDS))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_chaos_soak_converges_in_order_without_hot_loops(seed, tmp_path):
    report = run_chaos(ChaosSettings(seed=seed, **SHORT), tmp_path)
    assert sum(report.faults.values()) == len(FAULT_KINDS) and set(report.faults) == set(FAULT_KINDS)
    assert report.events >= SHORT["events"]
    assert report.unauthorized >= 3  # the 401 episode really refused every informer
    assert report.requests["pods"]["relist"] >= 1 and report.requests["pods"]["rewatch"] >= 1
    assert all(n > 0 for n in report.handler_events.values())
    assert report.violations == [], format_report(report)
