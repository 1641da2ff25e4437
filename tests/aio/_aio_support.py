"""Helpers for the asyncio tests: fast reflector timing, a loop-aware event recorder, thread checks."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from typing import Any, Callable, Iterator

import attrs

#: Reflector timing for tests: quick backoff, short read timeout; the semantics are unchanged.
from cluster_support import FAST  # noqa: F401  (re-exported: the shared reflector timing)


@attrs.frozen
class Call:
    """One handler call: which event, the object name(s), and where it ran."""

    event: str
    name: str
    value: Any
    thread: threading.Thread
    loop: asyncio.AbstractEventLoop | None


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _name_of(value: Any) -> str:
    obj = value[1] if isinstance(value, tuple) else value
    return str(obj.metadata.name)


class Calls:
    """Handler calls recorded from any thread or loop; ``await calls.until(pred)`` waits for them.

    Waiting happens on the waiting coroutine's own loop: ``record`` wakes it with
    ``call_soon_threadsafe``, so nothing polls and nothing sleeps.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[Call] = []
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None], Callable[[list[Call]], bool]]] = []

    def record(self, event: str, value: Any) -> None:
        call = Call(event, _name_of(value), value, threading.current_thread(), _running_loop())
        with self._lock:
            self._items.append(call)
            waiters = list(self._waiters)
        for loop, future, pred in waiters:
            try:
                loop.call_soon_threadsafe(self._check, future, pred)
            except RuntimeError:  # that loop is closed: its waiter is gone
                pass

    @property
    def items(self) -> list[Call]:
        with self._lock:
            return list(self._items)

    def names(self, event: str) -> list[str]:
        return [c.name for c in self.items if c.event == event]

    def _check(self, future: asyncio.Future[None], pred: Callable[[list[Call]], bool]) -> None:
        if not future.done() and pred(self.items):
            future.set_result(None)

    async def until(self, pred: Callable[[list[Call]], bool], timeout: float = 10.0) -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        entry = (loop, future, pred)
        with self._lock:
            self._waiters.append(entry)
        try:
            self._check(future, pred)
            await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise AssertionError(
                f"condition not met within {timeout}s; calls: {[(c.event, c.name) for c in self.items][-20:]}"
            ) from None
        finally:
            with self._lock:
                self._waiters.remove(entry)

    async def until_names(self, event: str, names: Iterator[str] | list[str] | set[str], timeout: float = 10.0) -> None:
        wanted = set(names)
        await self.until(lambda calls: wanted <= {c.name for c in calls if c.event == event}, timeout)


def cloudcoil_threads() -> list[str]:
    """Names of the library's threads that are alive now (reflectors, handlers, its executor)."""
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("cloudcoil-") and t.is_alive())


class Lateness:
    """``async with Lateness() as probe:`` ticks every ``period`` s on the loop and records how late
    each tick woke up (the probe's own ``asyncio.sleep`` is the measurement, not a wait for a condition)."""

    def __init__(self, period: float = 0.01) -> None:
        self.period = period
        self.samples: list[float] = []
        self._running = True
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while self._running:
            start = loop.time()
            await asyncio.sleep(self.period)
            self.samples.append(loop.time() - start - self.period)

    async def __aenter__(self) -> Lateness:
        self._task = asyncio.ensure_future(self._run())
        await asyncio.sleep(0)  # let the probe start ticking
        return self

    async def stop(self) -> None:
        """Stop ticking (idempotent); the samples so far are kept."""
        self._running = False
        if self._task is not None:
            await self._task

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def worst(self) -> float:
        return max(self.samples, default=0.0)


class AuditGate:
    """Blocks the first thread that raises audit ``event`` with matching args until ``release()``
    (or ``hold`` seconds): a slow disk for "open", a slow network for "socket.connect".

    Audit hooks cannot be removed, so one hook is installed per process and consults the gate
    armed now. ``opened`` resolves (on the test's loop) to the blocked thread. If that thread is
    the event loop's own, the loop stays blocked for at most ``hold`` s (a test fails, not hangs).
    """

    armed: AuditGate | None = None
    installed = False

    def __init__(
        self, event: str, match: Callable[[tuple[Any, ...]], bool], loop: asyncio.AbstractEventLoop, hold: float = 5.0
    ) -> None:
        self.event = event
        self.match = match
        self.hold = hold
        self.opened: asyncio.Future[threading.Thread] = loop.create_future()
        self._loop = loop
        self._release = threading.Event()

    @classmethod
    def _hook(cls, event: str, args: tuple[Any, ...]) -> None:
        gate = cls.armed
        if gate is None or event != gate.event or not gate.match(args):
            return
        cls.armed = None  # only the first match is slow
        gate._loop.call_soon_threadsafe(gate.opened.set_result, threading.current_thread())
        gate._release.wait(gate.hold)

    def __enter__(self) -> AuditGate:
        if not AuditGate.installed:
            sys.addaudithook(AuditGate._hook)
            AuditGate.installed = True
        AuditGate.armed = self
        return self

    def release(self) -> None:
        self._release.set()

    def __exit__(self, *exc: object) -> None:
        AuditGate.armed = None
        self._release.set()


def OpenGate(path: str, loop: asyncio.AbstractEventLoop, hold: float = 5.0) -> AuditGate:  # noqa: N802
    """An ``AuditGate`` on opening ``path``."""
    wanted = os.fspath(path)

    def match(args: tuple[Any, ...]) -> bool:
        return isinstance(args[0], (str, bytes, os.PathLike)) and os.fspath(args[0]) == wanted

    return AuditGate("open", match, loop, hold)


def ConnectGate(port: int, loop: asyncio.AbstractEventLoop, hold: float = 5.0) -> AuditGate:  # noqa: N802
    """An ``AuditGate`` on a library thread connecting to ``127.0.0.1:port``."""

    def match(args: tuple[Any, ...]) -> bool:
        return threading.current_thread().name.startswith("cloudcoil-") and tuple(args[1][:2]) == ("127.0.0.1", port)

    return AuditGate("socket.connect", match, loop, hold)
