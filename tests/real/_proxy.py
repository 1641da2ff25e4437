"""A loopback TCP proxy for the real tier: cuts connections (dropped watches) and refuses new ones."""

from __future__ import annotations

import selectors
import socket
import threading


class CuttingProxy:
    """Forwards 127.0.0.1:<port> to a target port byte for byte (TLS passes through untouched).

    ``cut()`` closes every open connection (clients see the stream end or reset). While
    ``block()`` is in force new connections are accepted and closed at once, so clients cannot reach
    the server; ``unblock()`` lets them through again. One thread runs everything; ``close()``
    joins it.
    """

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.setblocking(False)
        self.port: int = self._listener.getsockname()[1]
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._listener, selectors.EVENT_READ, None)
        self._wake_r, self._wake_w = socket.socketpair()
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        self._lock = threading.Lock()
        self._pairs: dict[socket.socket, socket.socket] = {}
        self._requests: list[str] = []
        self._blocked = False
        self._closing = False
        self.connections = 0
        self._accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._run, name="CuttingProxy", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def cut(self, latest_only: bool = False) -> None:
        """Close every open connection, or only the one accepted last (``latest_only``)."""
        self._ask("cut-latest" if latest_only else "cut")

    def block(self) -> None:
        with self._lock:
            self._blocked = True
        self._ask("cut")

    def unblock(self) -> None:
        with self._lock:
            self._blocked = False

    def close(self) -> None:
        self._ask("close")
        self._thread.join(10)
        self._wake_w.close()

    def __enter__(self) -> CuttingProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ask(self, what: str) -> None:
        done = threading.Event()
        with self._lock:
            self._requests.append(what)
            self._done = done
        self._wake_w.send(b"x")
        done.wait(10)

    def _drop_all(self) -> None:
        for sock in list(self._pairs):
            self._sel.unregister(sock)
            sock.close()
        self._pairs.clear()

    def _run(self) -> None:
        while True:
            for key, _ in self._sel.select():
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if sock is self._wake_r:
                    if self._serve_requests():
                        return
                    break  # the selector's registrations changed
                if sock is self._listener:
                    self._accept()
                else:
                    self._forward(sock)

    def _serve_requests(self) -> bool:
        """Do what ``_ask`` was asked; True once the proxy is closed."""
        self._wake_r.recv(1024)
        with self._lock:
            requests, self._requests = self._requests, []
            done = self._done
        if requests == ["cut-latest"]:
            self._cut_latest()
        else:
            self._drop_all()
        if "close" in requests:
            self._sel.close()
            self._listener.close()
            self._wake_r.close()
            done.set()
            return True
        done.set()
        return False

    def _cut_latest(self) -> None:
        if self._accepted:
            latest = self._accepted[-1]
            for sock in (latest, self._pairs.get(latest)):
                if sock is not None and sock in self._pairs:
                    self._sel.unregister(sock)
                    del self._pairs[sock]
                    sock.close()

    def _accept(self) -> None:
        try:
            client, _ = self._listener.accept()
        except BlockingIOError:
            return
        with self._lock:
            blocked = self._blocked
        if blocked:
            client.close()
            return
        try:
            upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
        except OSError:
            client.close()
            return
        self.connections += 1
        self._accepted = [c for c in self._accepted if c in self._pairs] + [client]
        for a, b in ((client, upstream), (upstream, client)):
            a.setblocking(True)
            self._pairs[a] = b
            self._sel.register(a, selectors.EVENT_READ, None)

    def _forward(self, sock: socket.socket) -> None:
        peer = self._pairs.get(sock)
        if peer is None:
            return
        try:
            data = sock.recv(65536)
            if data:
                peer.sendall(data)
                return
        except OSError:
            pass
        for s in (sock, peer):  # one side ended: end both
            if s in self._pairs:
                self._sel.unregister(s)
                del self._pairs[s]
                s.close()
