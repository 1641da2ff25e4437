"""Interruptible requests: another thread can abort a request that is still waiting for its response.

``LineStream.close()`` covers a body being read; this covers the window before it, while the
response headers have not arrived (a slow LIST). Connections of our pools register themselves with
the ``Interrupter`` active in the sending thread, which can shut their socket down from any thread.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Any, Iterator

from urllib3 import connection as _connection
from urllib3 import connectionpool as _connectionpool

__all__ = ["Interrupter", "install", "interruptible"]

_local = threading.local()


class Interrupter:
    """One per sequential user (a reflector's ListWatch). ``interrupt()`` is final and thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: Any = None
        self.interrupted = False

    def attach(self, conn: Any) -> None:
        with self._lock:
            if not self.interrupted:
                self._conn = conn
                return
        _shutdown(conn)

    def detach(self) -> None:
        with self._lock:
            self._conn = None

    def interrupt(self) -> None:
        with self._lock:
            self.interrupted = True
            conn, self._conn = self._conn, None
        if conn is not None:
            _shutdown(conn)


def _shutdown(conn: Any) -> None:
    sock = getattr(conn, "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def interruptible(interrupter: Interrupter | None) -> Iterator[None]:
    """Requests sent by this thread inside the block register their connection with ``interrupter``."""
    previous = getattr(_local, "interrupter", None)
    _local.interrupter = interrupter
    try:
        yield
    finally:
        _local.interrupter = previous


class _Tracking:
    def request(self, *args: Any, **kwargs: Any) -> Any:
        interrupter = getattr(_local, "interrupter", None)
        if interrupter is not None:
            interrupter.attach(self)
        result = super().request(*args, **kwargs)  # type: ignore[misc]
        # A new connection has no socket until request() connects: an interrupt() that came
        # before that could not shut anything down, so look again before waiting for the response.
        if interrupter is not None and interrupter.interrupted:
            _shutdown(self)
        return result


# Named like urllib3's own classes: their repr appears in connection error messages.
class HTTPConnection(_Tracking, _connection.HTTPConnection):
    pass


class HTTPSConnection(_Tracking, _connection.HTTPSConnection):
    pass


class _TrackingHTTPConnectionPool(_connectionpool.HTTPConnectionPool):
    ConnectionCls = HTTPConnection


class _TrackingHTTPSConnectionPool(_connectionpool.HTTPSConnectionPool):
    ConnectionCls = HTTPSConnection


def install(poolmanager: Any) -> None:
    """Make a urllib3 PoolManager build pools whose connections register with interrupters."""
    poolmanager.pool_classes_by_scheme = {"http": _TrackingHTTPConnectionPool,
                                          "https": _TrackingHTTPSConnectionPool}
    poolmanager.key_fn_by_scheme = dict(poolmanager.key_fn_by_scheme)
