"""The ``Resource`` base of every top-level kind (API metadata, ``metadata`` shortcuts) and the kind registry.

It sits above ``apimachinery`` (its ``metadata`` is an ``ObjectMeta``), which sits above the
``Model`` base (``models._model``); the generated kinds import ``Model``, ``Resource`` and
``model`` from here.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from cloudcoil_cache.models._fields import field_hints, wire_name
from cloudcoil_cache.models._model import (
    Model,
    _rebuild,  # noqa: F401 - objects pickled before the split name it here
    convert_kwargs,
    finish_model,
    is_sealed,
    model,
)
from cloudcoil_cache.models.apimachinery import ObjectMeta

__all__ = [
    "Model",
    "Resource",
    "field_hints",
    "finish_model",
    "is_sealed",
    "model",
    "plain_resource_of",
    "register_resource",
    "registered_resource",
    "wire_name",
]

R = TypeVar("R", bound="Resource")

if TYPE_CHECKING:
    from typing_extensions import Self

_REGISTRY: dict[tuple[str, str], type[Resource]] = {}

#: The name ``models._unstructured`` imports.
_convert_kwargs = convert_kwargs


class Resource(Model):
    """Base of top-level kinds: API metadata ClassVars and shortcuts into ``metadata`` (data only).

    The API verbs (``get``, ``list``, ``create()``...) are composed on it above the client:
    ``cloudcoil_cache.resources.Resource``, the base of every generated kind.

    ``api_version`` and ``kind`` are class constants (written to the wire by ``to_dict()``); a wire
    object whose ``apiVersion``/``kind`` differ from them keeps its own values as unknown fields.
    """

    # A sealed object decoded by ``models._reuse`` keeps the fingerprints of its top-level values
    # here (not a field: never compared, copied, shown or serialised).
    __slots__ = ("_cc_digest",)

    api_version: ClassVar[str | None] = None
    kind: ClassVar[str | None] = None
    plural: ClassVar[str | None] = None
    namespaced: ClassVar[bool] = False
    group: ClassVar[str | None] = None
    version: ClassVar[str | None] = None
    # The marker the modules below the bases know a resource class by (``_fields.is_resource_class``).
    _cc_resource: ClassVar[bool] = True
    # The fields a user's annotated subclass gets when it does not declare them (see ``_model``).
    _cc_implied_fields: ClassVar[dict[str, Any]] = {"metadata": ObjectMeta | None}

    if TYPE_CHECKING:  # a field of every kind (generated, or implied for a user's class)
        metadata: ObjectMeta | None

    # A base that stands for any kind: ``Resource(apiVersion="v1", kind="Pod", metadata=...)`` builds a
    # plain resource (``plain_resource_of``), as cloudcoil's does. Read from the class's own dict only.
    _cc_any_kind: ClassVar[bool] = True

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        if "_cc_any_kind" in cls.__dict__:
            cls = plain_resource_of(cls)
        made: Self = object.__new__(cls)
        return made

    # Whether a class that declares its kind is what ``parse``/``get_model`` give for it: the kinds with
    # the API verbs (``resources.Resource`` sets it). A data-only kind must not take a kind's place.
    _cc_registers: ClassVar[bool] = False

    @classmethod
    def _cc_built(cls, *, replace: bool, register: bool) -> None:
        """Called by ``model()`` once ``cls`` is built: a kind with the API verbs registers its kind."""
        if register and cls.kind and cls._cc_registers:
            register_resource(cls, replace=replace)

    @property
    def name(self) -> str | None:
        """``metadata.name``; setting it creates ``metadata`` when missing (read-only when sealed)."""
        meta = self.metadata
        return None if meta is None else meta.name

    @name.setter
    def name(self, value: str | None) -> None:
        _set_meta(self, "name", value)

    @property
    def namespace(self) -> str | None:
        """``metadata.namespace``; setting it creates ``metadata`` when missing (read-only when sealed)."""
        meta = self.metadata
        return None if meta is None else meta.namespace

    @namespace.setter
    def namespace(self, value: str | None) -> None:
        _set_meta(self, "namespace", value)

    @property
    def resource_version(self) -> str | None:
        meta = self.metadata
        return None if meta is None else meta.resource_version

    @property
    def uid(self) -> str | None:
        meta = self.metadata
        return None if meta is None else meta.uid


def _set_meta(obj: Resource, field: str, value: str | None) -> None:
    """``obj.metadata.<field> = value``, creating an ``ObjectMeta`` when there is none."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{type(obj).__name__}.{field} must be a string or None, got {type(value).__name__}")
    meta = obj.metadata
    if meta is None:
        obj.metadata = ObjectMeta(**{field: value})
    else:
        setattr(meta, field, value)


def register_resource(cls: type[Resource], *, replace: bool = True) -> None:
    """Make ``cls`` what ``resource_class_for(cls.api_version, cls.kind)`` returns.

    Generated classes register with ``replace=False``, so a custom class defined earlier for the
    same (apiVersion, kind) keeps precedence when the generated module is imported later.
    """
    key = (str(cls.api_version), str(cls.kind))
    if replace:
        _REGISTRY[key] = cls
    else:
        _REGISTRY.setdefault(key, cls)


def registered_resource(api_version: str, kind: str) -> type[Resource] | None:
    return _REGISTRY.get((api_version, kind))


@functools.lru_cache(maxsize=None)
def plain_resource_of(base: type[R]) -> type[R]:
    """What ``base(...)`` builds for a base that stands for any kind: a resource of any kind with only
    ``metadata`` typed (pickled by reference as ``_PlainResource`` of the base's module)."""
    plain = type(
        "Resource",
        (base,),
        {
            "__module__": base.__module__,
            "__qualname__": "_PlainResource",
            "__annotations__": {"metadata": ObjectMeta | None},
            "metadata": None,
            "__doc__": "A resource of any kind: typed ``metadata``, other fields kept as they came.",
        },
    )
    made: type[R] = model(plain)
    return made


def __getattr__(name: str) -> Any:
    if name == "_PlainResource":  # what pickle looks up for a ``Resource(...)`` object
        return plain_resource_of(Resource)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
