"""API methods of resource classes (``Pod.get``, ``pod.create()``...), delegated to the client.

Models sit at the bottom layer and must not import the client. The client layer installs a
factory here when it is imported (``set_client_factory``); the methods below only call it. If
nobody imported the client yet, the first call imports it (the one place a lower layer reaches
up, by name, so that ``from ...core.v1 import Pod; Pod.list()`` works on its own).
"""

from __future__ import annotations

import importlib
import os
from typing import Any, AsyncGenerator, Callable, Generator, Mapping, TypeVar

from cloudcoil_cache.errors import ResourceNotFound
from cloudcoil_cache.models._gvk import GVK

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
        """The object ``name``, from the cache when it can serve it (docs/contract.md), else the API."""
        return cls.client(cached=True).get(name, namespace)  # type: ignore[no-any-return]

    @classmethod
    async def async_get(cls: type[R], name: str, namespace: str | None = None) -> R:
        return await (await cls.async_client(cached=True)).get(name, namespace)  # type: ignore[no-any-return]

    @classmethod
    def list(
        cls,
        namespace: str | None = None,
        all_namespaces: bool = False,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
    ) -> Any:
        """A list result (``items``, ``metadata``; iterating walks every page), cache-routed."""
        return cls.client(cached=True).list(namespace, all_namespaces, label_selector, field_selector, limit, continue_)

    @classmethod
    async def async_list(
        cls,
        namespace: str | None = None,
        all_namespaces: bool = False,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
    ) -> Any:
        client = await cls.async_client(cached=True)
        return await client.list(namespace, all_namespaces, label_selector, field_selector, limit, continue_)

    @classmethod
    def watch(
        cls,
        namespace: str | None = None,
        all_namespaces: bool = False,
        field_selector: str | None = None,
        label_selector: str | None = None,
        resource_version: str | None = None,
        **options: Any,
    ) -> Any:
        """A live watch yielding ``(event_type, object)`` until the caller stops it.

        It never ends on its own: each request the server ends (or that stays quiet for the read
        timeout, or drops) is re-opened from the last resourceVersion; a 410 restarts it from the
        current state. ``close()`` it (or use ``with``/``contextlib.closing``) to end it. Options:
        ``timeout_seconds`` (per request), ``read_timeout``, ``allow_bookmarks`` (default True:
        ``BOOKMARK`` events are yielded, as cloudcoil does) and cloudcoil's ``_stop_event`` (a
        ``threading.Event`` that ends it). See ``ResourceClient.watch``.
        """
        return cls.client().watch(
            namespace,
            all_namespaces,
            field_selector=field_selector,
            label_selector=label_selector,
            resource_version=resource_version,
            **options,
        )

    @classmethod
    def async_watch(
        cls,
        namespace: str | None = None,
        all_namespaces: bool = False,
        field_selector: str | None = None,
        label_selector: str | None = None,
        resource_version: str | None = None,
        **options: Any,
    ) -> Any:
        """The async twin of ``watch()``: an async iterator (``async for``, ``aclose()``,
        ``contextlib.aclosing``); ``await Kind.async_watch()`` also gives it."""
        return _AsyncEvents(
            cls._watch_events(
                namespace=namespace,
                all_namespaces=all_namespaces,
                field_selector=field_selector,
                label_selector=label_selector,
                resource_version=resource_version,
                **options,
            )
        )

    @classmethod
    async def _watch_events(cls, **kwargs: Any) -> AsyncGenerator[Any, None]:
        events = (await cls.async_client()).watch(**kwargs)
        try:
            async for event in events:
                yield event
        finally:
            await events.aclose()

    @classmethod
    def delete_all(
        cls,
        namespace: str | None = None,
        dry_run: bool = False,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        *,
        all_namespaces: bool = False,
    ) -> Any:
        """Delete every object matching the selectors in the namespace (or ``all_namespaces``).

        Returns the list of deleted objects as the server answers it (or its ``Status``); see
        ``ResourceClient.delete_all``. Cached reads that follow it see the deletions.
        """
        return cls.client().delete_all(
            namespace,
            dry_run,
            propagation_policy,
            grace_period_seconds,
            label_selector,
            field_selector,
            all_namespaces=all_namespaces,
        )

    @classmethod
    async def async_delete_all(
        cls,
        namespace: str | None = None,
        dry_run: bool = False,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        *,
        all_namespaces: bool = False,
    ) -> Any:
        client = await cls.async_client()
        return await client.delete_all(
            namespace,
            dry_run,
            propagation_policy,
            grace_period_seconds,
            label_selector,
            field_selector,
            all_namespaces=all_namespaces,
        )

    # --------------------------------------------------------------- helpers
    @classmethod
    def gvk(cls) -> GVK:
        """The class's ``GVK`` (``api_version``, ``kind``, ``group``, ``version``).

        Raises:
            ValueError: the class has no ``api_version`` or no ``kind`` (a base class).
        """
        api_version = getattr(cls, "api_version", None)
        kind = getattr(cls, "kind", None)
        for what, value in (("api_version", api_version), ("kind", kind)):
            if not isinstance(value, str) or not value:
                raise ValueError(f"{cls.__name__} has no {what}: gvk() needs a resource class of one kind")
        return GVK(api_version=api_version, kind=kind)

    @classmethod
    def from_file(cls: type[R], path: str | os.PathLike[str], load_all: bool = False) -> Any:
        """The object of this kind in a YAML or JSON file (``load_all=True``: a list, one per document).

        Raises:
            TypeError: a document is not an object of this kind (the message names what it is).
            ValueError: the file is empty, is not YAML/JSON, or holds several documents without
                ``load_all``.
        """
        from cloudcoil_cache.models._parse import parse_file  # it imports the models, which import this

        parsed: Any = parse_file(path, load_all=load_all)
        if load_all:
            return [_as_kind(cls, doc, path) for doc in parsed]
        return _as_kind(cls, parsed, path)

    # ----------------------------------------------------------------- reads
    def fetch(self: R) -> R:
        """The live object from the API server (never the cache), by this object's name and namespace.

        Raises:
            ValueError: the object has no name.
            ResourceNotFound: it does not exist (any more).
        """
        name, namespace = _name_of(self, "fetch")
        return type(self).client().live_get(name, namespace)  # type: ignore[no-any-return]

    async def async_fetch(self: R) -> R:
        name, namespace = _name_of(self, "fetch")
        client = await type(self).async_client()
        return await client.get(name, namespace)  # type: ignore[no-any-return]

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

    def save(self: R, dry_run: bool = False) -> R:
        """Create this object, or replace it if it exists (cloudcoil's ``save``).

        Without a name (``generate_name``) it is created. With a resourceVersion it is updated,
        and a stale one raises ``ResourceConflict`` (optimistic concurrency). With a name and no
        resourceVersion, the live object is read: absent, this one is created; present, this one
        replaces it at the resourceVersion just read.
        """
        if _name(self) is None:
            return self.create(dry_run=dry_run)
        if _resource_version(self) is not None:
            return self.update(dry_run=dry_run)
        try:
            existing = self.fetch()
        except ResourceNotFound:
            return self.create(dry_run=dry_run)
        return _at_version(self, existing).update(dry_run=dry_run)

    async def async_save(self: R, dry_run: bool = False) -> R:
        if _name(self) is None:
            return await self.async_create(dry_run=dry_run)
        if _resource_version(self) is not None:
            return await self.async_update(dry_run=dry_run)
        try:
            existing = await self.async_fetch()
        except ResourceNotFound:
            return await self.async_create(dry_run=dry_run)
        return await _at_version(self, existing).async_update(dry_run=dry_run)

    def wait_for(self, predicate: Any, /, timeout: float | None = None) -> Any:
        """Watch this object until ``predicate(event_type, obj)`` returns a true value.

        ``predicate`` is one callable, or a dict ``{name: callable}``. Every change after this
        object's resourceVersion (without one: its current state, as ``ADDED``) is passed to it,
        ``DELETED`` included. Returns the matching object for a callable, and the name of the
        predicate that matched for a dict (cloudcoil's return value).

        Raises:
            WaitTimeout: nothing matched within ``timeout`` seconds (None: wait forever).
            ValueError: the object has no name, or no predicate is given.
        """
        _name_of(self, "wait_for")
        predicates = _predicates(predicate)
        key, found = type(self).client().wait_for_match(self, predicates, timeout)
        return key if isinstance(predicate, Mapping) else found

    async def async_wait_for(self, predicate: Any, /, timeout: float | None = None) -> Any:
        _name_of(self, "wait_for")
        predicates = _predicates(predicate)
        client = await type(self).async_client()
        key, found = await client.wait_for_match(self, predicates, timeout)
        return key if isinstance(predicate, Mapping) else found

    def patch(self: R, patch: Any, **kwargs: Any) -> R:
        """Patch this object (``patch_type`` "merge", "json", "strategic" or "apply")."""
        meta = self.metadata  # type: ignore[attr-defined]
        return (  # type: ignore[no-any-return]
            type(self)
            .client()
            .patch(
                meta.name,
                patch,
                namespace=meta.namespace,
                **kwargs,
            )
        )

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


class _AsyncEvents:
    """What ``Kind.async_watch()`` returns: an async iterator of events that also works awaited
    (``await Kind.async_watch()`` gives the same iterator)."""

    __slots__ = ("_events",)

    def __init__(self, events: AsyncGenerator[Any, None]) -> None:
        self._events = events

    def __aiter__(self) -> _AsyncEvents:
        return self

    async def __anext__(self) -> Any:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        """End the watch (closes its stream)."""
        await self._events.aclose()

    def __await__(self) -> Generator[Any, None, _AsyncEvents]:
        yield from ()
        return self


def _name(obj: Any) -> str | None:
    meta = getattr(obj, "metadata", None)
    return None if meta is None else meta.name


def _resource_version(obj: Any) -> str | None:
    meta = getattr(obj, "metadata", None)
    return None if meta is None else meta.resource_version


def _name_of(obj: Any, what: str) -> tuple[str, str | None]:
    name = _name(obj)
    if not name:
        raise ValueError(f"{type(obj).__name__}.{what}(): the object has no metadata.name")
    return name, obj.metadata.namespace


def _at_version(obj: R, existing: Any) -> R:
    """An editable copy of ``obj`` carrying ``existing``'s resourceVersion (to replace it)."""
    body: Any = obj.copy()  # type: ignore[attr-defined]
    body.metadata.resource_version = existing.metadata.resource_version
    return body  # type: ignore[no-any-return]


def _predicates(predicate: Any) -> Mapping[str, Any]:
    if isinstance(predicate, Mapping):
        return predicate
    if not callable(predicate):
        raise TypeError(
            f"wait_for(): expected a predicate(event_type, obj) or a dict of them, got {type(predicate).__name__}"
        )
    return {"predicate": predicate}


def _as_kind(cls: type, obj: Any, path: Any) -> Any:
    """``obj`` (parsed from ``path``) as an object of ``cls``; a TypeError if it is another kind."""
    if isinstance(obj, cls):
        return obj
    found = (getattr(obj, "api_version", None), getattr(obj, "kind", None))
    if found == (getattr(cls, "api_version", None), getattr(cls, "kind", None)) and hasattr(obj, "to_dict"):
        return cls.from_dict(obj.to_dict())  # type: ignore[attr-defined]
    raise TypeError(
        f"{cls.__name__}.from_file({str(path)!r}): the file holds a {found[1]} "
        f"(apiVersion {found[0]}), not a {cls.__name__}"
    )
