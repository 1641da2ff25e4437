"""The webhook server's accept loop: accepts (never handshakes), parks idle connections, sees clients leave."""

from __future__ import annotations

import collections
import logging
import os
import select
import socket
import threading
from typing import Callable, Deque

from cloudcoil_cache._clock import Clock
from cloudcoil_cache.admission._http1 import Connection

__all__ = ["AcceptLoop", "HANDSHAKE_TIMEOUT", "IDLE_TIMEOUT"]

log = logging.getLogger("cloudcoil_cache.admission.server")

HANDSHAKE_TIMEOUT = 10.0  # seconds a client gets to finish its TLS handshake (stepped on workers)
IDLE_TIMEOUT = 90.0  # an idle keep-alive connection is closed after this (kube-apiserver's own idle timeout)
_ACCEPT_PAUSE = 0.5  # seconds without accepting after accept() failed (out of descriptors): no busy loop
_RDHUP = getattr(select, "POLLRDHUP", 0)  # Linux: the peer closed, even with unread bytes pending


class AcceptLoop:
    """The accept loop's thread: accepts (never handshakes), holds connections waiting for bytes (a
    handshake's next step, an idle keep-alive's next request) off the workers, and watches connections
    whose request is being answered for a client that went away."""

    def __init__(
        self,
        listener: socket.socket,
        dispatch: Callable[[Connection], None],
        clock: Clock,
    ) -> None:
        self._listener = listener
        self._dispatch = dispatch
        self._clock = clock
        self._poll = select.poll()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._pipe_lock = threading.Lock()
        self._ended = False
        self._commands: Deque[tuple[str, Connection | None]] = collections.deque()
        self._parked: dict[int, Connection] = {}
        self._watched: dict[int, Connection] = {}
        self._listening = True
        self._accept_resume: float | None = None  # accepting paused until then (after an accept error)
        self._poll.register(listener, select.POLLIN)
        self._poll.register(self._wake_r, select.POLLIN)
        self.listener_closed = threading.Event()
        self.idle_closed = threading.Event()

    def command(self, name: str, conn: Connection | None = None) -> None:
        with self._pipe_lock:  # the pipe is closed when the loop ends: never write to a reused descriptor
            if self._ended:
                if conn is not None and name == "park":
                    conn.close()
                return
            self._commands.append((name, conn))
            try:
                os.write(self._wake_w, b"x")
            except BlockingIOError:  # the pipe is full of wake-ups already
                pass

    def run(self) -> None:
        try:
            while self._step():
                pass
        finally:
            for conn in list(self._parked.values()):
                conn.close()
            self._parked.clear()
            if self._listening:
                self._close_listener()
            with self._pipe_lock:
                self._ended = True
                os.close(self._wake_r)
                os.close(self._wake_w)

    def _step(self) -> bool:
        timeout_ms = self._next_idle_ms()
        for fd, events in self._poll.poll(timeout_ms):
            if fd == self._wake_r:
                try:
                    os.read(self._wake_r, 4096)
                except BlockingIOError:
                    pass
            elif self._listening and fd == self._listener.fileno():
                self._accept()
            elif fd in self._parked:
                self._unpark(fd, events)
            elif fd in self._watched:
                self._watched.pop(fd).disconnected.set()
                self._forget(fd)
        while self._commands:
            name, conn = self._commands.popleft()
            if name == "exit":
                return False
            self._apply(name, conn)
        self._close_expired()
        if self._accept_resume is not None and self._clock.now() >= self._accept_resume:
            self._accept_resume = None
            if self._listening:
                self._poll.register(self._listener, select.POLLIN)
        return True

    def _apply(self, name: str, conn: Connection | None) -> None:
        if name == "unlisten":
            self._close_listener()
        elif name == "close_idle":
            self._close_parked()
        elif conn is None or conn.closed:
            return
        elif name == "park":
            conn.deadline = self._clock.now() + (IDLE_TIMEOUT if conn.tls else HANDSHAKE_TIMEOUT)
            self._parked[conn.fileno()] = conn
            self._poll.register(conn.fileno(), conn.wants | select.POLLHUP | select.POLLERR | _RDHUP)
        elif name == "watch" and _RDHUP:
            self._watched[conn.fileno()] = conn
            self._poll.register(conn.fileno(), _RDHUP)
        elif name == "unwatch" and self._watched.get(conn.fileno()) is conn:
            del self._watched[conn.fileno()]
            self._forget(conn.fileno())

    def _forget(self, fd: int) -> None:
        try:
            self._poll.unregister(fd)
        except (KeyError, ValueError):
            pass

    def _accept(self) -> None:
        while True:
            try:
                sock, address = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # out of descriptors and the like: pause accepting, serve the others
                log.warning("webhook server: accept failed (%s): accepting again in %gs", exc, _ACCEPT_PAUSE)
                self._forget(self._listener.fileno())
                self._accept_resume = self._clock.now() + _ACCEPT_PAUSE
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._dispatch(Connection(sock, f"{address[0]}:{address[1]}"))

    def _unpark(self, fd: int, events: int) -> None:
        conn = self._parked.pop(fd)
        self._forget(fd)
        if events & (select.POLLHUP | select.POLLERR | select.POLLNVAL | _RDHUP) and not events & conn.wants:
            conn.close()
        else:
            self._dispatch(conn)

    def _close_listener(self) -> None:
        if self._listening and self._accept_resume is None:
            # the kernel's backlog first: clients (a proxy, kube-apiserver) see those connections as open,
            # so they are accepted and answered (with Connection: close) rather than reset by close()
            self._accept()
        self._listening = False
        self._forget(self._listener.fileno())
        self._listener.close()
        self.listener_closed.set()

    def _close_parked(self) -> None:
        """Close idle connections."""
        for fd, conn in list(self._parked.items()):
            del self._parked[fd]
            self._forget(fd)
            conn.close()
        self.idle_closed.set()

    def _next_idle_ms(self) -> int | None:
        deadlines = [c.deadline for c in self._parked.values()]
        if self._accept_resume is not None:
            deadlines.append(self._accept_resume)
        if not deadlines:
            return None
        return max(0, int((min(deadlines) - self._clock.now()) * 1000) + 1)

    def _close_expired(self) -> None:
        now = self._clock.now()
        for fd, conn in list(self._parked.items()):
            if conn.deadline <= now:
                del self._parked[fd]
                self._forget(fd)
                conn.close()
