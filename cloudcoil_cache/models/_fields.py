"""What the model modules read of a model class: its markers, field names, wire names and resolved hints.

The bottom of the model classes' modules: code generation, conversion and the bases all read a
class through these functions. A class is a model, or a resource, by the marker it carries
(``_cc_model``, ``_cc_resource``: set on the ``Model`` and ``Resource`` bases), as cattrs tells an
attrs class by its ``__attrs_attrs__``; so nothing below the bases imports them.
"""

from __future__ import annotations

import typing
from typing import Any

import attrs

__all__ = ["editable_class", "field_hints", "field_names", "is_model_class", "is_resource_class", "wire_name"]


def is_model_class(t: Any) -> bool:
    """Whether ``t`` is a model class (a subclass of ``Model``, its read-only twins included)."""
    return isinstance(t, type) and getattr(t, "_cc_model", False) is True


def is_resource_class(t: Any) -> bool:
    """Whether ``t`` is a resource class (a subclass of ``Resource``)."""
    return isinstance(t, type) and getattr(t, "_cc_resource", False) is True


def editable_class(cls: type) -> type:
    """The editable class of model class ``cls`` (itself, or the class a read-only twin is of)."""
    editable: type = getattr(cls, "__editable_class__")
    return editable


def field_names(cls: type) -> tuple[str, ...]:
    """The attribute names of the fields of model class ``cls`` (``_extra`` left out), cached on it."""
    names: tuple[str, ...] | None = cls.__dict__.get("_cc_field_names")
    if names is None:
        names = tuple(a.name for a in attrs.fields(cls) if a.name != "_extra")
        type.__setattr__(cls, "_cc_field_names", names)
    return names


def wire_name(cls: type, attr: str) -> str:
    """The wire (JSON) name of attribute ``attr`` of ``cls``."""
    special: dict[str, str] | None = getattr(cls, "_wire", None)
    name = special.get(attr) if special else None
    if name:
        return name
    head, *rest = attr.rstrip("_").split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def field_hints(cls: type) -> dict[str, Any]:
    """The resolved annotations of a model class, also of a user's class defined in a function.

    Raises:
        TypeError: an annotation names something not defined (yet), saying which class.
    """
    localns: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        localns.update(klass.__dict__.get("_cc_localns") or {})
    try:
        return typing.get_type_hints(cls, localns=localns or None, include_extras=True)
    except NameError as exc:
        raise TypeError(
            f"{cls.__qualname__}: a field's type cannot be resolved ({exc}); define the "
            "classes its fields name before the class is first used"
        ) from None
