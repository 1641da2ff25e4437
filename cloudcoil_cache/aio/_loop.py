"""An event loop on a thread of its own, where coroutine handlers run (reconcilers, admission handlers)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any, Coroutine, TypeVar

from cloudcoil_cache._runnable import RunnableThread

__all__ = ["LoopThread"]

R = TypeVar("R")


class LoopThread:
    """Runs ``loop.run_forever()`` on a named thread; ``stop()`` cancels what is left and joins it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: RunnableThread | None = None
        self._ready = threading.Event()

    def start(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = RunnableThread(self.name, self._run, owner=self.name, on_stop=self._stop_loop)
        self._thread.start()
        self._ready.wait()

    def _run(self) -> None:
        loop = self._loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        loop.call_soon(self._ready.set)
        try:
            loop.run_forever()
            tasks = asyncio.all_tasks(loop)
            for task in tasks:
                task.cancel()
            if tasks:
                loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()

    def submit(self, coro: Coroutine[Any, Any, R]) -> concurrent.futures.Future[R]:
        """Schedule ``coro``; the task inherits the caller's context variables (the active Config)."""
        if self._loop is None:
            coro.close()
            raise RuntimeError(f"{self.name}: the event loop is not running")
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def cancel_all(self) -> None:
        """Cancel every task on the loop (reconciles still running past the shutdown timeout)."""
        loop = self._loop
        if loop is None:
            return

        def cancel() -> None:
            for task in asyncio.all_tasks(loop):
                task.cancel()

        try:
            loop.call_soon_threadsafe(cancel)
        except RuntimeError:  # already closed
            pass

    def _stop_loop(self) -> None:
        loop = self._loop
        if loop is None:
            return
        try:
            loop.call_soon_threadsafe(loop.stop)
        except RuntimeError:  # already closed
            pass

    def stop(self, timeout: float | None = None) -> bool:
        """Stop the loop (tasks left are cancelled) and join the thread; False if it did not end in time."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return True
        thread.stop()
        thread.join(timeout)
        if thread.is_alive():
            return False
        self._loop = self._thread = None
        return True

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def ready(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def threads(self) -> list[threading.Thread]:
        return [self._thread] if self._thread is not None else []

    @property
    def thread(self) -> threading.Thread | None:
        return self._thread
