"""Objects from manifests: ``parse`` (dicts), ``parse_file`` (YAML/JSON files) and ``get_model`` (kind lookup).

It sits below the model classes (``ResourceMethods.from_file`` calls it, and ``Resource`` is one):
the class lookup and the ``Unstructured`` fallback are installed in ``kinds`` by ``models._registry``
and ``models._unstructured`` when they are imported (the package imports both).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Literal, TypeAlias, overload

import yaml

from cloudcoil_cache._yaml import describe_error

__all__ = ["get_model", "kinds", "parse", "parse_file"]

#: An object of a resource class (``Resource``, defined above this module, so not named here).
_Resource: TypeAlias = Any


class _Kinds:
    """What the model modules install here, so that manifests decode without importing them (no cycle)."""

    #: ``resource_class_for(api_version, kind)`` (``models._registry``)
    class_for: Callable[[str, str], type[Any] | None]
    #: ``resource_classes_of_kind(kind)`` (``models._registry``)
    classes_of_kind: Callable[[str], list[type[Any]]]
    #: ``Unstructured.from_dict`` (``models._unstructured``): what a kind without a class reads as
    unstructured: Callable[[Any], Any]


kinds = _Kinds()


def get_model(kind: str, api_version: str = "") -> type[_Resource]:
    """The class of ``kind`` in ``api_version``; with no ``api_version``, the only class of that kind.

    Raises:
        KeyError: no known class (generated, defined or registered) has that kind (and apiVersion).
        ValueError: ``api_version`` is empty and several group versions have a class of that kind.
    """
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"get_model: kind must be a non-empty string, got {kind!r}")
    if api_version:
        found = kinds.class_for(api_version, kind)
        if found is None:
            raise KeyError(f"no resource class for kind {kind!r} in apiVersion {api_version!r}")
        return found
    matches = kinds.classes_of_kind(kind)
    if len(matches) == 1:
        return matches[0]
    if matches:
        versions = ", ".join(str(cls.api_version) for cls in matches)
        raise ValueError(f"kind {kind!r} is ambiguous (apiVersions {versions}): give api_version")
    raise KeyError(f"no resource class for kind {kind!r}")


@overload
def parse(obj: list[dict[str, Any]]) -> list[_Resource]: ...
@overload
def parse(obj: dict[str, Any]) -> _Resource: ...


def parse(obj: dict[str, Any] | list[dict[str, Any]]) -> _Resource | list[_Resource]:
    """The object of the registered class for a manifest's ``apiVersion``/``kind`` (a list: each).

    Raises:
        ValueError: ``apiVersion`` or ``kind`` is missing ("Field required") or not a string.
        KeyError: no known class for that ``apiVersion``/``kind`` (``parse_file`` gives an
            ``Unstructured`` instead).
        DecodeError: the content does not fit the class.
    """
    if isinstance(obj, list):
        return [_parse_one(item, f"item {i}", lenient=False) for i, item in enumerate(obj)]
    return _parse_one(obj, "the manifest", lenient=False)


@overload
def parse_file(path: str | os.PathLike[str], load_all: Literal[True]) -> list[_Resource]: ...
@overload
def parse_file(path: str | os.PathLike[str], load_all: Literal[False] = ...) -> _Resource: ...
@overload
def parse_file(path: str | os.PathLike[str], load_all: bool) -> _Resource | list[_Resource]: ...


def parse_file(path: str | os.PathLike[str], load_all: bool = False) -> _Resource | list[_Resource]:
    """The object(s) of a YAML or JSON manifest file (``---`` separates YAML documents).

    Kinds with a known class are typed objects; any other kind (a custom resource without a
    class) is an ``Unstructured``. ``load_all=True`` returns a list of every document.

    Raises:
        ValueError: the file is empty ("Empty YAML document"), is not UTF-8 or not valid YAML/JSON
            ("Failed to parse YAML", with the line and column, never the content), holds several documents
            with ``load_all=False``, or a document lacks ``apiVersion``/``kind``.
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
    if not load_all:
        if len(docs) > 1:
            raise ValueError(
                f"Multiple YAML documents found when load_all=False: {where} holds {len(docs)}; "
                "pass load_all=True for a list"
            )
        return _parse_one(docs[0], where, lenient=True)
    return [_parse_one(doc, f"{where}, document {i + 1}", lenient=True) for i, doc in enumerate(docs)]


def _parse_one(obj: Any, where: str, *, lenient: bool) -> _Resource:
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: a manifest must be a mapping, got {type(obj).__name__}")
    api_version, kind = _type_meta(obj, where, "apiVersion"), _type_meta(obj, where, "kind")
    cls = kinds.class_for(api_version, kind)
    if cls is None:
        if lenient:
            return kinds.unstructured(obj)
        raise KeyError(
            f"{where}: no resource class for kind {kind!r} in apiVersion {api_version!r} "
            "(parse_file() reads unknown kinds as Unstructured)"
        )
    return cls.from_dict(obj)


def _type_meta(obj: dict[str, Any], where: str, key: str) -> str:
    value = obj.get(key)
    if value is None or value == "":
        raise ValueError(f"{where}: {key}: Field required")
    if not isinstance(value, str):
        raise ValueError(f"{where}: {key} must be a string, got {type(value).__name__}")
    return value
