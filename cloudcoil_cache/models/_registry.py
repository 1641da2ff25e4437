"""Lookup of the class of an (apiVersion, kind): generated kinds and defined custom resources."""

from __future__ import annotations

import importlib

from cloudcoil_cache.models import _parse
from cloudcoil_cache.models._base import _REGISTRY, Resource, register_resource, registered_resource

__all__ = ["register_class", "resource_class_for", "resource_classes_of_kind"]


def resource_class_for(api_version: str, kind: str) -> type[Resource] | None:
    """The class for ``(api_version, kind)``, importing its generated module on first use; or None.

    A ``GenericResource`` defined (or subclassed) for the same pair takes precedence once defined.
    """
    found = registered_resource(api_version, kind)
    if found is not None:
        return found
    from cloudcoil_cache.models.kubernetes._index import MODULES

    module = MODULES.get((api_version, kind))
    if module is None:
        return None
    importlib.import_module(module)
    return registered_resource(api_version, kind)


def resource_classes_of_kind(kind: str) -> list[type[Resource]]:
    """Every known class named ``kind``, in any group version (generated ones imported as needed)."""
    from cloudcoil_cache.models.kubernetes._index import MODULES

    pairs = {pair for pair in MODULES if pair[1] == kind}
    pairs.update(pair for pair in list(_REGISTRY) if pair[1] == kind)
    found = (resource_class_for(api_version, k) for api_version, k in sorted(pairs))
    return [cls for cls in found if cls is not None]


def register_class(cls: type[Resource]) -> None:
    """Make ``cls`` the class of its ``(api_version, kind)`` (again alike is a no-op).

    Raises:
        ValueError: ``cls`` has no ``api_version`` or ``kind``.
    """
    if not isinstance(cls.api_version, str) or not isinstance(cls.kind, str):
        raise ValueError(f"{cls.__name__} has no api_version/kind to register under")
    register_resource(cls, replace=True)


_parse.kinds.class_for = resource_class_for
_parse.kinds.classes_of_kind = resource_classes_of_kind
