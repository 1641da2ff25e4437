"""Read-only list and dict types for sealed objects; deep freeze/thaw of free-form JSON values.

Every mutating method raises ``ReadOnlyError``. Deliberate bypasses through the base type
(``dict.__setitem__(d, k, v)``, ``list.__init__(l, ...)``, calling ``__init__`` again) are not
guarded: guarding ``__init__`` would cost a Python-level call per container on the hot path.
"""

from __future__ import annotations

from typing import Any, NoReturn

from cloudcoil_cache.errors import ReadOnlyError

__all__ = ["FrozenDict", "FrozenList", "freeze_json", "thaw_json"]

_HINT = "call .copy() (or .evolve(...)) on the object that holds it for an editable copy"


def _refuse(kind: str, method: str) -> NoReturn:
    raise ReadOnlyError(
        f"this {kind} belongs to a shared read-only object and cannot be "
        f"changed ({method}); {_HINT}"
    )


class FrozenList(list):  # type: ignore[type-arg]
    """A ``list`` whose mutating methods raise ``ReadOnlyError``; otherwise just a list."""

    __slots__ = ()

    def _ro(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse("list", "list mutation")

    def append(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("list", "append")

    def extend(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("list", "extend")

    def insert(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("list", "insert")

    def pop(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("list", "pop")

    def remove(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("list", "remove")

    def clear(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("list", "clear")

    def sort(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("list", "sort")

    def reverse(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("list", "reverse")

    def __setitem__(self, *a: Any) -> NoReturn:
        _refuse("list", "item assignment")

    def __delitem__(self, *a: Any) -> NoReturn:
        _refuse("list", "item deletion")

    def __iadd__(self, *a: Any) -> NoReturn:  # type: ignore[misc]
        _refuse("list", "+=")

    def __imul__(self, *a: Any) -> NoReturn:  # type: ignore[misc]
        _refuse("list", "*=")

    def copy(self) -> list[Any]:  # type: ignore[override]
        """A plain, editable shallow copy."""
        return list(self)

    def __reduce__(self) -> Any:
        return (FrozenList, (list(self),))


class FrozenDict(dict):  # type: ignore[type-arg]
    """A ``dict`` whose mutating methods raise ``ReadOnlyError``; otherwise just a dict."""

    __slots__ = ()

    def __setitem__(self, *a: Any) -> NoReturn:
        _refuse("dict", "item assignment")

    def __delitem__(self, *a: Any) -> NoReturn:
        _refuse("dict", "item deletion")

    def pop(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("dict", "pop")

    def popitem(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("dict", "popitem")

    def clear(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("dict", "clear")

    def update(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("dict", "update")

    def setdefault(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("dict", "setdefault")

    def __ior__(self, *a: Any) -> NoReturn:  # type: ignore[misc]
        _refuse("dict", "|=")

    def copy(self) -> dict[Any, Any]:  # type: ignore[override]
        """A plain, editable shallow copy."""
        return dict(self)

    @classmethod
    def fromkeys(cls, keys: Any, value: Any = None) -> FrozenDict:  # type: ignore[override]
        return cls(dict.fromkeys(keys, value))

    def __reduce__(self) -> Any:
        return (FrozenDict, (dict(self),))


EMPTY_DICT = FrozenDict()
EMPTY_LIST = FrozenList()
_set = dict.__setitem__


def freeze_json(value: Any) -> Any:
    """Deeply read-only version of a JSON value (dicts/lists become Frozen*; scalars are kept)."""
    cls = value.__class__
    if cls is dict:
        return _freeze_dict(value) if value else EMPTY_DICT
    if cls is list:
        if not value:
            return EMPTY_LIST
        return FrozenList([x if x.__class__ in _SCALARS else freeze_json(x) for x in value])
    if cls is FrozenDict or cls is FrozenList:
        return value  # already deeply frozen: Frozen* values are only ever built by this function
    if isinstance(value, dict):
        return freeze_json(dict(value))
    if isinstance(value, list):
        return freeze_json(list(value))
    return value


def _freeze_dict(value: dict[str, Any]) -> FrozenDict:
    # The hot case is managedFields' fieldsV1: ~100 small dicts per pod, half of them empty.
    out = {}
    for key, item in value.items():
        cls = item.__class__
        if cls is dict:
            out[key] = _freeze_dict(item) if item else EMPTY_DICT
        elif cls in _SCALARS:
            out[key] = item
        else:
            out[key] = freeze_json(item)
    return FrozenDict(out)


def thaw_json(value: Any) -> Any:
    """Deep, plain, editable copy of a JSON value (also of a frozen one)."""
    cls = value.__class__
    if cls in _SCALARS:
        return value
    if cls is dict or cls is FrozenDict:
        return _thaw_dict(value)
    if cls is list or cls is FrozenList:
        return [x if x.__class__ in _SCALARS else thaw_json(x) for x in value]
    if isinstance(value, dict):
        return _thaw_dict(value)
    if isinstance(value, list):
        return [thaw_json(x) for x in value]
    return value


def _thaw_dict(value: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, item in value.items():
        cls = item.__class__
        if cls is dict or cls is FrozenDict:
            out[key] = _thaw_dict(item) if item else {}
        elif cls in _SCALARS:
            out[key] = item
        else:
            out[key] = thaw_json(item)
    return out


_SCALARS = frozenset({str, int, float, bool, type(None)})
