"""Generated models of the autoscaling API group (versions imported lazily)."""

# ruff: noqa: E501
from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "v1",
    "v2",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return importlib.import_module(f"cloudcoil_cache.models.kubernetes.autoscaling.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
