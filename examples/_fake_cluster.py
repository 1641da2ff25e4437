"""Example set-up: a fake API server (with a few pods) when no KUBECONFIG is given."""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Iterator, Mapping, Sequence

from cloudcoil_cache.errors import ResourceConflict
from cloudcoil_cache.testing import FakeAPIServer, make_pod

#: The pods every example starts with (namespace → names).
PODS: Mapping[str, Sequence[str]] = {"default": ("web-0", "web-1"), "other": ("web-0",)}


@contextlib.contextmanager
def cluster(pods: Mapping[str, Sequence[str]] = PODS) -> Iterator[FakeAPIServer | None]:
    """Yield ``None`` when ``KUBECONFIG`` names a cluster; otherwise start a fake API server with
    ``pods``, point ``KUBECONFIG`` at it (the examples build ``Config()`` without a kubeconfig
    argument), yield the server, and stop it (and restore ``KUBECONFIG``) afterwards."""
    if os.environ.get("KUBECONFIG"):
        yield None
        return
    previous = os.environ.get("KUBECONFIG")
    with FakeAPIServer(bookmark_interval=1.0) as server, tempfile.TemporaryDirectory() as tmp:
        for namespace, names in pods.items():
            with contextlib.suppress(ResourceConflict):  # the server may create "default" itself
                server.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
            for index, name in enumerate(names):
                server.create("pods", make_pod(name, namespace, index=index), namespace)
        os.environ["KUBECONFIG"] = server.write_kubeconfig(os.path.join(tmp, "kubeconfig"))
        try:
            yield server
        finally:
            if previous is None:
                os.environ.pop("KUBECONFIG", None)
            else:
                os.environ["KUBECONFIG"] = previous


def api_reads(server: FakeAPIServer | None) -> list[str]:
    """The GET/LIST requests the fake server received (``[]`` against a real cluster)."""
    if server is None:
        return []
    return [f"{r.verb} {r.path}" for r in server.requests if r.verb in ("get", "list")]
