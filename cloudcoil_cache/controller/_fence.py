"""The leadership fence of one run of a controller's workers, and LeadershipLost (raised through it)."""

from __future__ import annotations

import threading

from cloudcoil_cache.errors import CloudcoilError

__all__ = ["Fence", "LeadershipLost"]


class LeadershipLost(CloudcoilError):
    """This replica lost the Lease while a reconcile was running: the reconcile must stop writing.

    Raised by ``ctx.check_leadership()`` (and by the Context's write helpers, which call it) once the
    Manager's ``LeaderElection`` has stepped down, or, for a sharded controller, once this replica
    could not renew its shard Lease (``Ring``); the new leader (or the object's new shard) reconciles
    the key again. A reconcile that lets it propagate ends with a warning, is not retried by this
    replica, and is counted as ``leadership_lost`` in ``Controller.status()``.
    """


class Fence:
    """Set once when the run's leadership ends (the Manager's election stepped down); reconciles of that
    run check it before each write. A new run (leadership gained again) gets a new fence, so a reconcile
    left over from the old run stays fenced.
    """

    def __init__(self, controller: str) -> None:
        self.controller = controller
        self._lost = threading.Event()

    def __repr__(self) -> str:
        return f"<Fence {self.controller} lost={self.lost}>"

    @property
    def lost(self) -> bool:
        return self._lost.is_set()

    def lose(self) -> None:
        """The Lease is lost: every later ``check()`` raises."""
        self._lost.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block up to ``timeout`` seconds (None: no limit) for the fence; True once it is set."""
        return self._lost.wait(timeout)

    def check(self) -> None:
        """Raise ``LeadershipLost`` once the fence is set."""
        if self._lost.is_set():
            raise LeadershipLost(
                f"controller {self.controller!r}: this replica lost the leader election's Lease; "
                "the reconcile must stop writing (the new leader reconciles the key again)"
            )
