"""The security suite reuses the loopback HTTP servers of tests/http."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "http"))
