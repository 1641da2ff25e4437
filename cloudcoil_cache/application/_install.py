"""Installing manifests: server-side apply of each object in order; waits for CRDs Established, Deployments up."""

from __future__ import annotations

import logging
from typing import Any, Sequence

from cloudcoil_cache.client import Config
from cloudcoil_cache.resources import resource_class_for

__all__ = ["apply_all", "wait_available", "wait_established"]

log = logging.getLogger("cloudcoil_cache.application")


def _client(doc: dict[str, Any], config: Config) -> Any:
    api_version, kind = str(doc.get("apiVersion", "")), str(doc.get("kind", ""))
    cls = resource_class_for(api_version, kind)
    if cls is None:
        raise ValueError(f"install: no resource class for apiVersion={api_version!r} kind={kind!r}")
    return cls.client(config)


def apply_all(docs: Sequence[dict[str, Any]], config: Config, *, field_manager: str) -> list[Any]:
    """Server-side apply every document, in order (forcing: the application owns these fields)."""
    applied = []
    for doc in docs:
        meta = doc.get("metadata") or {}
        client = _client(doc, config)
        applied.append(
            client.patch(
                meta["name"],
                doc,
                namespace=meta.get("namespace"),
                patch_type="apply",
                field_manager=field_manager,
                force=True,
            )
        )
        log.info("install: applied %s %s", doc["kind"], "/".join(filter(None, (meta.get("namespace"), meta["name"]))))
    return applied


def _available(replicas: int) -> Any:
    def check(event_type: str, obj: Any) -> bool:
        status = obj.status
        generation = obj.metadata.generation or 0
        return (
            event_type != "DELETED"
            and status is not None
            and (status.observed_generation or 0) >= generation
            and (status.updated_replicas or 0) >= replicas
            and (status.available_replicas or 0) >= replicas
        )

    return check


def wait_available(deployment: Any, config: Config, *, replicas: int, timeout: float) -> None:
    """Block until ``deployment`` has ``replicas`` updated, available replicas (``WaitTimeout`` after ``timeout``)."""
    client = type(deployment).client(config)
    current = client.get(deployment.metadata.name, namespace=deployment.metadata.namespace)
    if _available(replicas)("MODIFIED", current):
        return
    client.wait_for(current, {"available": _available(replicas)}, timeout=timeout)


def _established(event_type: str, obj: Any) -> bool:
    conditions = (obj.to_dict().get("status") or {}).get("conditions") or ()
    return event_type != "DELETED" and any(
        c.get("type") == "Established" and c.get("status") == "True" for c in conditions if isinstance(c, dict)
    )


def wait_established(crd: Any, config: Config, *, timeout: float) -> None:
    """Block until the CustomResourceDefinition ``crd`` is Established: its kinds are served, and in
    discovery (``WaitTimeout`` after ``timeout``)."""
    client = type(crd).client(config)
    current = client.get(crd.metadata.name)
    if _established("MODIFIED", current):
        return
    client.wait_for(current, {"established": _established}, timeout=timeout)
