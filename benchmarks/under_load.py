"""Issue 32's done-criterion: the chaos endgame and the chaos, trust and hostile suites, 10 runs in a row, loaded.

    .venv/bin/python benchmarks/under_load.py                       # 10 runs, 3 busy processes
    .venv/bin/python benchmarks/under_load.py --runs 3 --busy 5     # heavier, shorter
    .venv/bin/python benchmarks/under_load.py -- -k endgame         # pytest arguments after --

Each run is one pytest process over ``tests/chaos tests/trust tests/hostile`` (the endgame is
``tests/chaos/test_chaos_endgame.py``), with ``--busy`` busy processes (``tests/cpu_load.py``: a pure-Python
loop each) beside it for the whole run; the suite's own per-module load is turned off meanwhile
(``CLOUDCOIL_TEST_CPU_LOAD=0``) so the load is the same from the first test to the last. Prints, per run,
PASS or FAIL with pytest's summary, the wall time, the load average and the failing tests, then how many
runs passed in a row. Exits 0 only if every run passed. The output of every run is kept in ``--log-dir``.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from cpu_load import ENV, BusyLoad  # noqa: E402

SUITES = ("tests/chaos", "tests/trust", "tests/hostile")
_SUMMARY = re.compile(r"^=*\s*(\d+ (passed|failed|error).*?)\s*=*$")


def summary_of(output: str) -> str:
    """pytest's closing line ("4 passed, 1 xfailed in 30.2s"), or the last line there is."""
    lines = [line for line in output.splitlines() if line.strip()]
    for line in reversed(lines):
        found = _SUMMARY.match(line.strip())
        if found:
            return found.group(1)
    return lines[-1] if lines else "(no output)"


def failures_of(output: str) -> list[str]:
    return [line.split(" ", 1)[1] for line in output.splitlines() if line.startswith(("FAILED ", "ERROR "))]


def run_once(index: int, busy: int, pytest_args: list[str], log_dir: Path, timeout: float) -> bool:
    env = {**os.environ, ENV: "0"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SUITES, *pytest_args]
    started = time.monotonic()
    with BusyLoad(busy):
        try:
            done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
            output, code = done.stdout + done.stderr, done.returncode
        except subprocess.TimeoutExpired as exc:
            output, code = f"{exc.stdout or ''}{exc.stderr or ''}\n(killed after {timeout:.0f}s)", -1
        load = os.getloadavg()[0]
    wall = time.monotonic() - started
    log = log_dir / f"run-{index:02d}.log"
    log.write_text(output)
    ok = code == 0
    print(
        f"run {index:2d}: {'PASS' if ok else 'FAIL'}  {summary_of(output)}  wall {wall:.0f}s  load {load:.1f}",
        flush=True,
    )
    if not ok:
        for failure in failures_of(output)[:10]:
            print(f"         {failure}", flush=True)
        print(f"         output: {log}", flush=True)
    return ok


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # inside subprocess.run: it kills the pytest run, then the load stops


def main() -> int:
    # Stoppable from anywhere, even started in the background (where SIGINT is ignored): the pytest run
    # and the busy processes end with this script.
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs in a row (default 10)")
    parser.add_argument("--busy", type=int, default=3, help="busy processes beside each run (default 3)")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds one run may take (default 1200)")
    parser.add_argument("--log-dir", type=Path, default=None, help="where each run's output is kept")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="under-load-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    print(
        f"{args.runs} runs of {' '.join(SUITES)} with {args.busy} busy processes beside them "
        f"on {os.cpu_count()} CPUs; logs in {log_dir}",
        flush=True,
    )
    passed = in_a_row = best = 0
    for index in range(1, args.runs + 1):
        if run_once(index, args.busy, args.pytest_args, log_dir, args.timeout):
            passed += 1
            in_a_row += 1
            best = max(best, in_a_row)
        else:
            in_a_row = 0
    print(f"{passed}/{args.runs} runs passed; {best} in a row")
    return 0 if passed == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
