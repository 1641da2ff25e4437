"""AppConfig of the ``pods`` app (its cache starts in ``podsite/wsgi.py``: in serving processes only)."""

from __future__ import annotations

from django.apps import AppConfig


class PodsConfig(AppConfig):
    name = "pods"
    # No ready() starting the cache: management commands (check, migrate, shell...) load the apps
    # too, and must run without a cluster. The WSGI entry point, which only servers import, starts it.
