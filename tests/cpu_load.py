"""Busy processes beside a test tier: the trust, chaos and hostile tiers run with the CPU contended, as in production.

An idle machine hides races: a request that lands before another only because nothing else wanted the CPU.
``BusyLoad(n)`` starts ``n`` subprocesses running a pure-Python busy loop (each wants a whole core) and,
on ``stop()``, kills and reaps every one of them. The tiers' ``conftest.py`` files put each of their test
modules under one load (a module-scoped autouse fixture) and ``pytest_collection_modifyitems`` in
``tests/conftest.py`` groups those tiers onto one pytest-xdist worker (``--dist loadgroup``), so the
load is started once per module, on one worker, never twice at once.

``CLOUDCOIL_TEST_CPU_LOAD`` sets how many busy processes (default 3; ``0`` turns the load off).
A busy process also ends by itself once its parent is gone (Linux: ``PR_SET_PDEATHSIG``; elsewhere it
notices that its parent changed): a killed pytest leaves no loop spinning.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from typing import Callable

__all__ = ["BUSY_LOOP", "ENV", "DEFAULT_PROCESSES", "XDIST_GROUP", "BusyLoad", "load_from_env"]

#: The environment variable that sets the number of busy processes.
ENV = "CLOUDCOIL_TEST_CPU_LOAD"
#: Busy processes beside a loaded tier unless ``CLOUDCOIL_TEST_CPU_LOAD`` says otherwise.
DEFAULT_PROCESSES = 3
#: The pytest-xdist group of the loaded tiers (one worker runs them all).
XDIST_GROUP = "cpu-load"

#: The loop each busy process runs: pure Python (it holds its own GIL, never sleeps), checking every
#: million rounds or so that its parent (argv[1]) is still its parent.
BUSY_LOOP = """\
import os, sys
parent = int(sys.argv[1])
n = 0
while True:
    n += 1
    if not n & 0xFFFFF and os.getppid() != parent:
        break
"""

_PR_SET_PDEATHSIG = 1
_SIGKILL = 9
_STOP_SECONDS = 5.0


def load_from_env(environ: dict[str, str] | None = None) -> int:
    """The number of busy processes ``CLOUDCOIL_TEST_CPU_LOAD`` asks for (default 3, 0: none).

    Raises ``ValueError`` naming the variable for anything but a whole number from 0 to 64.
    """
    env = os.environ if environ is None else environ
    text = env.get(ENV, "").strip()
    if not text:
        return DEFAULT_PROCESSES
    try:
        count = int(text)
    except ValueError:
        count = -1
    if not 0 <= count <= 64:
        raise ValueError(f"{ENV}={text!r}: expected the number of busy processes, a whole number from 0 to 64")
    return count


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGKILL when its parent dies (Linux), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None

    def setup() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0)

    return setup


class BusyLoad:
    """``n`` busy subprocesses while it is started: ``with BusyLoad(3): ...``."""

    def __init__(self, processes: int) -> None:
        if processes < 0:
            raise ValueError(f"BusyLoad: processes must be >= 0, got {processes}")
        self.processes = processes
        self._children: list[subprocess.Popen[bytes]] = []

    @property
    def pids(self) -> list[int]:
        """The process ids of the busy processes running now."""
        return [child.pid for child in self._children if child.poll() is None]

    def start(self) -> BusyLoad:
        """Start the busy processes (a second ``start()`` without ``stop()`` is an error)."""
        if self._children:
            raise RuntimeError("BusyLoad is already started")
        try:
            for _ in range(self.processes):
                self._children.append(
                    subprocess.Popen(
                        [sys.executable, "-c", BUSY_LOOP, str(os.getpid())],
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        preexec_fn=_die_with_parent(),  # only prctl() before the exec
                    )
                )
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Kill every busy process and reap it (waits until each one is gone)."""
        children, self._children = self._children, []
        for child in children:
            if child.poll() is None:
                child.kill()
        for child in children:
            child.wait(_STOP_SECONDS)

    def __enter__(self) -> BusyLoad:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
