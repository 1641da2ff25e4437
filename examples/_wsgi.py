"""Example set-up: run a WSGI app under waitress (a real multi-threaded server) on a thread, and stop it."""

from __future__ import annotations

import logging
import threading
from typing import Any

__all__ = ["WaitressThread"]


class WaitressThread:
    """``with WaitressThread(app, threads=8) as server:`` serves ``app`` at ``server.url`` until the block ends.

    On exit every connection is closed, waitress's worker threads are shut down and joined, and the
    serving thread is joined.
    """

    def __init__(self, app: Any, *, threads: int = 8, host: str = "127.0.0.1", port: int = 0) -> None:
        from waitress.server import create_server

        self._server: Any = create_server(
            app, host=host, port=port, threads=threads, connection_limit=256, channel_timeout=30
        )
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="example-waitress", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.socket.getsockname()[:2]
        return f"http://{host}:{port}"

    def _run(self) -> None:
        try:
            self._server.run()
        except OSError:
            if not self._stopped:
                raise

    def __enter__(self) -> WaitressThread:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Close every channel (the accept loop ends when none is left), then stop the workers."""
        if self._stopped:
            return
        self._stopped = True
        self._server.logger.setLevel(logging.CRITICAL)
        while self._server._map:
            for channel in list(self._server._map.values()):
                channel.handle_close()
        self._server.maintenance(0)
        self._server.task_dispatcher.shutdown()
        self._thread.join(10)
