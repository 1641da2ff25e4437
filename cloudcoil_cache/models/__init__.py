"""Typed Kubernetes models: attrs classes generated from the OpenAPI spec, and their one converter.

``Model``/``Resource`` are the bases (data only: the API verbs are composed on the kinds above the client,
``cloudcoil_cache.resources.Resource``); ``structure``/``unstructure`` convert wire dicts through the
single cattrs ``converter``; ``structure_sealed`` builds the read-only objects the cache shares.
Generated kinds live in ``cloudcoil_cache.models.kubernetes.<group>.<version>``.
"""

from __future__ import annotations

# Each module imports only modules below it (``_base`` is the bottom of the classes); the higher
# ones install, when imported, what the lower ones call: ``_base.codec`` and ``_base.parts``
# (``_convert``, ``_codegen``, ``_dump``), ``_builders.parts`` (``_base``, ``_codegen``) and
# Importing the package imports them all, so
# every part is in place before any model is used.
from cloudcoil_cache.models import _base, _codegen, _dump, apimachinery  # noqa: F401
from cloudcoil_cache.models._base import Model, Resource, is_sealed
from cloudcoil_cache.models._convert import (
    converter,
    make_converter,
    structure,
    structure_sealed,
    unstructure,
)
from cloudcoil_cache.models._frozen import FrozenDict, FrozenList
from cloudcoil_cache.models._list import ResourceList

# apimachinery is generated: the package installs its ObjectMeta (a resource's ``metadata``) for it
_base.parts.object_meta = apimachinery.ObjectMeta

__all__ = [
    "FrozenDict",
    "FrozenList",
    "Model",
    "Resource",
    "ResourceList",
    "converter",
    "is_sealed",
    "make_converter",
    "structure",
    "structure_sealed",
    "unstructure",
]
