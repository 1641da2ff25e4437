"""Interruptible requests: another thread can abort a request that is still waiting for its response.

``LineStream.close()`` covers a body being read; this covers the window before it: the TCP connect,
the TLS handshake, and the wait for the response headers (a slow LIST). Connections of our pools
register themselves (and a socket being connected) with the ``Interrupter`` active in the sending
thread, which can shut their socket down from any thread.

A connect is made non-blocking and waited for with ``select``: shutting a socket down aborts a
connect in progress (Linux disconnects a SYN_SENT socket and wakes the wait), and the connecting
thread checks the ``interrupted`` flag after starting the connect, so an interrupt can never fall
in a gap between the two.

Each use of a pooled connection is a ``Lease``, from its request until urllib3 puts the connection
back in the pool. A shutdown from another thread (``interrupt()``, ``LineStream.close()``) goes through
the lease: once the connection is back in the pool, and perhaps taken by another request, it is left
alone; a connection whose socket was shut down during its lease is closed, and a fresh connection
object takes its place in the pool. (Without this, a stop cut whatever request held the connection
next: over TLS it read raw TLS records as its status line, ``BadStatusLine('\\x17\\x03\\x03…')``.)
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import socket
import sys
import threading
import time
from typing import Any, Iterator

from urllib3 import connection as _connection
from urllib3 import connectionpool as _connectionpool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.util.connection import allowed_gai_family

from cloudcoil_cache import _fork

__all__ = ["Interrupter", "Lease", "install", "interrupted_here", "interruptible", "lease_of"]

_local = threading.local()
# Guards every Lease and each connection's ``_cc_lease`` (a few field updates, no I/O); re-entrant, so
# that a collection running a finalizer that stops an informer inside it cannot deadlock.
_lease_lock = threading.RLock()
_fork.renew_locks(globals(), _lease_lock=threading.RLock)


class Lease:
    """One use of a pooled connection, from its request until it goes back to the pool."""

    __slots__ = ("conn", "ended", "shut", "sock")

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.ended = False
        self.shut = False
        # The socket, kept once the request is sent: http.client hands it over to a response that
        # ends with the connection (``Connection: close``) and sets ``conn.sock`` to None.
        self.sock: Any = None

    def shutdown(self, how: int) -> bool:
        """Shut the connection's socket down (``how``: ``socket.SHUT_*``), unless the lease has ended
        (the connection is back in the pool: another request may hold it). False if it had."""
        with _lease_lock:
            if self.ended:
                return False
            self.shut = True  # from now on the connection is closed, never pooled (``_Leasing``)
            sock = self.sock if self.sock is not None else getattr(self.conn, "sock", None)
        if sock is not None:
            # The plain socket's shutdown (no I/O, no wait): SSLSocket.shutdown drops its TLS state
            # first, and a thread reading the connection would then read raw TLS records as HTTP
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, how)
        return True


def lease_of(conn: Any) -> Lease | None:
    """The current lease of one of our pools' connections (None: not ours, or not in use)."""
    lease: Lease | None = getattr(conn, "_cc_lease", None)
    return lease


def _new_lease(conn: Any) -> Lease:
    lease = Lease(conn)
    with _lease_lock:
        previous = getattr(conn, "_cc_lease", None)
        if previous is not None:
            previous.ended = True
        conn._cc_lease = lease
    return lease


def _end_lease(conn: Any) -> bool | None:
    """End the connection's lease (it goes back to the pool): True if its socket was shut down
    meanwhile, False if not, None if it had no lease (it is back in the pool already)."""
    with _lease_lock:
        lease: Lease | None = getattr(conn, "_cc_lease", None)
        if lease is None:
            return None
        conn._cc_lease = None
        lease.ended = True
        return lease.shut


class Interrupter:
    """One per sequential user (a reflector's ListWatch). ``interrupt()`` is final and thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lease: Lease | None = None
        # A duplicate of the socket being connected: TLS wraps the original (which detaches it
        # from its file descriptor), so only a duplicate can still shut down a TLS handshake.
        self._sock: socket.socket | None = None
        self.interrupted = False

    def attach(self, lease: Lease) -> None:
        with self._lock:
            if not self.interrupted:
                self._lease = lease
                return
        lease.shutdown(socket.SHUT_RDWR)

    def attach_socket(self, sock: socket.socket) -> bool:
        """Register a socket about to connect; False (and nothing registered) once interrupted."""
        dup = sock.dup()
        previous: socket.socket | None
        with self._lock:
            if self.interrupted:
                previous, registered = dup, False
            else:
                previous, self._sock, registered = self._sock, dup, True
        if previous is not None:
            previous.close()
        return registered

    def connected(self) -> None:
        """The socket registered by ``attach_socket`` is connected and in use: from now on only its
        lease may shut it down (the duplicate would reach it even back in the pool)."""
        with self._lock:
            sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()

    def detach(self) -> None:
        with self._lock:
            self._lease = None
            sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()

    def interrupt(self) -> None:
        with self._lock:
            self.interrupted = True
            lease, self._lease = self._lease, None
            sock, self._sock = self._sock, None
        if lease is not None:
            lease.shutdown(socket.SHUT_RDWR)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


@contextlib.contextmanager
def interruptible(interrupter: Interrupter | None) -> Iterator[None]:
    """Requests sent by this thread inside the block register their connection with ``interrupter``."""
    previous = getattr(_local, "interrupter", None)
    _local.interrupter = interrupter
    try:
        yield
    finally:
        _local.interrupter = previous


def interrupted_here() -> bool:
    """Was the request this thread is sending interrupted (its ``interruptible`` block's)?"""
    interrupter = getattr(_local, "interrupter", None)
    return interrupter is not None and bool(interrupter.interrupted)


def _interrupted_error() -> OSError:
    return OSError(errno.ECONNABORTED, "interrupted: the request was cancelled while connecting")


def _connect(sock: socket.socket, address: Any, timeout: float | None, interrupter: Interrupter) -> None:
    """``sock.connect(address)`` within ``timeout`` that ``interrupter.interrupt()`` aborts."""
    sock.setblocking(False)
    err = sock.connect_ex(address)
    if interrupter.interrupted:  # checked after the connect started: shutdown() now aborts it
        raise _interrupted_error()
    if err not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN):
        raise OSError(err, os.strerror(err))
    if err != 0:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                _, writable, failed = select.select([], [sock], [sock], remaining)
            except InterruptedError:  # pragma: no cover - PEP 475 retries select itself
                continue
            if writable or failed:
                break
            raise TimeoutError("timed out")
        if interrupter.interrupted:
            raise _interrupted_error()
        err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            raise OSError(err, os.strerror(err))
    sock.settimeout(timeout)


def _create_connection(
    address: tuple[str, int], timeout: Any, source_address: Any, socket_options: Any, interrupter: Interrupter
) -> socket.socket:
    """urllib3's ``create_connection`` with the socket registered before it connects."""
    host, port = address
    if host.startswith("["):
        host = host.strip("[]")
    timeout = timeout if isinstance(timeout, (int, float)) else socket.getdefaulttimeout()
    err: OSError | None = None
    for af, socktype, proto, _, sa in socket.getaddrinfo(host, port, allowed_gai_family(), socket.SOCK_STREAM):
        sock = socket.socket(af, socktype, proto)
        try:
            for opt in socket_options or ():
                sock.setsockopt(*opt)
            if source_address:
                sock.bind(source_address)
            if not interrupter.attach_socket(sock):
                raise _interrupted_error()
            _connect(sock, sa, timeout, interrupter)
            return sock
        except OSError as e:
            sock.close()
            if interrupter.interrupted:
                raise _interrupted_error() from None
            err = e
    raise err if err is not None else OSError("getaddrinfo returned an empty list")


class _Tracking:
    def _new_conn(self) -> socket.socket:
        interrupter = getattr(_local, "interrupter", None)
        if interrupter is None:
            return super()._new_conn()  # type: ignore[misc, no-any-return]
        conn: Any = self
        try:
            sock = _create_connection(
                (conn._dns_host, conn.port), conn.timeout, conn.source_address, conn.socket_options, interrupter
            )
        except socket.gaierror as e:
            raise NameResolutionError(conn.host, conn, e) from e
        except TimeoutError as e:
            raise ConnectTimeoutError(
                conn, f"Connection to {conn.host} timed out. (connect timeout={conn.timeout})"
            ) from e
        except OSError as e:
            raise NewConnectionError(conn, f"Failed to establish a new connection: {e}") from e
        sys.audit("http.client.connect", conn, conn.host, conn.port)
        return sock

    def request(self, *args: Any, **kwargs: Any) -> Any:
        lease = _new_lease(self)
        interrupter = getattr(_local, "interrupter", None)
        if interrupter is not None:
            interrupter.attach(lease)
        try:
            result = super().request(*args, **kwargs)  # type: ignore[misc]
            lease.sock = getattr(self, "sock", None)
        finally:
            if interrupter is not None:
                interrupter.connected()
        # A new connection has no socket until request() connects: an interrupt() that came
        # before that could not shut anything down, so look again before waiting for the response.
        if interrupter is not None and interrupter.interrupted:
            lease.shutdown(socket.SHUT_RDWR)
        return result


class _Leasing:
    def _put_conn(self, conn: Any) -> None:
        if conn is not None:
            shut = _end_lease(conn)
            if shut is None:
                # Released twice (requests' Response.close() racing urllib3's own release): it is
                # in the pool already, and twice there two requests could take it at once.
                return
            if shut:
                # Shut down during its lease: closed, and a fresh connection object takes its slot
                # (its stream may still close this one from another thread).
                conn.close()
                conn = None
        super()._put_conn(conn)  # type: ignore[misc]


# Named like urllib3's own classes: their repr appears in connection error messages.
class HTTPConnection(_Tracking, _connection.HTTPConnection):
    pass


class HTTPSConnection(_Tracking, _connection.HTTPSConnection):
    pass


class _TrackingHTTPConnectionPool(_Leasing, _connectionpool.HTTPConnectionPool):
    ConnectionCls = HTTPConnection


class _TrackingHTTPSConnectionPool(_Leasing, _connectionpool.HTTPSConnectionPool):
    ConnectionCls = HTTPSConnection


def install(poolmanager: Any) -> None:
    """Make a urllib3 PoolManager build pools whose connections register with interrupters."""
    poolmanager.pool_classes_by_scheme = {"http": _TrackingHTTPConnectionPool, "https": _TrackingHTTPSConnectionPool}
    poolmanager.key_fn_by_scheme = dict(poolmanager.key_fn_by_scheme)
