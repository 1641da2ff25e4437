"""Garbage-collector policy for large caches: pause collection while a LIST is decoded, freeze what is cached.

Decoding builds hundreds of thousands of long-lived, acyclic objects. CPython's cyclic collector
runs a full collection each time the objects that survived into its oldest generation grow by 25%,
and a full collection walks every tracked object of the process: with a 10,000-pod cache that is
a stop-the-world pause of every thread, measured here at 0.4-0.8 s on the 2-core dev machine, every
~2,500 watch events. Moving the cache into the collector's permanent generation (``gc.freeze()``)
takes it out of those walks: the longest pause over the same 10,000 events fell to 17 ms, and the
apply rate rose from 6,400 to 9,800 events/s (``benchmarks/README.md``, "Garbage collector").

The policy:

- ``paused()`` turns automatic collection off while a LIST page is parsed and structured (CPU work
  only, never around network waits), nestable across threads: the last one out restores the state
  found by the first one in. (A program that calls ``gc.disable()`` from another thread *inside*
  that window is re-enabled at its end.)
- ``freeze()`` (after each LIST page and relist) and ``note_events()`` (every ``FREEZE_EVERY``
  applied watch events) first collect the young generations — cyclic garbage already dead is freed,
  not frozen — then call ``gc.freeze()``. That is all: the library **never calls** ``gc.unfreeze()``
  (an application's own ``gc.freeze()``, e.g. gunicorn's pre-fork copy-on-write recipe, stays as it
  made it) and never runs a full collection itself, and nothing here holds a lock while collecting.
- Not at all when the program turned the collector off itself (``gc.disable()``: it manages memory
  its own way), nor with ``Tuning(freeze_gc=False)``.

What a closed scope leaves: nothing. ``gc.freeze()`` moves everything alive, so a Config, its cache,
informers, reflectors and transport are frozen with the cache, and a reference cycle among them
would then never be collected (it was: every closed cached Config stayed, +0.8 MB each). Two choices
were possible; the library keeps its scope machinery **free of reference cycles** instead of
undoing the freeze: ``gc.unfreeze()`` moves *every* frozen object back, the application's too, so it
cannot be scoped to one closed Config, and calling it behind the application's back would undo a
pre-fork freeze (and put every other live cache back under full collections). So the references
that point back up are weak (a reflector's sink to its informer, an informer's callbacks to its
cache, the cache's to its Config: ``caching._cache._weakly``, ``caching._owner.Scopes``), and
``Config.close()`` drops the handlers registered on its cache (they often close over the Config
or the view: an application cycle through the cache). A closed Config the application drops is
then freed by reference counting, frozen or not (``tests/lifetimes``).

What freezing costs an application: an object alive at a freeze is never examined by the cyclic
collector again. The cached objects are acyclic (reference counting frees them when an event
replaces them) and so are most objects, but an application object that is alive at a freeze and
*later* becomes part of an unreachable reference cycle stays in memory until the program calls
``gc.unfreeze()`` and ``gc.collect()`` itself. A program that keeps creating such cycles (and cannot
call those itself) should set ``Tuning(freeze_gc=False)``: it then pays the full collections above
(fewer since sealed objects are shared: ~28 tracked objects per cached pod instead of ~120).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from typing import Iterator

from cloudcoil_cache import _fork

__all__ = ["FREEZE_EVERY", "freeze", "note_events", "paused"]

FREEZE_EVERY = 500

_lock = threading.Lock()  # guards _pausers/_was_enabled; never held while collecting
_pausers = 0
_was_enabled = False
_events = 0


def _after_fork_in_child() -> None:
    """A fork made while a LIST page was decoded: the pause was the parent's thread's; the child
    gets its collector back (else it would run without one for good) and a new lock."""
    global _lock, _pausers
    _lock = threading.Lock()
    if _pausers and _was_enabled:
        gc.enable()
    _pausers = 0


_fork.on_fork(_after_fork_in_child)


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Automatic collection is off inside the block (process-wide, nestable, thread-safe)."""
    global _pausers, _was_enabled
    with _lock:
        if _pausers == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pausers += 1
    try:
        yield
    finally:
        with _lock:
            _pausers -= 1
            if _pausers == 0 and _was_enabled:
                gc.enable()


def _collector_on() -> bool:
    with _lock:
        return gc.isenabled() or (_pausers > 0 and _was_enabled)


def freeze() -> None:
    """Collect the young generations, then move every object alive into the permanent generation.

    Does nothing when the program disabled the collector. Never unfreezes, never collects fully.
    """
    global _events
    _events = 0
    if not _collector_on():
        return
    gc.collect(1)  # dead cycles among recent objects are freed now, not frozen for good
    gc.freeze()


def note_events(count: int = 1) -> None:
    """Count applied watch events; freeze every ``FREEZE_EVERY`` of them (process-wide)."""
    global _events
    _events += count  # a lost update under a race only delays the next freeze a little
    if _events >= FREEZE_EVERY:
        freeze()
