"""cloudcoil's ``resources`` names: ``Resource``, ``GVK``, ``ResourceList``, ``parse``/``parse_file``,
``get_model``, ``Unstructured``, ``get_dynamic_resource``, and ``GenericResource`` custom kinds."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from cloudcoil_cache import _fork
from cloudcoil_cache.models._base import Model, Resource, finish_model, model, register_resource
from cloudcoil_cache.models._gvk import GVK
from cloudcoil_cache.models._list import ResourceList
from cloudcoil_cache.models._parse import get_model, parse, parse_file
from cloudcoil_cache.models._registry import register_class
from cloudcoil_cache.models._unstructured import Unstructured, dynamic_resource
from cloudcoil_cache.models.apimachinery import ObjectMeta

__all__ = [
    "GVK",
    "GenericResource",
    "Model",
    "Resource",
    "ResourceList",
    "Unstructured",
    "get_dynamic_resource",
    "get_model",
    "parse",
    "parse_file",
]


def get_dynamic_resource(kind: str, api_version: str) -> type[Unstructured]:
    """A class for ``kind`` in ``api_version`` whose objects are ``Unstructured`` (dict content).

    No request is made here: the kind's plural, scope and subresources come from the API server's
    discovery, through the Config in use, at the class's first API call. The same class is returned
    for the same arguments. Its objects have ``obj["spec"]``, ``obj.raw`` and the usual methods
    (``create()``, ``update()``, ``update_status()``, ``scale()``, ``save()``...), and so do its
    class methods (``get``, ``list``, ``watch``, ``delete``).

    Raises:
        ValueError: ``kind`` or ``api_version`` is empty; at the first API call, a ``ConfigError``
            (also a ``ValueError``) when the server does not serve that kind ("... is not registered
            with the server").
    """
    return dynamic_resource(kind, api_version)


class _Scheme:
    """cloudcoil's private kind registry, for code that reaches it (``_Scheme._register``/``get``)."""

    @staticmethod
    def _register(cls: type[Resource]) -> None:
        register_class(cls)

    @staticmethod
    def get(kind: str, api_version: str = "") -> type[Resource]:
        return get_model(kind, api_version)


_define_lock = threading.Lock()
_fork.renew_locks(globals(), _define_lock=threading.Lock)
_defined: dict[tuple[str, str], type[GenericResource]] = {}


@model
class GenericResource(Resource):
    """A resource without a generated schema: typed ``metadata``, free-form ``spec``/``status``.

    Other top-level keys are kept as unknown fields and written back. Declare a kind with
    ``GenericResource.define(api_version=..., kind=..., plural=..., namespaced=...)`` or by
    subclassing: ``class Widget(GenericResource, api_version="example.com/v1", kind="Widget",
    plural="widgets", namespaced=True): pass``. Either way the class is what
    ``models.resource_class_for(api_version, kind)`` returns.
    """

    metadata: ObjectMeta | None = None
    spec: dict[str, Any] | None = None
    status: dict[str, Any] | None = None

    _declared: ClassVar[bool] = False

    def __init_subclass__(
        cls,
        *,
        api_version: str | None = None,
        kind: str | None = None,
        plural: str | None = None,
        namespaced: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        given = (api_version, kind, plural, namespaced)
        if all(v is None for v in given):
            return  # the sealed twin, or an intermediate base without metadata
        if api_version is None or kind is None or plural is None or namespaced is None:
            raise TypeError(
                f"{cls.__name__}: a GenericResource subclass needs api_version, kind, plural and namespaced (all four)"
            )
        _declare(cls, api_version, kind, plural, namespaced)

    @classmethod
    def define(cls, *, api_version: str, kind: str, plural: str, namespaced: bool) -> type[GenericResource]:
        """The resource class of a custom kind (the same class when defined again alike).

        Raises:
            ValueError: the kind was defined before with a different plural or scope.
        """
        with _define_lock:
            existing = _defined.get((api_version, kind))
            if existing is not None:
                if (existing.plural, existing.namespaced) != (plural, namespaced):
                    raise ValueError(
                        f"{kind} ({api_version}) is already defined with "
                        f"plural={existing.plural!r}, namespaced={existing.namespaced}; "
                        f"got plural={plural!r}, namespaced={namespaced}"
                    )
                return existing
            new = type(
                kind,
                (cls,),
                {"__slots__": (), "__module__": __name__},
                api_version=api_version,
                kind=kind,
                plural=plural,
                namespaced=namespaced,
            )
            _defined[(api_version, kind)] = new
            return new


def _declare(cls: type[GenericResource], api_version: str, kind: str, plural: str, namespaced: bool) -> None:
    _check_text("api_version", api_version)
    _check_text("kind", kind)
    _check_text("plural", plural)
    if not isinstance(namespaced, bool):
        raise TypeError(f"namespaced must be a bool, got {type(namespaced).__name__}")
    group, _, version = api_version.rpartition("/")
    for attr, value in (
        ("api_version", api_version),
        ("kind", kind),
        ("plural", plural),
        ("namespaced", namespaced),
        ("group", group),
        ("version", version),
        ("_declared", True),
    ):
        type.__setattr__(cls, attr, value)
    if cls.__dict__.get("_cc_auto"):
        return  # a class with annotated fields: made a model, and registered, by its metaclass next
    finish_model(cls)
    register_resource(cls)


def _check_text(what: str, value: object) -> None:
    if not isinstance(value, str) or not value or value != value.strip() or " " in value:
        raise ValueError(f"GenericResource {what} must be a non-empty string without spaces, got {value!r}")
