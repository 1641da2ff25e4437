"""``ResourceList[T]``: a LIST result (``items``, ``metadata``) whose iteration walks every page."""

from __future__ import annotations

import threading
from typing import Any, AsyncIterator, Callable, ClassVar, Generic, Iterator, TypeVar

from cloudcoil_cache import _fork
from cloudcoil_cache._threads import run_blocking
from cloudcoil_cache.errors import DecodeError
from cloudcoil_cache.models._base import Resource
from cloudcoil_cache.models._convert import structure, unstructure
from cloudcoil_cache.models._frozen import FrozenList
from cloudcoil_cache.models.apimachinery import ListMeta

__all__ = ["ResourceList"]

R = TypeVar("R", bound=Resource)

#: ``next_page(continue_token) -> ResourceList``: how the client that listed fetches the next page.
NextPage = Callable[[str], "ResourceList[Any]"]


def _this_page_only(token: str) -> ResourceList[Any]:
    raise AssertionError("never called")  # a marker: see ResourceList.from_response


_THIS_PAGE_ONLY: NextPage = _this_page_only

_specialized_lock = threading.Lock()
_fork.renew_locks(globals(), _specialized_lock=threading.Lock)
# (list class, item class) -> ResourceList[item]; kept for the process, as the item classes are.
_specialized: dict[tuple[type, type], type] = {}


class ResourceList(Generic[R]):
    """A page of a LIST: ``items`` of one resource class and the list ``metadata`` (``ListMeta``).

    As in cloudcoil: iterating (``for`` or ``async for``) yields the items of this page, then fetches
    and walks each later page lazily, while ``has_next_page()``; ``len()`` is ``len(items)`` plus the
    server's ``remaining_item_count`` (the size of the whole result when the server counts it);
    ``has_next_page()``, ``get_next_page()`` and ``async_get_next_page()`` page by hand.
    ``resource_class`` is the item class. A list returned by the client fetches its next pages
    with the same client and query; one built by hand pages through the active Config.

    ``ResourceList[Pod](apiVersion="v1", kind="PodList", metadata=ListMeta(...), items=[...])``
    builds one (dict items are decoded); an ``apiVersion``/``kind`` other than the item class's
    (``v1``, ``PodList``) is a ``ValueError``. A list is not synchronised: share it read-only.
    """

    __slots__ = ("api_version", "kind", "metadata", "items", "_resource_class", "_next_page")

    # Set on the class ``ResourceList[Kind]`` returns (one per item class, made on first use).
    _item_class: ClassVar[type | None] = None

    def __class_getitem__(cls, item: Any) -> Any:
        if isinstance(item, type) and cls._item_class is None and issubclass(item, Resource):
            return _specialize(cls, item)
        return super().__class_getitem__(item)  # type: ignore[misc]  # typing's alias (TypeVars, Any)

    def __init__(
        self,
        *,
        api_version: str | None = None,
        kind: str | None = None,
        metadata: ListMeta | dict[str, Any] | None = None,
        items: list[Any] | None = None,
        resource_class: type[R] | None = None,
        next_page: NextPage | None = None,
        **wire: Any,
    ) -> None:
        if "apiVersion" in wire:
            api_version = wire.pop("apiVersion")
        if wire:
            raise TypeError(f"ResourceList() got unexpected keyword argument(s) {', '.join(sorted(wire))}")
        rc: Any = resource_class or type(self)._item_class
        if rc is not None:
            rc = getattr(rc, "__editable_class__", rc)
            api_version, kind = _checked_type_meta(rc, api_version, kind)
        if isinstance(metadata, dict):
            metadata = ListMeta.from_dict(metadata)
        elif metadata is not None and not isinstance(metadata, ListMeta):
            raise TypeError(f"ResourceList metadata: expected ListMeta or dict, got {type(metadata).__name__}")
        listed = [] if items is None else items
        if not isinstance(listed, list):
            raise TypeError(f"ResourceList items: expected a list, got {type(listed).__name__}")
        if rc is not None and any(isinstance(item, dict) for item in listed):
            listed = [rc.from_dict(item) if isinstance(item, dict) else item for item in listed]
        self.api_version: str | None = api_version
        self.kind: str | None = kind
        self.metadata: ListMeta | None = metadata
        self.items: list[R] = listed
        self._resource_class: type[R] | None = rc
        self._next_page = next_page

    @classmethod
    def from_response(cls, data: Any, item_class: type[R], *, sealed: bool = False) -> ResourceList[R]:
        """Structure a LIST response body; ``sealed=True`` makes the items (and list) read-only.

        The result is that page alone: no client made it, so iterating it walks its items only
        (``get_next_page()`` is a ``TypeError``; list again with ``continue_=list.continue_``).
        """
        if not isinstance(data, dict):
            raise DecodeError(f"a {item_class.__name__} list must be a JSON object, got {type(data).__name__}")
        raw_items = data.get("items") or []
        if not isinstance(raw_items, list):
            raise DecodeError(f"{item_class.__name__} list: 'items' must be a list, got {type(raw_items).__name__}")
        target = item_class.__sealed_class__ if sealed else item_class
        items: list[Any] = [structure(item, target) for item in raw_items]
        meta = data.get("metadata")
        new = cls.__new__(cls)
        new.api_version = data.get("apiVersion", item_class.api_version)
        new.kind = data.get("kind", f"{item_class.kind}List" if item_class.kind else None)
        new.metadata = None if meta is None else structure(meta, ListMeta.__sealed_class__ if sealed else ListMeta)
        new.items = FrozenList(items) if sealed else items
        new._resource_class = item_class
        new._next_page = _THIS_PAGE_ONLY
        return new

    # ---------------------------------------------------------------- contents
    @property
    def resource_class(self) -> type[R]:
        """The class of the items (``ResourceList[Pod](...).resource_class is Pod``)."""
        if self._resource_class is None:
            raise TypeError("this ResourceList was built without an item class: use ResourceList[Kind](...)")
        return self._resource_class

    @property
    def resource_version(self) -> str | None:
        return None if self.metadata is None else self.metadata.resource_version

    @property
    def continue_(self) -> str | None:
        return None if self.metadata is None else (self.metadata.continue_ or None)

    @property
    def remaining_item_count(self) -> int | None:
        return None if self.metadata is None else self.metadata.remaining_item_count

    def to_dict(self) -> dict[str, Any]:
        """The wire form; items are written with their ``apiVersion``/``kind``."""
        out: dict[str, Any] = {}
        if self.api_version is not None:
            out["apiVersion"] = self.api_version
        if self.kind is not None:
            out["kind"] = self.kind
        out["metadata"] = {} if self.metadata is None else unstructure(self.metadata)
        out["items"] = [unstructure(item) for item in self.items]
        return out

    # ------------------------------------------------------------------ paging
    def has_next_page(self) -> bool:
        """Whether the server has more items after this page: a ``continue`` token, unless the server
        counted none remaining (``remaining_item_count == 0``: cloudcoil's test; a count the server
        leaves out, as it does for a selector, is unknown, so the token is followed)."""
        return bool(self.continue_) and self.remaining_item_count != 0

    def get_next_page(self) -> ResourceList[R]:
        """The next page, fetched now (with the client and query that produced this one).

        Raises:
            ValueError: this is the last page (``has_next_page()`` is false).
        """
        token = self.continue_
        if not token:
            raise ValueError("this ResourceList has no next page (no continue token)")
        if self.remaining_item_count == 0:
            raise ValueError("this ResourceList has no next page (the server counts no remaining items)")
        if self._next_page is _THIS_PAGE_ONLY:
            raise TypeError(
                "this ResourceList was decoded from a response, not listed by a client: list "
                f"again with continue_={token!r} for the next page"
            )
        if self._next_page is not None:
            return self._next_page(token)
        resource: Any = self.resource_class  # a kind with the API verbs (``resources.Resource``)
        page: ResourceList[R] = resource.list(continue_=token)
        return page

    async def async_get_next_page(self) -> ResourceList[R]:
        """``get_next_page()`` without blocking the event loop (the request runs off the loop)."""
        if not self.has_next_page():
            return self.get_next_page()  # raises the ValueError saying why, without a thread hop
        return await run_blocking(self.get_next_page)

    def __iter__(self) -> Iterator[R]:
        page: ResourceList[R] = self
        while True:
            yield from page.items
            if not page.has_next_page() or page._next_page is _THIS_PAGE_ONLY:
                return
            page = page.get_next_page()

    async def __aiter__(self) -> AsyncIterator[R]:
        page: ResourceList[R] = self
        while True:
            for item in page.items:
                yield item
            if not page.has_next_page() or page._next_page is _THIS_PAGE_ONLY:
                return
            page = await page.async_get_next_page()

    def __len__(self) -> int:
        return len(self.items) + (self.remaining_item_count or 0)

    def __getitem__(self, index: int) -> R:
        """An item of this page (``items[index]``)."""
        return self.items[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResourceList):
            return NotImplemented
        return (self.api_version, self.kind, self.metadata, list(self.items)) == (
            other.api_version,
            other.kind,
            other.metadata,
            list(other.items),
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        more = f", continue={self.continue_!r}" if self.continue_ else ""
        return f"<{self.kind} items={len(self.items)} resourceVersion={self.resource_version!r}{more}>"


def _checked_type_meta(rc: Any, api_version: str | None, kind: str | None) -> tuple[str | None, str | None]:
    """The list's apiVersion/kind: the item class's (``v1``, ``PodList``); others are refused."""
    expected_version = getattr(rc, "api_version", None)
    item_kind = getattr(rc, "kind", None)
    expected_kind = f"{item_kind}List" if isinstance(item_kind, str) else None
    if expected_version is not None:
        if api_version is None:
            api_version = expected_version
        elif api_version != expected_version:
            raise ValueError(
                f"ResourceList[{rc.__name__}]: api_version must be {expected_version}, got {api_version!r}"
            )
    if expected_kind is not None:
        if kind is None:
            kind = expected_kind
        elif kind != expected_kind:
            raise ValueError(f"ResourceList[{rc.__name__}]: kind must be {expected_kind}, got {kind!r}")
    return api_version, kind


def _specialize(cls: type, item: type) -> type:
    """``ResourceList[item]``: a subclass that knows its item class (made once per pair)."""
    with _specialized_lock:
        found = _specialized.get((cls, item))
        if found is None:
            found = type(cls)(
                f"{cls.__name__}[{item.__name__}]",
                (cls,),
                {
                    "__slots__": (),
                    "__module__": cls.__module__,
                    "__qualname__": f"{cls.__qualname__}[{item.__name__}]",
                    "_item_class": item,
                },
            )
            _specialized[(cls, item)] = found
        return found
