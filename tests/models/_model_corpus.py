"""Loader of the realistic wire objects in tests/models/corpus (shared by the model tests)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"


def load(name: str) -> dict[str, Any]:
    """A fresh copy of corpus object ``name`` (file stem)."""
    return json.loads((CORPUS_DIR / f"{name}.json").read_text(encoding="utf-8"))


def names() -> list[str]:
    return sorted(p.stem for p in CORPUS_DIR.glob("*.json") if p.stem != "pod_list")


def with_unknown_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` plus fields no 1.30 model knows, top-level and nested (as a newer server sends)."""
    out = copy.deepcopy(obj)
    out["futureTopLevel"] = {"a": [1, {"b": None}], "c": "d"}
    out.setdefault("metadata", {})["futureMeta"] = "x"
    spec = out.get("spec")
    if isinstance(spec, dict):
        spec["futureSpecField"] = [1, 2, 3]
        for container in spec.get("containers", []):
            container["newField"] = {"enabled": True}
        template = spec.get("template")
        if isinstance(template, dict):
            template["spec"]["containers"][0]["newField"] = "v2"
    status = out.get("status")
    if isinstance(status, dict):
        status["futureThing"] = {"phase": "Warm", "since": "2024-05-01T10:00:00Z"}
    return out
