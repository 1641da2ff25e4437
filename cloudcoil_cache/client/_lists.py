"""ObjectList: the ``ResourceList`` the client returns for a LIST, fetching later pages with that client."""

from __future__ import annotations

from typing import Any, Callable, Mapping, TypeVar

from cloudcoil_cache.apimachinery import ListMeta
from cloudcoil_cache.models._list import ResourceList

__all__ = ["CoveringList", "ObjectList"]

T = TypeVar("T", bound=Any)


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
        page.metadata = meta = ListMeta()  # its one field set, not structured from a dict: ~0.5 µs less
        meta.resource_version = resource_version
        page._resource_class = kind_class
        page._next_page = None
        page.kind = f"{kind_class.kind}List"
        page.api_version = kind_class.api_version
        return page

    @property
    def resource(self) -> Any:
        """The item class (``resource_class``)."""
        return self._resource_class


class CoveringList(ObjectList[T]):
    """An all-namespaces list a cache over a set of namespaces served: ``namespaces`` names the
    namespaces it covers (never "all namespaces"); ``resource_version`` is "" (several watches)."""

    __slots__ = ("namespaces",)
