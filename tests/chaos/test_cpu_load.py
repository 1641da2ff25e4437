"""The busy processes beside the loaded tiers (``tests/cpu_load.py``): they run, burn CPU, and none is left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import pytest
from cpu_load import BUSY_LOOP, DEFAULT_PROCESSES, ENV, BusyLoad, load_from_env

_PROC = Path("/proc")


def _cpu_ticks(pid: int) -> int:
    """User + system clock ticks the process has used (Linux /proc)."""
    fields = (_PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _not_running(pid: int) -> bool:
    """Gone, or a zombie (dead; re-parented to an init that has not reaped it yet)."""
    try:
        state = (_PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def _poll(predicate: Callable[[], bool], timeout: float) -> bool:
    """Re-check ``predicate`` every 10 ms (a wait on an Event) until it holds or ``timeout`` passed."""
    tick = threading.Event()
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        tick.wait(0.01)
    return True


def test_this_tier_runs_under_the_load_the_environment_asks_for(cpu_load):
    assert len(cpu_load.pids) == load_from_env()


@pytest.mark.skipif(not _PROC.is_dir(), reason="reads CPU time from /proc")
def test_busy_processes_burn_cpu_and_are_killed_and_reaped_at_stop():
    with BusyLoad(2) as load:
        pids = load.pids
        assert len(pids) == 2
        assert _poll(lambda: all(_cpu_ticks(pid) >= 5 for pid in pids), 30), "the busy loops used no CPU"
    assert load.pids == []
    for pid in pids:
        assert _gone(pid)  # killed and reaped: not even a zombie is left
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_no_processes_when_the_count_is_zero_and_a_second_start_is_refused():
    with BusyLoad(0) as load:
        assert load.pids == []
    with BusyLoad(1) as load:
        with pytest.raises(RuntimeError, match="already started"):
            load.start()
    with pytest.raises(ValueError, match=">= 0"):
        BusyLoad(-1)


def test_the_count_comes_from_the_environment_and_bad_values_name_the_variable():
    assert load_from_env({}) == DEFAULT_PROCESSES == 3
    assert load_from_env({ENV: "0"}) == 0
    assert load_from_env({ENV: " 5 "}) == 5
    for bad in ("x", "-1", "1.5", "65"):
        with pytest.raises(ValueError, match=ENV):
            load_from_env({ENV: bad})


def test_a_busy_loop_whose_parent_is_not_the_one_it_was_given_ends_by_itself():
    """The portable guard: an orphaned loop (re-parented) sees another parent and exits."""
    child = subprocess.Popen([sys.executable, "-c", BUSY_LOOP, "1"])  # "1": not its parent
    try:
        assert child.wait(timeout=30) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


@pytest.mark.skipif(not _PROC.is_dir(), reason="Linux: the busy loops die with their parent")
def test_busy_processes_die_with_a_parent_that_is_killed(tmp_path):
    """A pytest killed mid-run (SIGKILL: no teardown) leaves no busy loop spinning."""
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); from cpu_load import BusyLoad; "
        "load = BusyLoad(2).start(); print(*load.pids, flush=True); sys.stdin.read()"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script, str(Path(__file__).resolve().parents[1])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert parent.stdout is not None
        pids = [int(p) for p in parent.stdout.readline().split()]
        assert len(pids) == 2 and not any(_not_running(pid) for pid in pids)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        assert _poll(lambda: all(_not_running(pid) for pid in pids), 30), f"busy loops left running: {pids}"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
