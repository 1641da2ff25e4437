"""Web-app set-up: set_default() from several request threads at once, then one close()."""

from __future__ import annotations

import threading

from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import make_pod


def test_set_default_called_by_two_threads_at_once_is_closed_by_one_close(server, make_config):
    """Two request threads that lazily call config.set_default() at the same moment both pass the
    "already the default" check while the first sync runs: the config holds two references, close()
    raises "while 1 scope(s) of it are open" (no scope was entered) and the reflector keeps running."""
    server.create("pods", make_pod("web-0", "default"), "default")
    config = make_config(resources=[Pod])
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def start() -> None:
        barrier.wait()
        try:
            config.set_default()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    with server.delay(0.2):  # a sync that takes a moment, as on a real cluster
        threads = [threading.Thread(target=start, name=f"probe-request-{i}") for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
    assert errors == []
    close_error = None
    try:
        config.close()
    except RuntimeError as exc:
        close_error = exc
        config.deactivate()  # release the extra reference so the test leaves nothing running
        config.close()
    assert close_error is None, f"close() after set_default() from two threads: {close_error}"
