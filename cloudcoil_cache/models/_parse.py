"""Manifests read: the documents of a YAML or JSON file, and one manifest decoded by a class lookup given
to it (``parse``, ``parse_file`` and ``get_model`` are in ``cloudcoil_cache.resources``, which knows every
kind)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import yaml

from cloudcoil_cache._yaml import describe_error

__all__ = ["load_documents", "parse_one", "type_meta"]


def load_documents(path: str | os.PathLike[str], load_all: bool) -> list[Any]:
    """The documents of a YAML or JSON manifest file (``---`` separates YAML documents); exactly one
    unless ``load_all``.

    Raises:
        ValueError: the file is empty ("Empty YAML document"), is not UTF-8 or not valid YAML/JSON
            ("Failed to parse YAML", with the line and column, never the content), or holds several
            documents with ``load_all=False``.
        OSError: the file cannot be read.
    """
    where = str(path)
    try:
        text: str | None = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:  # its .object is the file's bytes: not carried along
        text = None
    if text is None:
        raise ValueError(f"Failed to parse YAML in {where}: not UTF-8 text") from None
    if not text.strip():
        raise ValueError(f"Empty YAML document: {where} has no content")
    problem: str | None = None
    docs: list[Any] = []
    try:
        docs = [doc for doc in yaml.safe_load_all(text) if doc is not None]
    except yaml.YAMLError as exc:  # its marks hold the whole text: described here, raised outside
        problem = describe_error(exc)
    if problem is not None:
        raise ValueError(f"Failed to parse YAML in {where}: {problem}") from None
    if not docs:
        raise ValueError(f"Empty YAML document: {where} holds no object")
    if not load_all and len(docs) > 1:
        raise ValueError(
            f"Multiple YAML documents found when load_all=False: {where} holds {len(docs)}; "
            "pass load_all=True for a list"
        )
    return docs


def parse_one(
    obj: Any,
    where: str,
    class_for: Callable[[str, str], type[Any] | None],
    unstructured: Callable[[Any], Any] | None,
) -> Any:
    """A manifest as an object of its class (``class_for(apiVersion, kind)``); without a class, what
    ``unstructured`` makes of it, or a ``KeyError`` when it is None."""
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: a manifest must be a mapping, got {type(obj).__name__}")
    api_version, kind = type_meta(obj, where, "apiVersion"), type_meta(obj, where, "kind")
    cls = class_for(api_version, kind)
    if cls is None:
        if unstructured is not None:
            return unstructured(obj)
        raise KeyError(
            f"{where}: no resource class for kind {kind!r} in apiVersion {api_version!r} "
            "(parse_file() reads unknown kinds as Unstructured)"
        )
    return cls.from_dict(obj)


def type_meta(obj: dict[str, Any], where: str, key: str) -> str:
    """``obj[key]`` (``apiVersion`` or ``kind``), a non-empty string; else a ``ValueError``."""
    value = obj.get(key)
    if value is None or value == "":
        raise ValueError(f"{where}: {key}: Field required")
    if not isinstance(value, str):
        raise ValueError(f"{where}: {key} must be a string, got {type(value).__name__}")
    return value
