"""The ``--timeout`` budget of one command: discovery, the probe request and the cache's sync all end by it."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from cloudcoil_cache._http._interrupt import Interrupter, interruptible
from cloudcoil_cache._runnable import RunnableThread
from cloudcoil_cache.cli._errors import CliError
from cloudcoil_cache.errors import APIError, ReadTimeout, TransportError

__all__ = ["BoundedTransport", "Deadline"]


class Deadline:
    """``seconds`` from now, the end of every wait for the cluster.

    Requests made through ``request()`` (or a ``BoundedTransport``) get the time left as their read
    timeout, and a watchdog thread aborts any still waiting when the time is up: a connect, a server
    that accepted the connection but never answers, or a wait between retries. ``with`` starts the
    watchdog; leaving the block (or ``finish()``) stops and joins it.
    """

    def __init__(self, seconds: float, flag: str = "--timeout", clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.flag = flag
        self._clock = clock
        self._start = clock()
        self._end = self._start + seconds
        self.expired = threading.Event()  # set by the watchdog at the end; ends retry waits
        self._done = threading.Event()
        self._interrupter = Interrupter()
        self._watchdog = RunnableThread("cloudcoil-cli-deadline", self._watch, stopping=self._done)

    def __enter__(self) -> Deadline:
        self._watchdog.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish()

    def finish(self) -> None:
        """Stop the watchdog (nothing is aborted any more) and join it; idempotent."""
        self._done.set()
        if self._watchdog.is_alive():
            self._watchdog.join()

    def _watch(self) -> None:
        # One wait can last at most threading.TIMEOUT_MAX (more overflows): wait in such steps.
        while not self._done.wait(min(self.remaining(), threading.TIMEOUT_MAX)):
            if self.remaining() <= 0:
                self.expired.set()
                self._interrupter.interrupt()
                return

    def remaining(self) -> float:
        """Seconds left (0 when the time is up)."""
        return max(0.0, self._end - self._clock())

    def waited(self) -> str:
        """How long the command has waited, and its flag: ``"3.0 s (--timeout 3 s)"``. The time is
        measured, not the flag's: a wait the deadline cannot cut short (decoding a large answer) ends late."""
        return f"{self._clock() - self._start:.1f} s ({self.flag} {self.seconds:g} s)"

    def error(self, what: str, answer: APIError | None = None) -> CliError:
        """The one-line error for a wait (``what``) that the deadline ended; ``answer``: the error
        status the server kept answering (a 429 or 503 retried until the end)."""
        if answer is not None:
            return CliError(
                f"the API server kept refusing {what} for {self.waited()}; its last answer: {answer}; "
                f"retry later, or with a larger {self.flag}",
                1,
            )
        return CliError(
            f"the API server did not answer in {self._clock() - self._start:.1f} s ({what}; {self.flag} "
            f"{self.seconds:g} s); check that the cluster is healthy, or retry with a larger {self.flag}",
            1,
        )

    def left_for(self, what: str) -> float:
        """The seconds left for ``what``; a CliError when none are."""
        left = self.remaining()
        if left <= 0 or self.expired.is_set():
            raise self.error(what)
        return left

    def request(self, transport: Any, method: str, path: str, **kwargs: Any) -> Any:
        """``transport.request(method, path, **kwargs)``, ended by the deadline (then a CliError)."""
        what = f"{method} {path}"
        left = self.left_for(what)
        try:
            with interruptible(self._interrupter):
                return transport.request(method, path, timeout=left, stop_event=self.expired, **kwargs)
        except (TransportError, APIError) as exc:
            # A read timeout is the deadline (it is the time left); anything else after the end
            # is an aborted connect or read, or a retry whose wait the end cut short.
            if isinstance(exc, ReadTimeout) or self.expired.is_set():
                raise self.error(what, exc if isinstance(exc, APIError) else None) from exc
            raise
        finally:
            self._interrupter.detach()


class BoundedTransport:
    """A transport whose ``request()`` goes through a Deadline (what discovery is given)."""

    def __init__(self, transport: Any, deadline: Deadline) -> None:
        self._transport = transport
        self._deadline = deadline

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        return self._deadline.request(self._transport, method, path, **kwargs)
