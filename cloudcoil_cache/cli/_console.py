"""Terminal output: ``rich`` (the ``cli`` extra) on a terminal, plain text when piped or without rich."""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

__all__ = ["interactive", "rich_console", "rich_available"]


def rich_available() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def interactive(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (stdout) is a terminal that gets the live, coloured view."""
    stream = stream or sys.stdout
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def rich_console(stream: TextIO | None = None) -> Any:
    """A ``rich.console.Console`` on ``stream`` (stdout), or None when rich is missing or it is not a terminal."""
    if not interactive(stream) or not rich_available():
        return None
    from rich.console import Console

    return Console(file=stream or sys.stdout)
