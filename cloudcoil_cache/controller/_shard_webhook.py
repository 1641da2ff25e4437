"""The ring's mutating webhook: label a new (or unlabelled) object with the shard the ring gives it."""

from __future__ import annotations

from typing import Any, Callable, Iterable

from cloudcoil_cache.admission import AdmissionRequest, AdmissionWebhook
from cloudcoil_cache.controller._ring import hash_key, owner_hash_key
from cloudcoil_cache.controller._sharding import Ring

__all__ = ["register_shard_webhook", "shard_webhook_path"]


def shard_webhook_path(ring: Ring, kind: Any) -> str:
    """``/shard/<ring>/<group or core>/<version>/<plural>``."""
    return f"/shard/{ring.name}/{kind.group or 'core'}/{kind.version}/{kind.plural}"


def register_shard_webhook(
    webhook: AdmissionWebhook, ring: Ring, controllers: Iterable[Any], *, namespace: str | None = None
) -> AdmissionWebhook:
    """Register on ``webhook`` one mutating route per sharded kind of ``controllers`` (their primary
    and owned kinds; a kind once): CREATE and UPDATE, ``objectSelector`` shard label ``DoesNotExist``
    (an object is labelled once; the drain's UPDATE, which removes the label, is assigned again at
    once), ``failurePolicy: Ignore`` (the sharder labels what the webhook missed), 5 s timeout. A
    controller of one namespace (its ``namespace``, else ``namespace`` unless it watches all) gets a
    ``namespaceSelector`` on ``kubernetes.io/metadata.name``: objects elsewhere are never labelled.

    A primary gets the member the ring gives its key (``group/Kind/namespace/name``; one created with
    ``generateName`` has no name yet and is left to the sharder); a child controlled by a primary the
    member of its owner's key. The ring is the live members as this replica sees them (the Leases)."""
    done: set[Any] = set()
    for controller in controllers:
        main = controller.kind
        where = None if controller.all_namespaces else (controller.namespace or namespace)
        for kind in (main, *controller.owned_kinds):
            model = getattr(kind, "metadata_of", kind)  # an owns(metadata_only=True) kind: its full class
            if model in done:
                continue
            done.add(model)
            handler = _assign(ring, model, None if model is main else main)
            options: dict[str, Any] = {}
            if where and model.namespaced:
                options["namespace_selector"] = {"matchLabels": {"kubernetes.io/metadata.name": where}}
            webhook.mutating(
                model,
                operations=("CREATE", "UPDATE"),
                failure_policy="Ignore",
                timeout_seconds=5,
                path=shard_webhook_path(ring, model),
                object_selector={"matchExpressions": [{"key": ring.shard_label, "operator": "DoesNotExist"}]},
                **options,
            )(handler)
    return webhook


def _assign(ring: Ring, kind: Any, owner_kind: Any) -> Callable[[AdmissionRequest[Any]], Any]:
    def assign_shard(request: AdmissionRequest[Any]) -> Any:
        obj = request.resource
        if obj is None or obj.metadata is None:
            return None
        labels = dict(obj.metadata.labels or {})
        if labels.get(ring.shard_label):
            return None
        namespace = (obj.metadata.namespace or request.namespace or None) if kind.namespaced else None
        if owner_kind is None:
            name = obj.metadata.name or request.name
            if not name:
                return None  # generateName: no key yet (the sharder labels it once created)
            key: str | None = hash_key(kind.group, kind.kind, namespace, name)
        else:
            key = owner_hash_key(obj, owner_kind, namespace)
        member = ring.ring().owner(key) if key is not None else None
        if member is None:
            return None  # not a child of the ring's kind, or no live member: the sharder decides later
        labels[ring.shard_label] = member
        obj.metadata.labels = labels
        return obj

    return assign_shard
