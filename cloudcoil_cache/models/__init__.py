"""Typed Kubernetes models: attrs classes generated from the OpenAPI spec, and their one converter.

``Model``/``Resource`` are the bases; ``structure``/``unstructure`` convert wire dicts through the
single cattrs ``converter``; ``structure_sealed`` builds the read-only objects the cache shares;
``resource_class_for`` finds the class of an (apiVersion, kind). Generated kinds live in
``cloudcoil_cache.models.kubernetes.<group>.<version>`` (imported lazily).
"""

from __future__ import annotations

import importlib
from typing import Any

# Each module imports only modules below it: ``_fields`` (markers, names) < ``_codegen`` <
# ``_convert`` < ``_dump`` < ``_builders`` < ``_model`` (``Model``) < ``apimachinery`` < ``_base``
# (``Resource``) < the generated kinds. Only ``_parse.kinds`` is still installed from above, by
# ``_registry`` (and ``_unstructured``): importing the package imports them.
from cloudcoil_cache.models import _unstructured  # noqa: F401
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
from cloudcoil_cache.models._registry import resource_class_for

__all__ = [
    "FrozenDict",
    "FrozenList",
    "Model",
    "Resource",
    "ResourceList",
    "converter",
    "is_sealed",
    "kubernetes",
    "make_converter",
    "resource_class_for",
    "structure",
    "structure_sealed",
    "unstructure",
]


def __getattr__(name: str) -> Any:
    if name == "kubernetes":
        return importlib.import_module(f"{__name__}.kubernetes")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
