"""The next LIST page of a reflector, requested ahead on a named thread while this one is structured."""

from __future__ import annotations

from typing import Callable

from cloudcoil_cache._runnable import RunnableThread

__all__ = ["PagePrefetch"]


class PagePrefetch:
    """At most one page in flight: ``start()`` runs ``fetch`` on a thread of its own, ``result()``
    joins it and returns its body or raises its error (where a serial request would have raised it).

    Stopping is the source's: ``interrupt()`` aborts the request in flight, so the thread ends; the
    reflector ``cancel()``s (joins, the body or error dropped) whatever it no longer needs.
    """

    def __init__(self, name: str) -> None:
        self._name = f"cloudcoil-list-{name}"
        self._thread: RunnableThread | None = None
        self._body: bytes | None = None
        self._error: BaseException | None = None

    @property
    def pending(self) -> bool:
        return self._thread is not None

    def start(self, fetch: Callable[[], bytes]) -> None:
        if self._thread is not None:
            raise RuntimeError(f"{self._name}: a page is already being fetched")
        self._body = self._error = None
        self._thread = RunnableThread(self._name, self._run, fetch)
        self._thread.start()

    def _run(self, fetch: Callable[[], bytes]) -> None:
        try:
            self._body = fetch()
        except BaseException as exc:  # handed to the reflector thread by result()
            self._error = exc

    def result(self) -> bytes:
        """The fetched body (waits for it); the fetch's exception is raised here."""
        thread = self._thread
        if thread is None:
            raise RuntimeError(f"{self._name}: no page is being fetched")
        thread.join()
        self._thread = None
        body, error, self._body, self._error = self._body, self._error, None, None
        if error is not None:
            try:
                raise error
            finally:
                del error
        assert body is not None
        return body

    def cancel(self) -> None:
        """Wait for a fetch in flight (if any) and drop what it got."""
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()
        self._body = self._error = None
