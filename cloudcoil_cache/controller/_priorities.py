"""EventPriorities: the queue priority of an informer event (a change, the initial list's replay, a resync)."""

from __future__ import annotations

import threading
from typing import Any, Iterable

from cloudcoil_cache.controller._queue import Priority
from cloudcoil_cache.controller._status import get_condition, status_of

__all__ = ["EventPriorities", "converged"]


class EventPriorities:
    """The priority of each event a controller's handlers get (controller-runtime's
    ``WithLowPriorityWhenUnchanged``, decided from the events themselves).

    - an add of an object as it was when the run started (``started_with``: the primaries cached
      then, which the registration replays as adds) is ``REPLAY``, or ``CONVERGED`` with
      ``warm_restart`` when its status says it converged for its generation (see ``converged``);
      any other add (a new object, on the watch or found by a relist) is ``EVENT``;
    - an update that did not change the object's resourceVersion (a periodic resync) is ``REPLAY``;
      any other update, and every delete, is ``EVENT``.

    Called on the handler lane's thread only; the lock guards against a second lane (other kinds'
    adds never match the primaries' snapshot, but share the object).
    """

    def __init__(self, started_with: Iterable[Any] = (), *, warm_restart: bool = False) -> None:
        self.warm_restart = warm_restart
        self._lock = threading.Lock()
        self._replay: set[tuple[str, str, str, str]] = {_version(obj) for obj in started_with}

    def add(self, obj: Any) -> Priority:
        version = _version(obj)
        with self._lock:
            replayed = version in self._replay
            if replayed:
                self._replay.discard(version)  # replayed once: a later add of it is a change
        if not replayed:
            return Priority.EVENT
        return Priority.CONVERGED if self.warm_restart and converged(obj) else Priority.REPLAY

    def update(self, old: Any, new: Any) -> Priority:
        unchanged = _rv(old) is not None and _rv(old) == _rv(new)
        return Priority.REPLAY if unchanged else Priority.EVENT

    def delete(self, obj: Any) -> Priority:
        return Priority.EVENT

    @property
    def replay_pending(self) -> int:
        """Objects of the start's snapshot whose replayed add has not been seen yet."""
        with self._lock:
            return len(self._replay)


def converged(obj: Any) -> bool:
    """Does ``obj``'s status say it converged for its current generation: ``observedGeneration``
    equal to ``metadata.generation`` and a ``Ready`` condition ``True`` (for that generation, when
    the condition carries one)? What this runtime's status writes record after a successful pass."""
    generation = getattr(obj.metadata, "generation", None)
    if generation is None:
        return False
    try:
        status = status_of(obj)
        ready = get_condition(obj, "Ready")
    except Exception:  # an object whose status cannot be read is not known to have converged
        return False
    if status.get("observedGeneration") != generation:
        return False
    if ready is None or ready.get("status") != "True":
        return False
    observed = ready.get("observedGeneration")
    return observed is None or observed == generation


def _rv(obj: Any) -> str | None:
    rv: str | None = getattr(obj.metadata, "resource_version", None)
    return rv


def _version(obj: Any) -> tuple[str, str, str, str]:
    meta = obj.metadata
    return (type(obj).__name__, meta.namespace or "", meta.name or "", _rv(obj) or "")
