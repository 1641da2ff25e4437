"""The command line (``cloudcoil-cache``, ``python -m cloudcoil_cache``): demo, get, status, serve, real."""

from cloudcoil_cache.cli._app import build_parser, main

__all__ = ["build_parser", "main"]
