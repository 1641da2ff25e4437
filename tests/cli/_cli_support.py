"""Helpers shared by the command-line tests."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import Any

__all__ = ["ROOT", "LineReader", "one_line_error"]

ROOT = Path(__file__).resolve().parents[2]  # the repository: commands run from here


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The single ``error: ...`` line on stderr (asserting there is no traceback)."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


class LineReader:
    """Reads a subprocess's text stream on a named thread; ``until(text)`` waits for a line containing it."""

    def __init__(self, stream: Any) -> None:
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._closed = False
        self._stream = stream
        self._thread = threading.Thread(target=self._read, name="test-line-reader", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in iter(self._stream.readline, ""):
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def until(self, text: str, timeout: float = 30) -> list[str]:
        with self._cond:
            found = self._cond.wait_for(lambda: self._closed or any(text in line for line in self.lines), timeout)
            assert found and any(text in line for line in self.lines), f"{text!r} never printed; got {self.lines}"
            return list(self.lines)

    def join(self, timeout: float = 10) -> None:
        self._thread.join(timeout)
