"""The direct object API of FakeAPIServer: writes without HTTP, same revisions and events."""

from __future__ import annotations

import json
from typing import Any

from ...errors import APIError, api_error_from_status
from .machinery import status as _status
from .machinery.resources import ResourceRegistry, ResourceType
from .storage.store import Store, Stored

__all__ = ["ObjectAPI"]

_MANAGER = "fake-api-server"


class ObjectAPI:
    """Mixin: create/update/patch/delete/get/list objects directly (thread-safe, no HTTP).

    Every write bumps the global revision and notifies watchers exactly like an HTTP write.
    Resources are named by plural ("pods"), "plural.group" ("deployments.apps"), kind or short
    name. Results are copies; errors are the ``cloudcoil_cache.errors`` class the HTTP API's
    Status maps to (``ResourceNotFound``, ``ResourceConflict``, ...).
    """

    _store: Store
    registry: ResourceRegistry
    kubelet: bool

    def _type(self, resource: str) -> ResourceType:
        try:
            return self.registry.resolve(resource)
        except KeyError as exc:
            raise ValueError(str(exc.args[0])) from None

    @staticmethod
    def _ns(rtype: ResourceType, namespace: str | None, obj: dict[str, Any] | None = None) -> str | None:
        if not rtype.namespaced:
            return None
        if namespace:
            return namespace
        meta = (obj or {}).get("metadata") or {}
        return str(meta.get("namespace") or "default")

    @staticmethod
    def _raise(exc: _status.StatusError) -> APIError:
        return api_error_from_status(exc.code, exc.body)

    @staticmethod
    def _copy(obj: Any) -> Any:
        """A deep, JSON-only copy (also rejects values JSON cannot carry)."""
        return json.loads(json.dumps(obj))

    @staticmethod
    def _loads(data: bytes) -> dict[str, Any]:
        obj: dict[str, Any] = json.loads(data)
        return obj

    def create(
        self,
        resource: str,
        obj: dict[str, Any],
        namespace: str | None = None,
        *,
        field_manager: str = _MANAGER,
    ) -> dict[str, Any]:
        """Create an object (``resource``: "pods", "deployments.apps", "Pod"); returns a copy.

        Validated, defaulted and admitted like an HTTP create (admission webhooks are not
        called); ``field_manager`` owns its fields (an ``Update`` entry in ``managedFields``).
        Raises the ``cloudcoil_cache.errors`` class of the Status the HTTP API would answer.
        """
        rtype = self._type(resource)
        try:
            return self._loads(
                Stored(
                    self._store.create(rtype, self._copy(obj), self._ns(rtype, namespace, obj), manager=field_manager)
                ).full()
            )
        except _status.StatusError as exc:
            raise self._raise(exc) from None

    def update(
        self,
        resource: str,
        obj: dict[str, Any],
        namespace: str | None = None,
        *,
        field_manager: str = _MANAGER,
    ) -> dict[str, Any]:
        """Replace an object, status included (a stale ``metadata.resourceVersion`` → conflict)."""
        rtype = self._type(resource)
        name = str((obj.get("metadata") or {}).get("name") or "")
        if not name:
            raise ValueError("update: obj has no metadata.name")
        try:
            stored = self._store.replace(
                rtype,
                name,
                self._ns(rtype, namespace, obj),
                self._copy(obj),
                keep_status=False,
                manager=field_manager,
            )
        except _status.StatusError as exc:
            raise self._raise(exc) from None
        return self._loads(Stored(stored).full())

    def patch(
        self,
        resource: str,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: str = "merge",
        subresource: str | None = None,
        field_manager: str = _MANAGER,
    ) -> dict[str, Any]:
        """Apply a ``"merge"``, ``"json"`` or ``"strategic"`` patch like an HTTP PATCH would."""
        types = {
            "merge": "application/merge-patch+json",
            "json": "application/json-patch+json",
            "strategic": "application/strategic-merge-patch+json",
        }
        if patch_type not in types:
            raise ValueError(f"patch_type must be 'merge', 'json' or 'strategic', got {patch_type!r}")
        rtype = self._type(resource)
        try:
            stored = self._store.patch(
                rtype,
                name,
                self._ns(rtype, namespace),
                types[patch_type],
                self._copy(patch),
                subresource,
                manager=field_manager,
            )
        except _status.StatusError as exc:
            raise self._raise(exc) from None
        return self._loads(Stored(stored).full())

    def delete(
        self,
        resource: str,
        name: str,
        namespace: str | None = None,
        *,
        grace_period_seconds: int | None = 0,
    ) -> dict[str, Any]:
        """Delete an object; returns its last state (with the deletion's resourceVersion), or,
        when finalizers (or a pod's graceful termination) keep it, the object with its
        ``deletionTimestamp``.

        Unlike an HTTP DELETE, the default is a forced deletion (``grace_period_seconds=0``, as
        ``kubectl delete --force --grace-period=0``): a pod on a node goes at once. Pass ``None``
        for the pod's own grace period, as a plain HTTP DELETE has.
        """
        rtype = self._type(resource)
        try:
            return self._loads(
                Stored(
                    self._store.delete(
                        rtype, name, self._ns(rtype, namespace), grace_period=grace_period_seconds, kubelet=self.kubelet
                    )
                ).full()
            )
        except _status.StatusError as exc:
            raise self._raise(exc) from None

    def get(self, resource: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        rtype = self._type(resource)
        try:
            return self._loads(self._store.get(rtype, name, self._ns(rtype, namespace)).full())
        except _status.StatusError as exc:
            raise self._raise(exc) from None

    def list(self, resource: str, namespace: str | None = None) -> list[dict[str, Any]]:
        """Copies of the objects of ``resource`` (all namespaces when ``namespace`` is None)."""
        rtype = self._type(resource)
        entries = self._store.all_objects(rtype)
        return [
            json.loads(e.full())
            for e in entries
            if namespace is None or e.obj["metadata"].get("namespace") == namespace
        ]
