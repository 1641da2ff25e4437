"""``seed_pods``: fill a fake server's storage with many realistic pods (and what they refer to) fast."""

from __future__ import annotations

import gc
from typing import Sequence

from ..data.objects import make_node, make_replica_set, owner_name, seeded_apps, seeded_pod
from .server import FakeAPIServer
from .storage.store import Store

__all__ = ["seed_pods"]


def seed_pods(
    server: FakeAPIServer,
    n: int,
    namespaces: Sequence[str] = ("default", "kube-system", "team-a", "team-b"),
) -> list[str]:
    """Create ``n`` realistic pods spread round-robin over ``namespaces``; returns their keys.

    Names are ``<app>-<hash>-<index>``; about 1 in 8 pods is Pending or Succeeded. The pods are
    stored as given (no validation or defaulting: they are complete already). On a server with
    ``namespace_lifecycle=True`` what they refer to is created first when missing: their
    namespaces, their nodes (``node-00``...) and the ReplicaSets that own them.
    """
    if not namespaces:
        raise ValueError("seed_pods: namespaces must not be empty")
    store, registry = server.context.store, server.context.registry
    keys = []
    rtype = registry.resolve("pods")
    owners: dict[tuple[str, str], str] = {}
    if server.namespace_lifecycle:
        owners = _seed_dependencies(server, namespaces, n)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of new dicts would trigger ever slower full collections
    try:
        for i in range(n):
            namespace, app, pod = seeded_pod(i, namespaces)
            if owners:
                pod["metadata"]["ownerReferences"][0]["uid"] = owners[(namespace, app)]
            # make_pod builds fresh dicts, so the store may own them without create()'s copy.
            store.create(rtype, pod, namespace, admit=False)
            keys.append(f"{namespace}/{pod['metadata']['name']}")
    finally:
        if gc_was_enabled:
            gc.enable()
    return keys


def _seed_dependencies(server: FakeAPIServer, namespaces: Sequence[str], n: int) -> dict[tuple[str, str], str]:
    """What seeded pods refer to: their namespaces, nodes and owning ReplicaSets (created when
    missing); returns the ReplicaSets' uids by (namespace, app)."""
    store: Store = server.context.store
    registry = server.context.registry
    ns_type = registry.resolve("namespaces")
    node_type = registry.resolve("nodes")
    rs_type = registry.resolve("replicasets.apps")
    for namespace in dict.fromkeys(namespaces):
        if not store.exists(ns_type, namespace, None):
            store.create(ns_type, {"metadata": {"name": namespace}}, None)
    for index in range(min(n, 16)):
        name = f"node-{index:02d}"
        if not store.exists(node_type, name, None):
            store.create(node_type, make_node(name), None, admit=False)
    owners: dict[tuple[str, str], str] = {}
    for namespace, app in seeded_apps(namespaces, n):
        rs_name = owner_name(namespace, app)
        if not store.exists(rs_type, rs_name, namespace):
            store.create(rs_type, make_replica_set(rs_name, namespace, app), namespace)
        owners[(namespace, app)] = store.get(rs_type, rs_name, namespace).obj["metadata"]["uid"]
    return owners
