"""The names sharding puts on objects and Leases (one place), and the guarded label patch that moves an object."""

from __future__ import annotations

import json
from typing import Any, Mapping

from cloudcoil_cache._listwatch import object_path
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller._shard_lease import RING_LABEL

__all__ = [
    "DRAIN_LABEL_PREFIX",
    "RING_LABEL",
    "SHARD_LABEL_PREFIX",
    "SHARDER_LEASE_SUFFIX",
    "and_selectors",
    "drain_label",
    "patch_labels",
    "shard_label",
]

#: ``shard.cloudcoil.dev/<ring>=<replica>``: the replica an object is assigned to (its informers select it).
SHARD_LABEL_PREFIX = "shard.cloudcoil.dev/"
#: ``drain.cloudcoil.dev/<ring>=true``: the sharder asks the object's replica to let it go (presence only).
DRAIN_LABEL_PREFIX = "drain.cloudcoil.dev/"
#: The sharder's leader election runs on the Lease ``<ring>-sharder`` (in the ring's namespace).
SHARDER_LEASE_SUFFIX = "-sharder"


def shard_label(ring: str) -> str:
    return SHARD_LABEL_PREFIX + ring


def drain_label(ring: str) -> str:
    return DRAIN_LABEL_PREFIX + ring


def and_selectors(*selectors: str | None) -> str | None:
    """Label selectors ANDed (comma-joined), None when there is none."""
    parts = [s for s in selectors if s]
    return ",".join(parts) or None


def patch_labels(
    config: Config, kind: Any, namespace: str | None, name: str, resource_version: str | None, labels: Mapping[str, Any]
) -> dict[str, Any]:
    """Merge-patch ``labels`` (None removes one) with ``resourceVersion`` as a precondition (a stale one
    is a ``ResourceConflict``); the object as written."""
    metadata: dict[str, Any] = {"labels": dict(labels)}
    if resource_version:
        metadata["resourceVersion"] = resource_version
    if config.cache is not None:  # as every write through the client: the cache waits to see it
        config.cache.will_write(kind)
    response = config.transport.request(
        "PATCH",
        object_path(kind, name, namespace),
        body=json.dumps({"metadata": metadata}).encode(),
        content_type="application/merge-patch+json",
    )
    data: dict[str, Any] = response.json()
    return data
