"""One lifecycle: the runnable protocol, the one thread class, run groups, the registry of live threads.

Every thread the library starts is a ``RunnableThread`` (or a worker of one of its executors,
``adopt``-ed by the executor's initializer): named, daemonic, stopped by an ``Event`` (never a
sleep), joined by whoever started it, its exceptions logged (a thread never dies silently), and
recorded with its owner while it lives (``library_threads()``: what a test or ``status()`` sees).

A ``Group`` (controller-runtime's runnable groups) starts its members in order and stops them in
reverse against *one* deadline: each member's ``join`` gets what is left of it, so a stop of a
Manager or a controller's run never takes longer than the time it was given, however many members.

In a fork child the registry's lock is new and its threads are the parent's (dead here): the
owners' own fork hooks abandon them (``_fork.abandon``), never join them.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
import weakref
from typing import Any, Callable, Iterable, Protocol, runtime_checkable

from cloudcoil_cache import _fork

__all__ = [
    "Group",
    "Runnable",
    "RunnableThread",
    "Step",
    "adopt",
    "deadline_after",
    "library_threads",
    "remaining",
    "started_count",
]

log = logging.getLogger("cloudcoil_cache.threads")


@runtime_checkable
class Runnable(Protocol):
    """Something that runs threads: ``start()``; ``stop()`` asks it to end (a server's may drain
    first); ``join(timeout)`` waits up to ``timeout`` for its threads to end; ``ready()`` says
    whether it serves; ``threads()`` are the threads it runs now. (What ``start``, ``stop`` and
    ``join`` return is theirs: a ``WebhookServer.start()`` returns the server.)"""

    def start(self) -> object: ...

    def stop(self) -> object: ...

    def join(self, timeout: float | None = None) -> object: ...

    def ready(self) -> bool: ...

    def threads(self) -> list[threading.Thread]: ...


# ------------------------------------------------------------------ deadlines
def deadline_after(timeout: float | None) -> float | None:
    """The ``time.monotonic()`` at which ``timeout`` seconds from now end (None: no deadline)."""
    return None if timeout is None else time.monotonic() + max(timeout, 0.0)


def remaining(deadline: float | None) -> float | None:
    """Seconds left until ``deadline`` (0 once past; None: no deadline)."""
    return None if deadline is None else max(deadline - time.monotonic(), 0.0)


# ------------------------------------------------------------------- registry
_lock = threading.Lock()  # guards _owners and _counts
_owners: weakref.WeakKeyDictionary[threading.Thread, str] = weakref.WeakKeyDictionary()
_counts = [0]  # threads ever registered (under _lock)
_fork.renew_locks(globals(), _lock=threading.Lock)


def _register(thread: threading.Thread, owner: str) -> None:
    with _lock:
        _owners[thread] = owner
        _counts[0] += 1


def adopt(owner: str) -> None:
    """Record the calling thread as the library's, owned by ``owner`` (an executor's initializer:
    a ``concurrent.futures`` pool starts its own workers)."""
    _register(threading.current_thread(), owner)


def library_threads() -> dict[threading.Thread, str]:
    """Every live thread the library started (or adopted), with its owner's name."""
    with _lock:
        owners = dict(_owners)
    return {thread: owner for thread, owner in owners.items() if thread.is_alive()}


def started_count() -> int:
    """How many threads the library has started (or adopted) in this process."""
    with _lock:
        return _counts[0]


# --------------------------------------------------------------- the thread
class RunnableThread(threading.Thread):
    """The library's one thread: named, daemonic, registered with its owner while it lives.

    It runs ``target(*args)`` (in ``context`` when given) or, in a subclass, its own ``run_body()``.
    ``stop()`` sets ``stopping`` (the ``Event`` its loop waits on; pass the owner's own to share it)
    and calls ``on_stop`` (which interrupts a blocking call: a socket read, a server's loop).
    ``join()`` of a thread not started, or of the calling thread itself, returns at once. An
    exception that ends it is logged with its name and owner, never silently dropped.

    ``detached``: no owner joins it; it ends by itself within a bound its owner documents (a
    watch's stop-event relay, whose ``close()`` never waits for a thread). The one such thread.
    """

    def __init__(
        self,
        name: str,
        target: Callable[..., object] | None = None,
        *args: Any,
        owner: str | None = None,
        stopping: threading.Event | None = None,
        on_stop: Callable[[], object] | None = None,
        context: contextvars.Context | None = None,
        detached: bool = False,
    ) -> None:
        super().__init__(name=name, daemon=True)
        self.owner = owner or name
        self.detached = detached
        self.stopping = stopping if stopping is not None else threading.Event()
        self._body = target
        self._body_args = args
        self._on_stop = on_stop
        self._context = context

    def start(self) -> None:
        _register(self, self.owner)
        super().start()

    def run(self) -> None:
        try:
            if self._context is not None:
                self._context.run(self.run_body)
            else:
                self.run_body()
        except SystemExit:
            pass
        except BaseException:
            log.exception("thread %s (of %s) ended on an exception", self.name, self.owner)
        finally:
            self._body = self._context = None  # drop what the body referenced
            self._body_args = ()

    def run_body(self) -> None:
        """What the thread does: ``target(*args)`` (a subclass may override it instead)."""
        if self._body is not None:
            self._body(*self._body_args)

    def stop(self) -> None:
        """Ask the thread to end (its ``stopping`` event; ``on_stop`` interrupts a blocking call)."""
        self.stopping.set()
        if self._on_stop is not None:
            self._on_stop()

    def join(self, timeout: float | None = None) -> None:
        if self.ident is None or self is threading.current_thread():
            return
        super().join(timeout)

    def ready(self) -> bool:
        return self.is_alive()

    def threads(self) -> list[threading.Thread]:
        return [self] if self.ident is not None else []


# ----------------------------------------------------------------- adapters
def _nothing() -> None:
    return None


class Step:
    """A runnable made of functions (a group member whose start and stop are another object's methods)."""

    def __init__(
        self,
        name: str,
        start: Callable[[], object] = _nothing,
        stop: Callable[[], object] = _nothing,
        join: Callable[[float | None], object] | None = None,
        ready: Callable[[], bool] | None = None,
        threads: Callable[[], list[threading.Thread]] | None = None,
    ) -> None:
        self.name = name
        self._start, self._stop, self._join = start, stop, join
        self._ready, self._threads = ready, threads

    def __repr__(self) -> str:
        return f"<Step {self.name}>"

    def start(self) -> None:
        self._start()

    def stop(self) -> None:
        self._stop()

    def join(self, timeout: float | None = None) -> None:
        if self._join is not None:
            self._join(timeout)
            return
        _join_all(self.threads(), deadline_after(timeout))

    def ready(self) -> bool:
        return self._ready() if self._ready is not None else True

    def threads(self) -> list[threading.Thread]:
        return self._threads() if self._threads is not None else []


def _join_all(threads: Iterable[threading.Thread], deadline: float | None) -> None:
    me = threading.current_thread()
    for thread in threads:
        if thread is not me and thread.ident is not None:
            thread.join(remaining(deadline))


# -------------------------------------------------------------------- groups
class Group:
    """Runnables started in order and stopped in reverse against one deadline.

    ``start()`` starts each member not yet started, in the order added (a member that fails stops
    those before it, in reverse, and the error is raised). ``stop()`` asks the last member to end;
    ``join(timeout)`` then stops and joins the members in reverse, each given what is left of the
    one ``timeout`` (so ``stop()`` + ``join()`` is the ordered shutdown, and a group nests in
    another one). ``close(timeout)`` is both, and returns the members still running at the end.
    """

    def __init__(self, name: str, members: Iterable[Runnable] = ()) -> None:
        self.name = name
        self._lock = threading.Lock()  # guards the lists below (never held while a member runs code)
        self._members: list[Runnable] = list(members)
        self._started: list[Runnable] = []
        self._signalled: Runnable | None = None  # the member stop() already asked to end

    def __repr__(self) -> str:
        return f"<Group {self.name} {len(self._members)} member(s), {len(self._started)} started>"

    @property
    def members(self) -> list[Runnable]:
        with self._lock:
            return list(self._members)

    def add(self, member: Runnable) -> None:
        """Append ``member`` (started at the next ``start()``)."""
        with self._lock:
            self._members.append(member)

    def remove(self, member: Runnable) -> None:
        """Forget ``member`` (its owner stops it)."""
        with self._lock:
            if member in self._members:
                self._members.remove(member)
            if member in self._started:
                self._started.remove(member)

    def start(self) -> None:
        for member in self.members:
            with self._lock:
                if member in self._started or member not in self._members:
                    continue
            try:
                member.start()
            except BaseException:
                self.close(None)
                raise
            with self._lock:
                self._started.append(member)

    def stop(self) -> None:
        with self._lock:
            last = self._started[-1] if self._started else None
            self._signalled = last
        if last is not None:
            last.stop()

    def join(self, timeout: float | None = None) -> None:
        self.close(timeout)

    def close(self, timeout: float | None = None) -> list[Runnable]:
        """Stop and join every started member in reverse order within ``timeout`` seconds in all;
        the members with a thread still alive at the end (logged)."""
        deadline = deadline_after(timeout)
        late: list[Runnable] = []
        while True:
            with self._lock:
                if not self._started:
                    break
                member = self._started.pop()
                signalled, self._signalled = self._signalled is member, None
            try:
                if not signalled:
                    member.stop()
                member.join(remaining(deadline))
            except Exception:
                log.exception("%s: stopping %r failed", self.name, member)
            me = threading.current_thread()
            if any(t.is_alive() and t is not me for t in member.threads()):
                late.append(member)
        if late:
            log.warning("%s: still running after the stop's deadline: %s", self.name, late)
        return late

    def ready(self) -> bool:
        return all(member.ready() for member in self.members)

    def threads(self) -> list[threading.Thread]:
        return [thread for member in self.members for thread in member.threads()]
