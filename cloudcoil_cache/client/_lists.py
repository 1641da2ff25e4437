"""ObjectList: the result of a LIST — items, list metadata, and iteration across every page."""

from __future__ import annotations

from typing import Any, Callable, Generic, Iterator, Mapping, TypeVar

from cloudcoil_cache.apimachinery import ListMeta

__all__ = ["ObjectList"]

T = TypeVar("T")


class ObjectList(Generic[T]):
    """One page of a LIST (``items``, ``metadata``); iterating it walks this and every later page.

    ``metadata`` is a ``ListMeta`` (``resource_version``, ``continue_``, ``remaining_item_count``),
    as in cloudcoil; ``resource_version`` and ``continue_`` are shortcuts into it. ``len()`` is the
    size of this page.
    """

    __slots__ = ("resource", "items", "metadata", "kind", "api_version", "_next_page")

    def __init__(self, resource: Any, items: list[T], metadata: Mapping[str, Any],
                 next_page: Callable[[str], ObjectList[T]] | None = None, *,
                 kind: str | None = None, api_version: str | None = None) -> None:
        self.resource = resource
        self.items = items
        self.metadata: ListMeta = ListMeta.from_dict(dict(metadata))
        self.kind = kind or f"{resource.kind}List"
        self.api_version = api_version or resource.api_version
        self._next_page = next_page

    @property
    def resource_version(self) -> str | None:
        return self.metadata.resource_version

    @property
    def continue_(self) -> str | None:
        return self.metadata.continue_ or None

    @property
    def remaining_item_count(self) -> int | None:
        return self.metadata.remaining_item_count

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[T]:
        page: ObjectList[T] | None = self
        while page is not None:
            yield from page.items
            token = page.continue_
            page = page._next_page(token) if token and page._next_page else None

    def __getitem__(self, index: int) -> T:
        return self.items[index]

    def to_dict(self) -> dict[str, Any]:
        return {"apiVersion": self.api_version, "kind": self.kind, "metadata": self.metadata.to_dict(),
                "items": [item.to_dict() for item in self.items]}  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        more = f", continue={self.continue_!r}" if self.continue_ else ""
        rv = self.resource_version
        return f"<{self.kind} items={len(self.items)} resourceVersion={rv!r}{more}>"
