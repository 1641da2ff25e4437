"""The long chaos soak of issue 8 §E: 20,000 events and 300 faults against the fake API server, then its figures.

    .venv/bin/python benchmarks/chaos.py                          # seed 1, 20,000 events, 300 faults
    .venv/bin/python benchmarks/chaos.py --seed 7 --events 5000 --faults 60

Same harness as the suite's short run (``tests/chaos/chaos_harness.py``, imported by path): Pods in all
namespaces, ConfigMaps in one namespace with a label selector and a custom resource, each with a sync and an
async handler view; seeded creates, updates, deletes and delete + re-creates; every fault kind of the fake.
Prints events, faults by kind, relists and re-watches and requests per informer, the busiest second, the
request rate in fault-free time, convergence time after the server went quiet, violations (must be 0), wall
time and peak RSS. Exits 1 on any violation.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "chaos"))

from chaos_harness import ChaosSettings, format_report, run_chaos  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--faults", type=int, default=300)
    parser.add_argument("--verbose", action="store_true", help="show the library's warnings while it runs")
    args = parser.parse_args()
    if not args.verbose:
        logging.disable(logging.ERROR)  # every injected fault logs a warning or an error
    settings = ChaosSettings(
        seed=args.seed,
        events=args.events,
        faults=args.faults,
        initial_pods=200,
        initial_configmaps=60,
        initial_widgets=60,
        burst=20,
        converge_timeout=120.0,
    )
    with tempfile.TemporaryDirectory() as tmp:
        report = run_chaos(settings, Path(tmp))
    print(format_report(report))
    return 1 if report.violations else 0


if __name__ == "__main__":
    sys.exit(main())
