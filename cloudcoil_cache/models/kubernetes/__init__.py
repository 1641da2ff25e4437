"""Generated Kubernetes models, one subpackage per API group (imported lazily)."""

# ruff: noqa: E501
from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "admissionregistration",
    "apiextensions",
    "apiregistration",
    "apps",
    "authentication",
    "authorization",
    "autoscaling",
    "batch",
    "certificates",
    "coordination",
    "core",
    "discovery",
    "events",
    "flowcontrol",
    "networking",
    "node",
    "policy",
    "rbac",
    "scheduling",
    "storage",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return importlib.import_module(f"cloudcoil_cache.models.kubernetes.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
