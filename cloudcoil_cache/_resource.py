"""``Resource``: the base of every kind, a model (data, ``models.Resource``) with cloudcoil's verbs
(``Pod.get``, ``pod.save()``...) composed on it, each a call of the kind's typed ``client.Api``."""

from __future__ import annotations

import builtins
import os
from typing import (
    TYPE_CHECKING,
    Any,
    AsyncGenerator,
    Callable,
    ClassVar,
    Generator,
    Generic,
    Literal,
    Mapping,
    TypeVar,
    overload,
)

from cloudcoil_cache.client import Api, AsyncApi, Config, ListOptions, api_in_scope
from cloudcoil_cache.client import _config as scopes
from cloudcoil_cache.client._config import active as _active_scope
from cloudcoil_cache.client._config import cached_api
from cloudcoil_cache.client._watch import Watch
from cloudcoil_cache.errors import ResourceNotFound
from cloudcoil_cache.models import Resource as ResourceData
from cloudcoil_cache.models import ResourceList
from cloudcoil_cache.models._base import plain_resource_of
from cloudcoil_cache.models._gvk import GVK
from cloudcoil_cache.models._parse import load_documents, type_meta
from cloudcoil_cache.models.apimachinery import ObjectMeta, Status

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["AsyncEvents", "Resource", "WaitPredicate"]

R = TypeVar("R", bound="Resource")
T = TypeVar("T")

#: ``predicate(event_type, obj)``: what ``wait_for`` calls with each change of the object.
WaitPredicate = Callable[[str, Any], Any]


class Resource(ResourceData):
    """Base of top-level kinds: a model with API metadata, and cloudcoil's verbs.

    Class methods read and delete (``Pod.get``, ``Pod.list``, ``Pod.watch``, ``Pod.delete``,
    ``Pod.delete_all``); instance methods write (``create()``, ``update()``, ``save()``,
    ``patch()``, ``apply()``, ``remove()``, ``scale()``, ``wait_for()``). Each has an ``async_``
    twin. They go through ``Kind.client()``, the kind's ``client.Api`` in the active Config
    (``with config:``), else the process default (``config.set_default()``), else a Config
    discovered from the environment; reads go through its cache.
    """

    # ``Resource(apiVersion="v1", kind="Pod", metadata=...)`` is a resource of any kind, as cloudcoil's
    _cc_any_kind: ClassVar[bool] = True
    # A subclass that declares its kind is what parse()/get_model() give for it.
    _cc_registers: ClassVar[bool] = True

    # ---------------------------------------------------------------- clients
    @classmethod
    def client(cls, config: Config | None = None, cached: bool = False) -> Api[Self]:
        """The kind's ``Api`` through ``config`` (else the active one): live unless ``cached=True``."""
        return api_in_scope(cls, config, cached)

    @classmethod
    async def async_client(cls, config: Config | None = None, cached: bool = False) -> AsyncApi[Self]:
        """The async twin of ``client()`` (discovery, if still needed, runs off the event loop)."""
        return await AsyncApi(cls.client(config, cached)).ready()

    # ------------------------------------------------------------------ reads
    @classmethod
    def get(cls, name: str, namespace: str | None = None) -> Self:
        """The object ``name``, from the cache when it can serve it (docs/contract.md), else the API."""
        # cached_api(cls), written out: the scope's cached Api of the class (on every cached read)
        scope = _active_scope.get() or scopes.default_scope
        try:
            api: Api[Self] = cached_api(cls) if scope is None else scope.clients[cls]
        except KeyError:  # the scope's first read of cls
            api = cached_api(cls)
        return api.get(name, namespace)

    @classmethod
    async def async_get(cls, name: str, namespace: str | None = None) -> Self:
        return await (await cls.async_client(cached=True)).get(name, namespace)

    @classmethod
    def list(
        cls,
        namespace: str | None = None,
        all_namespaces: bool = False,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        index: tuple[str, str] | None = None,
    ) -> ResourceList[Self]:
        """A list result (``items``, ``metadata``; iterating walks every page), cache-routed.
        ``index=(name, value)``: the objects the cache's index ``name`` files under ``value``, in
        O(matches) (declared with ``Cache(indexes=...)``/``cache.index()``; never a live read)."""
        scope = _active_scope.get() or scopes.default_scope  # cached_api(cls), written out (as in get)
        try:
            api: Api[Self] = cached_api(cls) if scope is None else scope.clients[cls]
        except KeyError:
            api = cached_api(cls)
        if label_selector is None and field_selector is None and limit is None and continue_ is None:
            hit = api.list_hit(namespace, all_namespaces, index)  # the reader's answer at once, else None
            if hit is not None:
                return hit
        return api.list_with(
            ListOptions(namespace, all_namespaces, label_selector, field_selector, limit, continue_, index)
        )

    @classmethod
    async def async_list(
        cls,
        namespace: str | None = None,
        all_namespaces: bool = False,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        index: tuple[str, str] | None = None,
    ) -> ResourceList[Self]:
        api = await cls.async_client(cached=True)
        return await api.list(namespace, all_namespaces, label_selector, field_selector, limit, continue_, index)

    @classmethod
    def watch(
        cls,
        namespace: str | None = None,
        all_namespaces: bool = False,
        field_selector: str | None = None,
        label_selector: str | None = None,
        resource_version: str | None = None,
        **options: Any,
    ) -> Watch[Self]:
        """A live watch yielding ``(event_type, object)`` until the caller stops it.

        It never ends on its own: each request the server ends (or that stays quiet for the read
        timeout, or drops) is re-opened from the last resourceVersion; a 410 restarts it from the
        current state. ``close()`` it (or use ``with``/``contextlib.closing``) to end it. Options:
        ``timeout_seconds`` (per request), ``read_timeout``, ``allow_bookmarks`` (default True:
        ``BOOKMARK`` events are yielded, as cloudcoil does) and cloudcoil's ``_stop_event`` (a
        ``threading.Event`` that ends it). See ``Api.watch``.
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
    ) -> AsyncEvents[Self]:
        """The async twin of ``watch()``: an async iterator (``async for``, ``aclose()``,
        ``contextlib.aclosing``); ``await Kind.async_watch()`` also gives it."""
        return AsyncEvents(
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
    async def _watch_events(cls, **kwargs: Any) -> AsyncGenerator[tuple[str, Self], None]:
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
    ) -> ResourceList[Self]:
        """Delete every object matching the selectors in the namespace (or ``all_namespaces``).

        Returns the list of deleted objects as the server answers it; see ``Api.delete_all``.
        Cached reads that follow it see the deletions.
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
    ) -> ResourceList[Self]:
        api = await cls.async_client()
        return await api.delete_all(
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

    @overload
    @classmethod
    def from_file(cls, path: str | os.PathLike[str], load_all: Literal[False] = ...) -> Self: ...
    @overload
    @classmethod
    def from_file(cls, path: str | os.PathLike[str], load_all: Literal[True]) -> builtins.list[Self]: ...

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], load_all: bool = False) -> Self | builtins.list[Self]:
        """The object of this kind in a YAML or JSON file (``load_all=True``: a list, one per document).

        Raises:
            TypeError: a document is not an object of this kind (the message names what it is).
            ValueError: the file is empty, is not YAML/JSON, or holds several documents without
                ``load_all``.
        """
        docs = load_documents(path, load_all)
        if load_all:
            return [_as_kind(cls, doc, f"{path}, document {i + 1}") for i, doc in enumerate(docs)]
        return _as_kind(cls, docs[0], str(path))

    # ----------------------------------------------------------------- reads
    def fetch(self) -> Self:
        """The live object from the API server (never the cache), by this object's name and namespace.

        Raises:
            ValueError: the object has no name.
            ResourceNotFound: it does not exist (any more).
        """
        name, namespace = _name_of(self, "fetch")
        return type(self).client().live_get(name, namespace)

    async def async_fetch(self) -> Self:
        name, namespace = _name_of(self, "fetch")
        return await (await type(self).async_client()).get(name, namespace)

    @classmethod
    def delete(cls, name: str, namespace: str | None = None, **kwargs: Any) -> Self | Status:
        """Delete ``name`` on the API server (``propagation_policy``, ``preconditions``...); returns the
        object as the server answers (still there: finalizers, graceful deletion) or its ``Status``."""
        return cls.client().delete(name, namespace, **kwargs)

    @classmethod
    async def async_delete(cls, name: str, namespace: str | None = None, **kwargs: Any) -> Self | Status:
        return await (await cls.async_client()).delete(name, namespace, **kwargs)

    # ----------------------------------------------------------------- writes
    def create(self, **kwargs: Any) -> Self:
        """Create this object; returns the server's copy."""
        return type(self).client().create(self, **kwargs)

    async def async_create(self, **kwargs: Any) -> Self:
        return await (await type(self).async_client()).create(self, **kwargs)

    def update(self, **kwargs: Any) -> Self:
        """Replace this object (PUT); a stale resourceVersion raises ``ResourceConflict``."""
        return type(self).client().update(self, **kwargs)

    async def async_update(self, **kwargs: Any) -> Self:
        return await (await type(self).async_client()).update(self, **kwargs)

    def update_status(self, **kwargs: Any) -> Self:
        """Replace this object's status subresource."""
        return type(self).client().update_status(self, **kwargs)

    async def async_update_status(self, **kwargs: Any) -> Self:
        return await (await type(self).async_client()).update_status(self, **kwargs)

    def save(self, dry_run: bool = False) -> Self:
        """Create this object, or replace it if it exists (cloudcoil's ``save``).

        Without a name (``generate_name``) it is created. With a resourceVersion it is updated,
        and a stale one raises ``ResourceConflict`` (optimistic concurrency). With a name and no
        resourceVersion, the live object is read: absent, this one is created; present, this one
        replaces it at the resourceVersion just read.
        """
        if self.name is None:
            return self.create(dry_run=dry_run)
        if self.resource_version is not None:
            return self.update(dry_run=dry_run)
        try:
            existing = self.fetch()
        except ResourceNotFound:
            return self.create(dry_run=dry_run)
        return _at_version(self, existing).update(dry_run=dry_run)

    async def async_save(self, dry_run: bool = False) -> Self:
        if self.name is None:
            return await self.async_create(dry_run=dry_run)
        if self.resource_version is not None:
            return await self.async_update(dry_run=dry_run)
        try:
            existing = await self.async_fetch()
        except ResourceNotFound:
            return await self.async_create(dry_run=dry_run)
        return await _at_version(self, existing).async_update(dry_run=dry_run)

    @overload
    def wait_for(self, predicate: Mapping[str, WaitPredicate], /, timeout: float | None = None) -> str: ...
    @overload
    def wait_for(self, predicate: WaitPredicate, /, timeout: float | None = None) -> Self: ...

    def wait_for(
        self, predicate: WaitPredicate | Mapping[str, WaitPredicate], /, timeout: float | None = None
    ) -> Self | str:
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
        key, found = type(self).client().wait_for_match(self, _predicates(predicate), timeout)
        return key if isinstance(predicate, Mapping) else found

    @overload
    async def async_wait_for(self, predicate: Mapping[str, WaitPredicate], /, timeout: float | None = None) -> str: ...
    @overload
    async def async_wait_for(self, predicate: WaitPredicate, /, timeout: float | None = None) -> Self: ...

    async def async_wait_for(
        self, predicate: WaitPredicate | Mapping[str, WaitPredicate], /, timeout: float | None = None
    ) -> Self | str:
        _name_of(self, "wait_for")
        api = await type(self).async_client()
        key, found = await api.wait_for_match(self, _predicates(predicate), timeout)
        return key if isinstance(predicate, Mapping) else found

    def patch(self, patch: Any, **kwargs: Any) -> Self:
        """Patch this object (``patch_type`` "merge", "json", "strategic" or "apply")."""
        name, namespace = _name_of(self, "patch")
        return type(self).client().patch(name, patch, namespace=namespace, **kwargs)

    async def async_patch(self, patch: Any, **kwargs: Any) -> Self:
        name, namespace = _name_of(self, "patch")
        api = await type(self).async_client()
        return await api.patch(name, patch, namespace=namespace, **kwargs)

    def apply(self, **kwargs: Any) -> Self:
        """Server-side apply this object (``field_manager``, ``force``)."""
        return type(self).client().apply(self, **kwargs)

    async def async_apply(self, **kwargs: Any) -> Self:
        return await (await type(self).async_client()).apply(self, **kwargs)

    def remove(self, **kwargs: Any) -> Self | Status:
        """Delete this object on the API server."""
        name, namespace = _name_of(self, "remove")
        return type(self).client().delete(name, namespace, **kwargs)

    async def async_remove(self, **kwargs: Any) -> Self | Status:
        name, namespace = _name_of(self, "remove")
        return await (await type(self).async_client()).delete(name, namespace, **kwargs)

    def scale(self, replicas: int) -> Self:
        """Set ``spec.replicas`` through the scale subresource; returns the updated object."""
        name, namespace = _name_of(self, "scale")
        return type(self).client().scale(name, replicas, namespace)

    async def async_scale(self, replicas: int) -> Self:
        name, namespace = _name_of(self, "scale")
        return await (await type(self).async_client()).scale(name, replicas, namespace)


class AsyncEvents(Generic[T]):
    """What ``Kind.async_watch()`` returns: an async iterator of events that also works awaited
    (``await Kind.async_watch()`` gives the same iterator)."""

    __slots__ = ("_events",)

    def __init__(self, events: AsyncGenerator[tuple[str, T], None]) -> None:
        self._events = events

    def __aiter__(self) -> AsyncEvents[T]:
        return self

    async def __anext__(self) -> tuple[str, T]:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        """End the watch (closes its stream)."""
        await self._events.aclose()

    def __await__(self) -> Generator[Any, None, AsyncEvents[T]]:
        yield from ()
        return self


def _name_of(obj: ResourceData, what: str) -> tuple[str, str | None]:
    name = obj.name
    if not name:
        raise ValueError(f"{type(obj).__name__}.{what}(): the object has no metadata.name")
    return name, obj.namespace


def _at_version(obj: R, existing: ResourceData) -> R:
    """An editable copy of ``obj`` carrying ``existing``'s resourceVersion (to replace it)."""
    body = obj.copy()
    meta = body.metadata
    if meta is None:
        meta = body.metadata = ObjectMeta()
    meta.resource_version = existing.resource_version
    return body


def _predicates(predicate: WaitPredicate | Mapping[str, WaitPredicate]) -> Mapping[str, WaitPredicate]:
    if isinstance(predicate, Mapping):
        return predicate
    if not callable(predicate):
        raise TypeError(
            f"wait_for(): expected a predicate(event_type, obj) or a dict of them, got {type(predicate).__name__}"
        )
    return {"predicate": predicate}


def _as_kind(cls: type[R], doc: Any, where: str) -> R:
    """Manifest ``doc`` (read from ``where``) as an object of ``cls``; a TypeError if it is another kind."""
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: a manifest must be a mapping, got {type(doc).__name__}")
    found = (type_meta(doc, where, "apiVersion"), type_meta(doc, where, "kind"))
    if getattr(cls, "_cc_any_content", False):  # Unstructured: a manifest of any kind, as plain content
        return cls.from_dict(doc)
    if not cls.api_version or not cls.kind:
        raise TypeError(
            f"{cls.__name__}.from_file({where!r}): {cls.__name__} stands for no kind; call from_file on the "
            "class of the file's kind (Pod.from_file), or read a file of any kind with "
            "cloudcoil_cache.resources.parse_file()"
        )
    if found == (cls.api_version, cls.kind):
        return cls.from_dict(doc)
    raise TypeError(
        f"{cls.__name__}.from_file({where!r}): the file holds a {found[1]} (apiVersion {found[0]}), "
        f"not a {cls.__name__}"
    )


def __getattr__(name: str) -> Any:
    if name == "_PlainResource":  # what pickle looks up for a ``Resource(...)`` object
        return plain_resource_of(Resource)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
