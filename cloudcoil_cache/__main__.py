"""``python -m cloudcoil_cache``: the command line (see ``cloudcoil_cache.cli``)."""

from __future__ import annotations

import sys

from cloudcoil_cache.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
