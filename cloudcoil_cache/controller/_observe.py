"""The seam between controllers and metrics: what a controller reports about its reconciles and queue."""

from __future__ import annotations

from cloudcoil_cache.controller._queue import QueueHooks

__all__ = ["ControllerObserver"]


class ControllerObserver:
    """Receives a controller's measurements; the defaults do nothing (the Manager's metrics subclass it).

    ``result`` is controller-runtime's label: ``success``, ``error``, ``requeue`` or ``requeue_after``.
    """

    def queue_hooks(self) -> QueueHooks:
        return QueueHooks()

    def reconciled(self, result: str, seconds: float) -> None:
        """One reconcile ended with ``result`` after ``seconds``."""

    def workers(self, active: int) -> None:
        """The number of reconciles running now changed."""
