"""api.md reference example: threaded handlers in a synchronous program (run it as a script).

The api.md snippet leaves the handler body and the ``with`` block as ``...``; here the handler
prints and reports which thread it ran on, and the block changes a pod (fake server) or waits
for a change (real cluster) while the handler runs on its own thread.
"""

from __future__ import annotations

import threading

from _fake_cluster import cluster

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer


def reference_example(server: FakeAPIServer | None, seconds: float) -> list[str]:
    """The code of api.md with its two ``...`` filled in; returns the handler threads' names."""
    seen = threading.Event()
    threads: list[str] = []
    main_thread = threading.current_thread()

    cfg = Config(cache=Cache(resources=[Pod]))
    pods = cfg.cache.get_informer(Pod, sync=True)

    @pods.on_update
    def changed(old, new):
        # ... (the handler's work)
        threads.append(threading.current_thread().name)
        where = "a handler thread" if threading.current_thread() is not main_thread else "the main thread"
        print("changed", new.namespace, new.name, "labels", dict(new.metadata.labels or {}), "on", where)
        seen.set()

    try:
        with cfg:
            # ... handlers run on their own threads while this block runs
            print("cached pods:", len(pods.list()))
            if server is not None:
                server.patch("pods", "web-0", {"metadata": {"labels": {"tier": "edge"}}}, "default")
            if not seen.wait(10 if server is not None else seconds):
                print("no change seen")
    finally:
        cfg.close()
    return threads


def main(seconds: float = 10.0) -> list[str]:
    with cluster() as server:
        return reference_example(server, seconds)


if __name__ == "__main__":
    main()
