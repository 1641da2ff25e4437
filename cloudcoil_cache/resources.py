"""cloudcoil's ``resources`` names: ``Resource``, ``GVK``, ``ResourceList``, ``parse``/``parse_file``,
``get_model``, ``resource_class_for``, ``Unstructured``, ``get_dynamic_resource``, and ``GenericResource``
custom kinds. It knows every kind: the generated modules are imported here on first use."""

from __future__ import annotations

import importlib
import os
import threading
from typing import Any, ClassVar, Literal, overload

from cloudcoil_cache import _fork
from cloudcoil_cache._resource import Resource
from cloudcoil_cache._unstructured import Unstructured, dynamic_resource
from cloudcoil_cache.models import Model, ResourceList
from cloudcoil_cache.models._base import _REGISTRY, finish_model, model, register_resource, registered_resource
from cloudcoil_cache.models._gvk import GVK
from cloudcoil_cache.models._parse import load_documents, parse_one
from cloudcoil_cache.models._registry import register_class
from cloudcoil_cache.models.apimachinery import ObjectMeta
from cloudcoil_cache.models.kubernetes._index import MODULES

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
    "resource_class_for",
]


def resource_class_for(api_version: str, kind: str) -> type[Resource] | None:
    """The class for ``(api_version, kind)``, importing its generated module on first use; or None.

    A ``GenericResource`` defined (or subclassed) for the same pair takes precedence once defined.
    """
    found = registered_resource(api_version, kind)
    if found is None:
        module = MODULES.get((api_version, kind))
        if module is None:
            return None
        importlib.import_module(module)  # a generated module: it registers its kinds
        found = registered_resource(api_version, kind)
    return found if isinstance(found, type) and issubclass(found, Resource) else None


def _classes_of_kind(kind: str) -> list[type[Resource]]:
    """Every known class named ``kind``, in any group version (generated ones imported as needed)."""
    pairs = {pair for pair in MODULES if pair[1] == kind}
    pairs.update(pair for pair in list(_REGISTRY) if pair[1] == kind)
    found = (resource_class_for(api_version, k) for api_version, k in sorted(pairs))
    return [cls for cls in found if cls is not None]


def get_model(kind: str, api_version: str = "") -> type[Resource]:
    """The class of ``kind`` in ``api_version``; with no ``api_version``, the only class of that kind.

    Raises:
        KeyError: no known class (generated, defined or registered) has that kind (and apiVersion).
        ValueError: ``api_version`` is empty and several group versions have a class of that kind.
    """
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"get_model: kind must be a non-empty string, got {kind!r}")
    if api_version:
        found = resource_class_for(api_version, kind)
        if found is None:
            raise KeyError(f"no resource class for kind {kind!r} in apiVersion {api_version!r}")
        return found
    matches = _classes_of_kind(kind)
    if len(matches) == 1:
        return matches[0]
    if matches:
        versions = ", ".join(str(cls.api_version) for cls in matches)
        raise ValueError(f"kind {kind!r} is ambiguous (apiVersions {versions}): give api_version")
    raise KeyError(f"no resource class for kind {kind!r}")


@overload
def parse(obj: list[dict[str, Any]]) -> list[Resource]: ...
@overload
def parse(obj: dict[str, Any]) -> Resource: ...


def parse(obj: dict[str, Any] | list[dict[str, Any]]) -> Resource | list[Resource]:
    """The object of the registered class for a manifest's ``apiVersion``/``kind`` (a list: each).

    Raises:
        ValueError: ``apiVersion`` or ``kind`` is missing ("Field required") or not a string.
        KeyError: no known class for that ``apiVersion``/``kind`` (``parse_file`` gives an
            ``Unstructured`` instead).
        DecodeError: the content does not fit the class.
    """
    if isinstance(obj, list):
        return [parse_one(item, f"item {i}", resource_class_for, None) for i, item in enumerate(obj)]
    parsed: Resource = parse_one(obj, "the manifest", resource_class_for, None)
    return parsed


@overload
def parse_file(path: str | os.PathLike[str], load_all: Literal[True]) -> list[Resource]: ...
@overload
def parse_file(path: str | os.PathLike[str], load_all: Literal[False] = ...) -> Resource: ...
@overload
def parse_file(path: str | os.PathLike[str], load_all: bool) -> Resource | list[Resource]: ...


def parse_file(path: str | os.PathLike[str], load_all: bool = False) -> Resource | list[Resource]:
    """The object(s) of a YAML or JSON manifest file (``---`` separates YAML documents).

    Kinds with a known class are typed objects; any other kind (a custom resource without a
    class) is an ``Unstructured``. ``load_all=True`` returns a list of every document.

    Raises:
        ValueError: the file is empty ("Empty YAML document"), is not UTF-8 or not valid YAML/JSON
            ("Failed to parse YAML", with the line and column, never the content), holds several documents
            with ``load_all=False``, or a document lacks ``apiVersion``/``kind``.
        OSError: the file cannot be read.
    """
    docs = load_documents(path, load_all)
    where = str(path)
    if not load_all:
        parsed: Resource = parse_one(docs[0], where, resource_class_for, Unstructured.from_dict)
        return parsed
    return [
        parse_one(doc, f"{where}, document {i + 1}", resource_class_for, Unstructured.from_dict)
        for i, doc in enumerate(docs)
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
    ``resource_class_for(api_version, kind)`` returns.
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
