"""Where the commands connect: the user's kubeconfig/context, or the embedded fake cluster (``--fake``)."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any, Iterator

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import ResourceConflict
from cloudcoil_cache.testing import FakeAPIServer, make_configmap, make_deployment, seed_pods

__all__ = ["FAKE_NAMESPACES", "Connector", "connect", "fake_cluster", "seed_fake_cluster"]

#: The namespaces the embedded cluster's objects live in.
FAKE_NAMESPACES = ("default", "kube-system", "team-a", "team-b")


def seed_fake_cluster(server: FakeAPIServer, pods: int) -> None:
    """Realistic contents: ``pods`` pods, a Deployment and a ConfigMap per app, namespaces and nodes."""
    for namespace in FAKE_NAMESPACES:  # first: a server that checks namespaces exist needs them
        with contextlib.suppress(ResourceConflict):  # already there
            server.create(
                "namespaces",
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {"name": namespace},
                    "status": {"phase": "Active"},
                },
            )
    seed_pods(server, pods, FAKE_NAMESPACES)
    for index in range(3):
        server.create(
            "nodes",
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": f"node-{index:02d}",
                    "labels": {"node-role.kubernetes.io/control-plane": ""} if index == 0 else {},
                },
                "status": {
                    "conditions": [{"type": "Ready", "status": "True"}],
                    "nodeInfo": {
                        "kubeletVersion": "v1.30.2",
                        "kubeProxyVersion": "v1.30.2",
                        "machineID": f"{index:032x}",
                        "systemUUID": f"{index:032x}",
                        "bootID": f"{index + 100:032x}",
                        "kernelVersion": "6.1.0-18-amd64",
                        "osImage": "Debian GNU/Linux 12 (bookworm)",
                        "containerRuntimeVersion": "containerd://1.7.13",
                        "operatingSystem": "linux",
                        "architecture": "amd64",
                    },
                },
            },
        )
    for namespace in FAKE_NAMESPACES[::2]:
        for app in ("web", "api"):
            deployment = make_deployment(app, namespace, replicas=3)
            deployment["status"] = {"replicas": 3, "readyReplicas": 3, "updatedReplicas": 3, "availableReplicas": 3}
            server.create("deployments.apps", deployment, namespace)
            server.create("configmaps", make_configmap(f"{app}-config", namespace), namespace)


@contextlib.contextmanager
def fake_cluster(pods: int = 24, **server_options: Any) -> Iterator[tuple[FakeAPIServer, str]]:
    """A started, seeded fake API server and the path of a kubeconfig for it (both gone afterwards)."""
    with FakeAPIServer(**server_options) as server, tempfile.TemporaryDirectory(prefix="cloudcoil-cache-") as tmp:
        seed_fake_cluster(server, pods)
        yield server, str(server.write_kubeconfig(Path(tmp) / "kubeconfig"))


class Connector:
    """Builds Configs for one target (kubeconfig path and context) and closes them all at the end."""

    def __init__(self, kubeconfig: str | None, context: str | None) -> None:
        self.kubeconfig = kubeconfig
        self.context = context
        self._made: list[Config] = []

    def config(self, cache: Cache | None = None) -> Config:
        """A Config for the target (discovery done now, so a missing kubeconfig fails here)."""
        config = Config(kubeconfig=self.kubeconfig, context=self.context, cache=cache if cache is not None else False)
        self._made.append(config)
        config.initialize()
        return config

    def close(self) -> None:
        for config in self._made:
            config.close()


@contextlib.contextmanager
def connect(args: Any) -> Iterator[Connector]:
    """A Connector for ``--kubeconfig``/``--context``, or for the embedded cluster with ``--fake``."""
    with contextlib.ExitStack() as stack:
        kubeconfig = getattr(args, "kubeconfig", None)
        if getattr(args, "fake", False):
            _, kubeconfig = stack.enter_context(fake_cluster(getattr(args, "fake_pods", 24)))
        connector = Connector(kubeconfig, getattr(args, "context", None))
        stack.callback(connector.close)
        yield connector
