"""API methods of resource classes (``Pod.get``, ``pod.create()``...), delegated to the client.

Models sit at the bottom layer and must not import the client. The client layer installs a
factory here when it is imported (``set_client_factory``); the methods below only call it. If
nobody imported the client yet, the first call imports it (the one place a lower layer reaches
up, by name, so that ``from ...core.v1 import Pod; Pod.list()`` works on its own).
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, TypeVar

__all__ = ["ResourceMethods", "set_client_factory"]

R = TypeVar("R", bound="ResourceMethods")

#: ``factory(cls, config, cached, is_async) -> ResourceClient | AsyncResourceClient``
_factory: Callable[[type, Any, bool, bool], Any] | None = None


def set_client_factory(factory: Callable[[type, Any, bool, bool], Any]) -> None:
    global _factory
    _factory = factory


def _clients() -> Callable[[type, Any, bool, bool], Any]:
    if _factory is None:
        importlib.import_module("cloudcoil_cache.client")
    assert _factory is not None, "cloudcoil_cache.client did not install its client factory"
    return _factory


class ResourceMethods:
    """Class and instance methods that read through the active config's cache and write to the API.

    Reads (``get``, ``list``) use the active Config (``with config:``), else the process default
    (``config.set_default()``), else a Config discovered from the environment.
    """

    __slots__ = ()

    # ---------------------------------------------------------------- clients
    @classmethod
    def client(cls, config: Any = None, cached: bool = False) -> Any:
        """An explicit client for this kind (live unless ``cached=True``)."""
        return _clients()(cls, config, cached, False)

    @classmethod
    async def async_client(cls, config: Any = None, cached: bool = False) -> Any:
        """The async twin of ``client()`` (discovery, if still needed, runs off the event loop)."""
        return await _clients()(cls, config, cached, True).ready()

    # ------------------------------------------------------------------ reads
    @classmethod
    def get(cls: type[R], name: str, namespace: str | None = None) -> R:
        """The object ``name``, from the cache when it can serve it (api.md), else the API."""
        return cls.client(cached=True).get(name, namespace)  # type: ignore[no-any-return]

    @classmethod
    async def async_get(cls: type[R], name: str, namespace: str | None = None) -> R:
        return await (await cls.async_client(cached=True)).get(name, namespace)  # type: ignore[no-any-return]

    @classmethod
    def list(cls, namespace: str | None = None, all_namespaces: bool = False,
             label_selector: str | None = None, field_selector: str | None = None,
             limit: int | None = None, continue_: str | None = None) -> Any:
        """A list result (``items``, ``metadata``; iterating walks every page), cache-routed."""
        return cls.client(cached=True).list(namespace, all_namespaces, label_selector,
                                            field_selector, limit, continue_)

    @classmethod
    async def async_list(cls, namespace: str | None = None, all_namespaces: bool = False,
                         label_selector: str | None = None, field_selector: str | None = None,
                         limit: int | None = None, continue_: str | None = None) -> Any:
        client = await cls.async_client(cached=True)
        return await client.list(namespace, all_namespaces, label_selector, field_selector, limit,
                                 continue_)

    @classmethod
    def watch(cls, **kwargs: Any) -> Any:
        """A generator of ``(type, object)`` from one live watch (see ``ResourceClient.watch``)."""
        return cls.client().watch(**kwargs)

    @classmethod
    async def async_watch(cls, **kwargs: Any) -> Any:
        return (await cls.async_client()).watch(**kwargs)

    @classmethod
    def delete(cls, name: str, namespace: str | None = None, **kwargs: Any) -> Any:
        """Delete ``name`` on the API server (``propagation_policy``, ``preconditions``...)."""
        return cls.client().delete(name, namespace, **kwargs)

    @classmethod
    async def async_delete(cls, name: str, namespace: str | None = None, **kwargs: Any) -> Any:
        return await (await cls.async_client()).delete(name, namespace, **kwargs)

    # ----------------------------------------------------------------- writes
    def create(self: R, **kwargs: Any) -> R:
        """Create this object; returns the server's copy."""
        return type(self).client().create(self, **kwargs)  # type: ignore[no-any-return]

    async def async_create(self: R, **kwargs: Any) -> R:
        return await (await type(self).async_client()).create(self, **kwargs)  # type: ignore[no-any-return]

    def update(self: R, **kwargs: Any) -> R:
        """Replace this object (PUT); a stale resourceVersion raises ``ResourceConflict``."""
        return type(self).client().update(self, **kwargs)  # type: ignore[no-any-return]

    async def async_update(self: R, **kwargs: Any) -> R:
        return await (await type(self).async_client()).update(self, **kwargs)  # type: ignore[no-any-return]

    def update_status(self: R, **kwargs: Any) -> R:
        """Replace this object's status subresource."""
        return type(self).client().update_status(self, **kwargs)  # type: ignore[no-any-return]

    async def async_update_status(self: R, **kwargs: Any) -> R:
        return await (await type(self).async_client()).update_status(self, **kwargs)  # type: ignore

    def patch(self: R, patch: Any, **kwargs: Any) -> R:
        """Patch this object (``patch_type`` "merge", "json", "strategic" or "apply")."""
        meta = self.metadata  # type: ignore[attr-defined]
        return type(self).client().patch(meta.name, patch, namespace=meta.namespace,  # type: ignore
                                         **kwargs)

    async def async_patch(self: R, patch: Any, **kwargs: Any) -> R:
        meta = self.metadata  # type: ignore[attr-defined]
        client = await type(self).async_client()
        return await client.patch(meta.name, patch, namespace=meta.namespace, **kwargs)  # type: ignore

    def apply(self: R, **kwargs: Any) -> R:
        """Server-side apply this object (``field_manager``, ``force``)."""
        return type(self).client().apply(self, **kwargs)  # type: ignore[no-any-return]

    async def async_apply(self: R, **kwargs: Any) -> R:
        return await (await type(self).async_client()).apply(self, **kwargs)  # type: ignore

    def remove(self, **kwargs: Any) -> Any:
        """Delete this object on the API server."""
        meta = self.metadata  # type: ignore[attr-defined]
        return type(self).client().delete(meta.name, meta.namespace, **kwargs)

    async def async_remove(self, **kwargs: Any) -> Any:
        meta = self.metadata  # type: ignore[attr-defined]
        return await (await type(self).async_client()).delete(meta.name, meta.namespace, **kwargs)

    def scale(self, replicas: int) -> Any:
        """Set ``spec.replicas`` through the scale subresource; returns the updated object."""
        meta = self.metadata  # type: ignore[attr-defined]
        return type(self).client().scale(meta.name, replicas, meta.namespace)

    async def async_scale(self, replicas: int) -> Any:
        meta = self.metadata  # type: ignore[attr-defined]
        return await (await type(self).async_client()).scale(meta.name, replicas, meta.namespace)
