"""Typed Kubernetes models: attrs classes generated from the OpenAPI spec, and their one converter.

``Model``/``Resource`` are the bases (data only: the API verbs are composed on the kinds above the client,
``cloudcoil_cache.resources.Resource``); ``structure``/``unstructure`` convert wire dicts through the
single cattrs ``converter``; ``structure_sealed`` builds the read-only objects the cache shares.
Generated kinds live in ``cloudcoil_cache.models.kubernetes.<group>.<version>``.
"""

from __future__ import annotations

# Each module imports only modules below it: ``_fields`` (markers, names) < ``_codegen`` <
# ``_convert`` < ``_dump`` < ``_builders`` < ``_model`` (``Model``) < ``apimachinery`` < ``_base``
# (``Resource``, data only) < the generated kinds (``models.kubernetes``, above the client: their base is
# ``cloudcoil_cache.resources.Resource``, the data with the API verbs).
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
from cloudcoil_cache.models._partial import PartialObjectMetadata

__all__ = [
    "FrozenDict",
    "FrozenList",
    "Model",
    "PartialObjectMetadata",
    "Resource",
    "ResourceList",
    "converter",
    "is_sealed",
    "make_converter",
    "structure",
    "structure_sealed",
    "unstructure",
]
