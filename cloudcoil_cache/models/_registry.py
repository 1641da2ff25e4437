"""Lookup of the class of an (apiVersion, kind): generated kinds and defined custom resources."""

from __future__ import annotations

import importlib

from cloudcoil_cache.models._base import Resource, registered_resource

__all__ = ["resource_class_for"]


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
