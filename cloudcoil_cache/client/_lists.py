"""ObjectList: the ``ResourceList`` the client returns for a LIST, fetching later pages with that client."""

from __future__ import annotations

from typing import Any, Callable, Mapping, TypeVar

import attrs

from cloudcoil_cache.apimachinery import ListMeta
from cloudcoil_cache.models._list import ResourceList

__all__ = ["CoveringList", "ObjectList"]

T = TypeVar("T", bound=Any)

_new_meta = ListMeta.__new__


def _built_meta(resource_version: str) -> ListMeta:
    """``ListMeta(resource_version=...)``: its keyword ``__init__`` (the general one)."""
    meta = ListMeta()
    meta.resource_version = resource_version
    return meta


def _served_meta(resource_version: str) -> ListMeta:
    """``ListMeta(resource_version=...)`` with each of its slots set in turn, without its keyword
    ``__init__`` (~0.1 µs less, on every cached list's path)."""
    meta = _new_meta(ListMeta)
    meta._extra = None
    meta.continue_ = None
    meta.remaining_item_count = None
    meta.resource_version = resource_version
    meta.self_link = None
    return meta


#: The ``ListMeta`` of a list a cache served: ``_served_meta`` while it sets every field ListMeta has.
list_meta = (
    _served_meta
    if tuple(a.name for a in attrs.fields(ListMeta))
    == ("_extra", "continue_", "remaining_item_count", "resource_version", "self_link")
    else _built_meta
)


class ObjectList(ResourceList[T]):
    """A page of a LIST made by a client: cloudcoil's ``ResourceList`` contract (see ``ResourceList``).

    ``metadata`` is a ``ListMeta`` (``resource_version``, ``continue_``, ``remaining_item_count``);
    ``resource_version``, ``continue_`` and ``remaining_item_count`` are shortcuts into it. Iterating
    walks this and every later page, each fetched with ``next_page`` (the same client and query).
    ``len()`` counts the whole result as cloudcoil does (``len(items) + remaining_item_count``);
    ``len(result.items)`` is the size of this page. ``resource`` is the item class.
    """

    __slots__ = ()

    #: the namespaces an all-namespaces list covers when a cache over a set of namespaces served it
    #: (``Cache(namespaces=["a", "b"])``: a ``CoveringList``); None: every namespace it was asked for
    namespaces: list[str] | None = None

    def __init__(
        self,
        resource: Any,
        items: list[T],
        metadata: Mapping[str, Any],
        next_page: Callable[[str], ObjectList[T]] | None = None,
        *,
        kind: str | None = None,
        api_version: str | None = None,
    ) -> None:
        cls = getattr(resource, "__editable_class__", resource)
        super().__init__(items=items, metadata=ListMeta.from_dict(dict(metadata)), next_page=next_page)
        self._resource_class = cls
        self.kind = kind or f"{cls.kind}List"
        self.api_version = api_version or cls.api_version

    @classmethod
    def whole(cls, resource: Any, items: list[T], resource_version: str) -> ObjectList[T]:
        """``ObjectList(resource, items, {"resourceVersion": resource_version})``, built without
        checking or structuring anything: a whole list the cache served (on every cached list's path)."""
        page = cls.__new__(cls)
        kind_class = getattr(resource, "__editable_class__", resource)
        page.items = items
        page.metadata = list_meta(resource_version)  # its one field set, not structured from a dict
        page._resource_class = kind_class
        page._next_page = None
        page.kind = f"{kind_class.kind}List"
        page.api_version = kind_class.api_version
        return page

    @classmethod
    def served(cls, of: tuple[Any, str, str], items: list[T], resource_version: str) -> ObjectList[T]:
        """``whole()`` with the kind's class, list kind and apiVersion given (``of``, computed once per
        client): a whole list a cache's reader served (on every cached ``Pod.list``'s path)."""
        page = cls.__new__(cls)
        page.items = items
        page.metadata = list_meta(resource_version)
        page._resource_class, page.kind, page.api_version = of
        page._next_page = None
        return page

    @property
    def resource(self) -> Any:
        """The item class (``resource_class``)."""
        return self._resource_class


class CoveringList(ObjectList[T]):
    """An all-namespaces list a cache over a set of namespaces served: ``namespaces`` names the
    namespaces it covers (never "all namespaces"); ``resource_version`` is "" (several watches)."""

    __slots__ = ("namespaces",)
