"""Paths shared by the example tests."""

from __future__ import annotations

from pathlib import Path

__all__ = ["ARTIFACTS", "EXAMPLES"]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"  # screenshots and load figures (git-ignored)
