"""``demo``: the README's main job, plain when piped and live on a terminal, ended by --duration or Ctrl-C."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

from _cli_support import ROOT


def test_demo_piped_prints_plain_progress_faults_recovery_and_a_verified_end(cli):
    result = cli("demo", "--pods", "300", "--duration", "7", "--fault-every", "1.2", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "\x1b[" not in out  # no terminal codes when stdout is not a terminal
    assert "synced: 300 pods" in out
    assert "fault: watch connection dropped" in out and "recovered: watching again" in out
    assert "fault: watch stalled, history compacted" in out
    assert "verified: the cache holds exactly the server's" in out
    assert out.rstrip().endswith("every thread were shut down and joined")


def test_the_demo_ends_on_a_recovered_informer_never_right_after_a_fault(cli):
    # A fault a second: without a quiet end the 503 fault (seconds of backoff) lands just before the end
    result = cli("demo", "--pods", "100", "--duration", "6", "--fault-every", "1", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    faults = [i for i, line in enumerate(lines) if line.startswith("fault: ")]
    recovered = [i for i, line in enumerate(lines) if line.startswith("recovered: ")]
    assert faults and recovered and recovered[-1] > faults[-1], result.stdout
    assert "state=current" in [line for line in lines if line.startswith("t=")][-1], result.stdout


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


class _Terminal:
    """A pseudo-terminal of 140x50; what the program writes to it is collected on a named thread."""

    def __init__(self) -> None:
        self.master, self.slave = pty.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 140, 0, 0))
        self.output = bytearray()
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._read, name="test-pty-reader", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # EIO: every slave end is closed
                data = b""
            with self._cond:
                if not data:
                    self.output += b"\0EOF"
                    self._cond.notify_all()
                    return
                self.output += data
                self._cond.notify_all()

    def text(self) -> str:
        with self._cond:
            return self.output.decode("utf-8", "replace")

    def wait_for(self, *needles: str, timeout: float = 60) -> str:
        with self._cond:
            ok = self._cond.wait_for(
                lambda: all(n.encode() in self.output for n in needles) or b"\0EOF" in self.output, timeout
            )
        text = self.text()
        assert ok and all(n in text for n in needles), f"missing {needles} in:\n{text[-3000:]}"
        return text

    def close(self) -> None:
        self._thread.join(10)
        os.close(self.master)


def _become_terminal_owner() -> None:  # runs in the child: its own session, the pty as controlling terminal
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def test_demo_on_a_terminal_shows_the_live_view_and_ctrl_c_ends_it_cleanly(cli_env):
    terminal = _Terminal()
    env = dict(cli_env, TERM="xterm-256color")
    env.pop("COLUMNS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "cloudcoil_cache", "demo", "--pods", "300", "--duration", "0", "--fault-every", "1"],
        cwd=ROOT,
        env=env,
        stdin=terminal.slave,
        stdout=terminal.slave,
        stderr=terminal.slave,
        preexec_fn=_become_terminal_owner,
    )
    os.close(terminal.slave)
    try:
        screen = terminal.wait_for(
            "initial LIST",
            "Pod informer",
            "events seen by the handlers",
            "MODIFIED",
            "FAULT",
            "RECOVERED",
            "Ctrl-C to stop",
        )
        assert "\x1b[" in screen  # drawn with terminal codes
        assert _children(proc.pid) == []  # the demo runs in one process: nothing to leave behind
        os.write(terminal.master, b"\x03")  # Ctrl-C, typed on the terminal
        assert proc.wait(30) == 0, terminal.text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        terminal.close()
    end = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal.text())
    assert "verified: the cache holds exactly the server's" in end
    assert "every thread were shut down and joined" in end
    assert "Traceback" not in end and "threads still running" not in end
