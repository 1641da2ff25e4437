"""The classes registered for an (apiVersion, kind): defined custom resources and generated kinds once imported."""

from __future__ import annotations

from cloudcoil_cache.models._base import Resource, register_resource

__all__ = ["register_class"]


def register_class(cls: type[Resource]) -> None:
    """Make ``cls`` the class of its ``(api_version, kind)`` (again alike is a no-op).

    Raises:
        ValueError: ``cls`` has no ``api_version`` or ``kind``.
    """
    if not isinstance(cls.api_version, str) or not isinstance(cls.kind, str):
        raise ValueError(f"{cls.__name__} has no api_version/kind to register under")
    register_resource(cls, replace=True)
