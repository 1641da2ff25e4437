"""Example set-up: a fake API server (with a few pods) when no KUBECONFIG is given."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
from typing import Iterator, Mapping, Sequence

from cloudcoil_cache.errors import ResourceConflict
from cloudcoil_cache.testing import FakeAPIServer, make_pod

#: The pods every example starts with (namespace → names).
PODS: Mapping[str, Sequence[str]] = {"default": ("web-0", "web-1"), "other": ("web-0",)}


def _started(pods: Mapping[str, Sequence[str]]) -> FakeAPIServer:
    server = FakeAPIServer(bookmark_interval=1.0).start()
    for namespace, names in pods.items():
        with contextlib.suppress(ResourceConflict):  # the server may create "default" itself
            server.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        for index, name in enumerate(names):
            server.create("pods", make_pod(name, namespace, index=index), namespace)
    return server


@contextlib.contextmanager
def cluster(pods: Mapping[str, Sequence[str]] = PODS) -> Iterator[FakeAPIServer | None]:
    """Yield ``None`` when ``KUBECONFIG`` names a cluster; otherwise start a fake API server with
    ``pods``, point ``KUBECONFIG`` at it (the examples build ``Config()`` without a kubeconfig
    argument), yield the server, and stop it (and restore ``KUBECONFIG``) afterwards."""
    if os.environ.get("KUBECONFIG"):
        yield None
        return
    fake = ProcessCluster(pods)
    try:
        yield fake.server
    finally:
        fake.stop()


class ProcessCluster:
    """``cluster()`` for the life of this process (for an app module a server imports): started now,
    stopped by ``stop()`` or at interpreter exit, by the process that started it only. A fork child
    (a worker of ``gunicorn --preload`` or of uWSGI's master) shares that process's fake server and
    kubeconfig, and leaves both alone when it exits (the server's threads are not in the child)."""

    def __init__(self, pods: Mapping[str, Sequence[str]] = PODS) -> None:
        self.server: FakeAPIServer | None = None
        self._pid = os.getpid()
        self._previous = os.environ.get("KUBECONFIG")
        self._folder = ""
        if self._previous:
            return  # KUBECONFIG names the cluster
        self.server = _started(pods)
        self._folder = tempfile.mkdtemp(prefix="example-cluster-")
        os.environ["KUBECONFIG"] = self.server.write_kubeconfig(os.path.join(self._folder, "kubeconfig"))
        atexit.register(self.stop)

    def stop(self) -> None:
        """Stop the fake server and restore ``KUBECONFIG`` (nothing in a fork child, nor a second time)."""
        if self.server is None or os.getpid() != self._pid:
            return
        atexit.unregister(self.stop)
        server, self.server = self.server, None
        try:
            server.stop()
        finally:
            shutil.rmtree(self._folder, ignore_errors=True)
            if self._previous is None:
                os.environ.pop("KUBECONFIG", None)
            else:
                os.environ["KUBECONFIG"] = self._previous


def api_reads(server: FakeAPIServer | None) -> list[str]:
    """The GET/LIST requests the fake server received (``[]`` against a real cluster)."""
    if server is None:
        return []
    return [f"{r.verb} {r.path}" for r in server.requests if r.verb in ("get", "list")]
