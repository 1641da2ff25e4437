"""Decoding a resource's new version so that it shares its previous version's unchanged values."""

from __future__ import annotations

import os
from typing import Any, Callable

from cloudcoil_cache import _json
from cloudcoil_cache.models import _codegen
from cloudcoil_cache.models._base import Resource
from cloudcoil_cache.models._convert import converter
from cloudcoil_cache.models._frozen import FrozenList, keyed_digest

__all__ = ["reusing"]

_MASK = (1 << 64) - 1


def _seeded_hash(data: bytes) -> int:
    return int.from_bytes(keyed_digest(data, 8), "little")


# Python's hash() of bytes is SipHash keyed by a random secret of the process: fast, and no one can
# craft a new version whose spec fingerprints like the old one. With PYTHONHASHSEED set that key is
# known (collisions of 64 bits are found in ~2**32 tries), so a keyed BLAKE2b is used instead.
_fingerprint: Callable[[bytes], int] = hash if os.environ.get("PYTHONHASHSEED", "random") == "random" else _seeded_hash
_setattr = object.__setattr__
_COMPOSITE = ("model", "list", "dict")
_MANAGED = ("managed_fields", "managedFields")
#: managedFields entries fingerprinted (and shared when unchanged) per object: a few are usual.
MAX_ENTRIES = 16


def reusing(cls: type[Resource]) -> Callable[..., Any]:
    """``structure(data, previous, fingerprint=True, entries=True, whole=False)``: the sealed ``cls`` object of
    wire dict ``data`` (exactly what ``cls.from_dict_sealed(data)`` builds) that shares with
    ``previous``, the version it replaces (or None), every top-level value but ``metadata`` whose
    JSON did not change, and every ``metadata.managedFields`` entry whose JSON did not change. With
    ``fingerprint`` False and no ``previous``, the object gets no fingerprints, so its next version
    is decoded in full. With ``entries`` False and no ``previous`` (a bulk first list: the spec's
    and status' fingerprints cost ~3-5% of structuring a pod, its entries' as much again), its
    managedFields entries get none: its next version decodes them in full. With ``whole``, data
    with ``previous``'s uid and resourceVersion whose every fingerprinted value is unchanged is
    ``previous`` itself (a relisted object that did not change; the fingerprints still catch what is
    served differently under one resourceVersion: a CRD's new defaults, a conversion webhook).

    An update usually changes one part of an object (a pod's status, a label) and leaves its spec
    as it was: sharing the unchanged parts skips structuring them, and keeps one copy of them.

    How a value is known to be unchanged: each object decoded here keeps a 64-bit fingerprint of
    the JSON text of each of those values (a hash keyed by a secret of the process: two different
    texts agree with probability 2**-64, and no one can craft them), packed in one int (~50 bytes
    per object). Objects built any
    other way (a transform's result, a copy) have none, so their successor is decoded in full.
    """
    sealed: Any = getattr(cls, "__sealed_class__", None)
    if sealed is None or not issubclass(cls, Resource):
        return lambda data, previous, fingerprint=True, entries=True, whole=False: cls.from_dict_sealed(data)
    hook = converter.get_structure_hook(sealed)
    fields = _fingerprinted(cls)
    if not fields:
        return lambda data, previous, fingerprint=True, entries=True, whole=False: hook(data, sealed)
    return _reusing_structure(hook, sealed, fields, _managed_fields(cls, 64 * len(fields)))


def _fingerprinted(cls: type) -> tuple[tuple[str, str, int, Any], ...]:
    """(attribute, wire name, bit shift of its fingerprint, builder) of each top-level value but
    ``metadata`` that ``reusing`` fingerprints: the composite ones (spec, status, data...). The
    builder, for a model value whose sealed hook shares equal values (``_frozen.sharing``), is its
    ``with_key``: the value is then built (or found shared) from the JSON bytes its fingerprint was
    computed from, not serialised twice; else None."""
    out: list[tuple[str, str, int, Any]] = []
    for attr, wire, shape in _codegen._fields(cls):
        if shape[0] not in _COMPOSITE or attr == "metadata":
            continue
        build = None
        if shape[0] == "model":
            hook = converter.get_structure_hook(shape[1].__sealed_class__)
            build = getattr(hook, "with_key", None)
        out.append((attr, wire, 64 * len(out), build))
    return tuple(out)


def _reusing_structure(
    hook: Callable[[Any, Any], Any],
    sealed: Any,
    fields: tuple[tuple[str, str, int, Any], ...],
    managed: Callable[[Any, int | None, Any], tuple[int, Any]] | None = None,
) -> Callable[..., Any]:
    """The ``structure`` of ``reusing``: ``fields`` are (attribute, wire name, bit shift of its
    fingerprint); ``managed``, when the kind has ``metadata.managedFields``, fingerprints its entries
    and builds the metadata reusing the unchanged ones (see ``_managed_fields``)."""
    key = _json.key
    digest_of = _fingerprint
    values_mask = (1 << (64 * len(fields))) - 1  # the top-level values' fingerprints (managedFields' above)
    # A bulk first list (no previous version, no entries' fingerprints) without orjson fingerprints
    # only the values it shares by the same bytes (a pod's spec): marshal keys cost twice orjson's,
    # and a status' fingerprint (~7 µs of a pod's ~100) pays only on its first update.
    bulk = fields if _json.HAVE_ORJSON else tuple(f for f in fields if f[3] is not None)

    def structure(
        data: Any, previous: Any = None, fingerprint: bool = True, entries: bool = True, whole: bool = False
    ) -> Any:
        if data.__class__ is not dict or (previous is None and not fingerprint):
            return hook(data, sealed)  # (raises the usual error for a non-dict)
        old = getattr(previous, "_cc_digest", None) if previous.__class__ is sealed else None
        digest = 0
        kept: list[tuple[str, str, Any]] | None = None
        for attr, wire, shift, build in fields if entries or previous is not None else bulk:
            value = data.get(wire)
            if value is None:
                continue
            try:
                text = key(value)
            except TypeError:
                whole = False  # cannot be checked unchanged
                continue  # not plain JSON: decoded (and checked) as usual
            print_ = (digest_of(text) & _MASK) or 1
            digest |= print_ << shift
            same = getattr(previous, attr) if old is not None and (old >> shift) & _MASK == print_ else None
            if same is None and build is not None and value.__class__ is dict:
                same = build(value, text)  # (shared) as the hook would build it, from the same bytes
            if same is not None:
                if kept is None:
                    kept = []
                kept.append((attr, wire, same))
        # every fingerprinted value as ``previous`` had it (an absent one included), the same version
        if whole and old is not None and old & values_mask == digest and _same_version(data.get("metadata"), previous):
            return previous
        if managed is not None and (entries or previous is not None):
            prints, metadata = managed(data.get("metadata"), old, previous)
            digest |= prints
            if metadata is not None:
                kept = [*(kept or ()), ("metadata", "metadata", metadata)]
        obj = _assemble(hook, sealed, data, kept)
        _setattr(obj, "_cc_digest", digest)
        return obj

    return structure


def _same_version(meta: Any, stored: Any) -> bool:
    """``meta`` (an object's JSON metadata) names the very version ``stored`` is: same uid and resourceVersion."""
    stored_meta = getattr(stored, "metadata", None)
    rv = meta.get("resourceVersion") if meta.__class__ is dict else None
    return (
        bool(rv)
        and stored_meta is not None
        and rv == stored_meta.resource_version
        and meta.get("uid") == stored_meta.uid
    )


def _assemble(hook: Callable[[Any, Any], Any], sealed: Any, data: dict[str, Any], kept: list[Any] | None) -> Any:
    """``hook``'s object of ``data``, its ``kept`` values (attribute, wire name, value) not decoded but set."""
    if kept is None:
        return hook(data, sealed)
    rest = dict(data)
    for _attr, wire, _same in kept:
        del rest[wire]
    obj = hook(rest, sealed)
    for attr, _wire, same in kept:
        _setattr(obj, attr, same)
    return obj


def _managed_fields(cls: type, first: int) -> Callable[[Any, int | None, Any], tuple[int, Any]] | None:
    """``managed(metadata, old, previous) -> (fingerprints, metadata object or None)`` for a kind
    whose ``metadata`` has ``managedFields`` (None for any other).

    Each entry of ``metadata["managedFields"]`` (up to ``MAX_ENTRIES`` of them) gets a fingerprint
    of its JSON (bit shift ``first + 64 * index``): an entry whose fingerprint is one of the
    entries of ``previous`` (whose packed fingerprints are ``old``) is that entry object, shared,
    wherever it was in the list (the API server keeps them sorted by time). An update changes the
    entry of the manager that made it (its ``time``, its fields) and leaves the others as they were.
    When one is shared, the metadata object is built here: the rest of it decoded as usual, but not
    through its sharing table (that would file an object under the JSON of a metadata without its
    managedFields), then its ``managed_fields`` set; else None (the caller decodes it as usual).
    """
    meta_shape = next((shape for attr, _wire, shape in _codegen._fields(cls) if attr == "metadata"), None)
    if meta_shape is None or meta_shape[0] != "model":
        return None
    entry_shape = next(
        (shape for attr, wire, shape in _codegen._fields(meta_shape[1]) if (attr, wire) == _MANAGED), None
    )
    if entry_shape is None or entry_shape[0] != "list" or entry_shape[1][0] != "model":
        return None
    meta_sealed: Any = meta_shape[1].__sealed_class__
    entry_sealed: Any = entry_shape[1][1].__sealed_class__
    # the builder beneath the sharing table (interning included): exactly what the table would build
    build_meta = getattr(converter.get_structure_hook(meta_sealed), "__wrapped__", None)
    build_entry = converter.get_structure_hook(entry_sealed)
    if build_meta is None:
        return None
    key = _json.key
    digest_of = _fingerprint

    def with_entries(metadata: dict[str, Any], entries: list[Any], same: list[Any]) -> Any:
        rest = dict(metadata)
        del rest["managedFields"]
        obj = build_meta(rest)
        built = [s if s is not None else build_entry(e, entry_sealed) for e, s in zip(entries, same)]
        _setattr(obj, "managed_fields", FrozenList(built))
        return obj

    def managed(metadata: Any, old: int | None, previous: Any) -> tuple[int, Any]:
        entries = metadata.get("managedFields") if metadata.__class__ is dict else None
        if entries.__class__ is not list or not entries or len(entries) > MAX_ENTRIES:
            return 0, None
        known = _entry_prints(old >> first) if old is not None else None
        before = getattr(previous.metadata, "managed_fields", None) if known else None
        prints = 0
        same: list[Any] | None = None
        for index, entry in enumerate(entries):
            try:
                print_ = (digest_of(key(entry)) & _MASK) or 1
            except TypeError:
                return 0, None  # not plain JSON: decoded (and checked) as usual
            prints |= print_ << (first + 64 * index)
            at = known.get(print_) if known else None
            if at is not None and before is not None and at < len(before):
                if same is None:
                    same = [None] * len(entries)
                same[index] = before[at]
        return prints, None if same is None else with_entries(metadata, entries, same)

    return managed


def _entry_prints(packed: int) -> dict[int, int]:
    """``{fingerprint: index}`` of the managedFields entries packed in ``packed`` (64 bits each, none 0)."""
    known = {}
    index = 0
    while packed:
        known[packed & _MASK] = index
        packed >>= 64
        index += 1
    return known
