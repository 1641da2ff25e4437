"""AppConfig of the ``pods`` app: ``ready()`` starts the informer cache once per process."""

from __future__ import annotations

from django.apps import AppConfig


class PodsConfig(AppConfig):
    name = "pods"

    def ready(self) -> None:
        # Django answers requests on threads that do not inherit context variables: set_default()
        # makes the config the process-wide default for every thread, starts the cache and waits for
        # its sync. It stops (threads joined) with config.close(), which also runs at interpreter exit.
        from pods.cluster import config

        config.set_default()
