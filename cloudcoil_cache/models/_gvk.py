"""``GVK``: the immutable (apiVersion, kind) pair that names a resource type."""

from __future__ import annotations

from typing import Any

__all__ = ["GVK"]


class GVK:
    """An apiVersion (``group/version``, or ``version`` for the core group) and a kind.

    Immutable, hashable and compared by value. Construct with ``GVK(api_version=..., kind=...)`` or
    with the wire name ``GVK(apiVersion=..., kind=...)``.

    Raises:
        ValueError: ``api_version`` or ``kind`` is missing or not a non-empty string.
    """

    __slots__ = ("_api_version", "_kind")

    _api_version: str
    _kind: str

    def __init__(self, api_version: str | None = None, kind: str | None = None, **wire: Any) -> None:
        if "apiVersion" in wire:
            if api_version is not None:
                raise TypeError("GVK: give api_version or apiVersion, not both")
            api_version = wire.pop("apiVersion")
        if wire:
            raise TypeError(f"GVK: unexpected keyword argument(s) {', '.join(sorted(wire))}")
        object.__setattr__(self, "_api_version", _checked("apiVersion", api_version))
        object.__setattr__(self, "_kind", _checked("kind", kind))

    @property
    def api_version(self) -> str:
        return self._api_version

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def group(self) -> str:
        """The API group; ``""`` for the core group (``v1``)."""
        group, _, _version = self._api_version.rpartition("/")
        return group

    @property
    def version(self) -> str:
        return self._api_version.rpartition("/")[2]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"GVK is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"GVK is immutable; cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GVK):
            return NotImplemented
        return (self._api_version, self._kind) == (other._api_version, other._kind)

    def __hash__(self) -> int:
        return hash((GVK, self._api_version, self._kind))

    def __repr__(self) -> str:
        return f"GVK(api_version={self._api_version!r}, kind={self._kind!r})"

    def __reduce__(self) -> Any:
        return (GVK, (self._api_version, self._kind))

    def model_dump(self, *, by_alias: bool = False, **_: Any) -> dict[str, str]:
        """``{"api_version": ..., "kind": ...}`` (``apiVersion`` with ``by_alias=True``)."""
        return {"apiVersion" if by_alias else "api_version": self._api_version, "kind": self._kind}


def _checked(field: str, value: object) -> str:
    if value is None:
        raise ValueError(f"GVK {field}: Field required (got None)")
    if not isinstance(value, str) or not value:
        raise ValueError(f"GVK {field} must be a non-empty string, got {value!r}")
    return value
