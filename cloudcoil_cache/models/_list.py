"""``ResourceList``: one page of a LIST (``metadata`` with resourceVersion/continue, ``items``)."""

from __future__ import annotations

from typing import Any, Generic, Iterator, TypeVar

import attrs

from cloudcoil_cache.errors import DecodeError
from cloudcoil_cache.models._base import Resource
from cloudcoil_cache.models._convert import structure, unstructure
from cloudcoil_cache.models._frozen import FrozenList
from cloudcoil_cache.models.apimachinery import ListMeta

__all__ = ["ResourceList"]

R = TypeVar("R", bound=Resource)


@attrs.define(slots=True, kw_only=True, eq=True, weakref_slot=False)
class ResourceList(Generic[R]):
    """One page of a LIST: ``items`` of one resource class plus the list ``metadata``.

    Items of built-in kinds carry no ``kind``/``apiVersion`` on the wire; they come from the item
    class (its ClassVars). Iterating walks ``items``; the client layer adds iteration across pages.
    """

    api_version: str | None = None
    kind: str | None = None
    metadata: ListMeta | None = None
    items: list[R] = attrs.field(factory=list)

    @classmethod
    def from_response(
        cls, data: Any, item_class: type[R], *, sealed: bool = False
    ) -> ResourceList[R]:
        """Structure a LIST response body; ``sealed=True`` makes the items (and list) read-only."""
        if not isinstance(data, dict):
            raise DecodeError(
                f"a {item_class.__name__} list must be a JSON object, got {type(data).__name__}"
            )
        raw_items = data.get("items") or []
        if not isinstance(raw_items, list):
            raise DecodeError(
                f"{item_class.__name__} list: 'items' must be a list, "
                f"got {type(raw_items).__name__}"
            )
        target = item_class.__sealed_class__ if sealed else item_class
        items: list[Any] = [structure(item, target) for item in raw_items]
        meta = data.get("metadata")
        return cls(
            api_version=data.get("apiVersion", item_class.api_version),
            kind=data.get("kind", f"{item_class.kind}List" if item_class.kind else None),
            metadata=None
            if meta is None
            else structure(meta, ListMeta.__sealed_class__ if sealed else ListMeta),
            items=FrozenList(items) if sealed else items,
        )

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

    @property
    def resource_version(self) -> str | None:
        return None if self.metadata is None else self.metadata.resource_version

    @property
    def continue_(self) -> str | None:
        return None if self.metadata is None else self.metadata.continue_

    def __iter__(self) -> Iterator[R]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)
