"""Tiny stand-in objects for pure store/dispatch tests (no HTTP, no models)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


def obj(name: str, namespace: str = "default", rv: str = "1", uid: str | None = None, **labels: str) -> Any:
    meta = SimpleNamespace(
        name=name, namespace=namespace, resource_version=rv, labels=dict(labels), uid=uid or f"uid-{namespace}-{name}"
    )
    return SimpleNamespace(metadata=meta)
