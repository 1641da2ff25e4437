"""Decoding a resource's new version so that it shares its previous version's unchanged values."""

from __future__ import annotations

import os
from typing import Any, Callable

from cloudcoil_cache import _json
from cloudcoil_cache.models import _codegen
from cloudcoil_cache.models._base import Resource
from cloudcoil_cache.models._convert import converter
from cloudcoil_cache.models._frozen import keyed_digest

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


def reusing(cls: type[Resource]) -> Callable[..., Any]:
    """``structure(data, previous, fingerprint=True)``: the sealed ``cls`` object of wire dict
    ``data`` (exactly what ``cls.from_dict_sealed(data)`` builds) that shares with ``previous``,
    the version it replaces (or None), every top-level value but ``metadata`` whose JSON did not
    change. With ``fingerprint`` False and no ``previous``, the object gets no fingerprints (they
    cost ~5% of its structuring), so its next version is decoded in full.

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
        return lambda data, previous, fingerprint=True: cls.from_dict_sealed(data)
    hook = converter.get_structure_hook(sealed)
    fields = tuple(
        (attr, wire, 64 * i)
        for i, (attr, wire) in enumerate(
            (attr, wire) for attr, wire, shape in _codegen._fields(cls) if shape[0] in _COMPOSITE and attr != "metadata"
        )
    )
    if not fields:
        return lambda data, previous, fingerprint=True: hook(data, sealed)
    return _reusing_structure(hook, sealed, fields)


def _reusing_structure(
    hook: Callable[[Any, Any], Any], sealed: Any, fields: tuple[tuple[str, str, int], ...]
) -> Callable[..., Any]:
    """The ``structure`` of ``reusing``: ``fields`` are (attribute, wire name, bit shift of its fingerprint)."""
    key = _json.key
    digest_of = _fingerprint

    def structure(data: Any, previous: Any = None, fingerprint: bool = True) -> Any:
        if data.__class__ is not dict or (previous is None and not fingerprint):
            return hook(data, sealed)  # (raises the usual error for a non-dict)
        old = getattr(previous, "_cc_digest", None) if previous.__class__ is sealed else None
        digest = 0
        kept: list[tuple[str, str, Any]] | None = None
        for attr, wire, shift in fields:
            value = data.get(wire)
            if value is None:
                continue
            try:
                print_ = (digest_of(key(value)) & _MASK) or 1
            except TypeError:
                continue  # not plain JSON: decoded (and checked) as usual
            digest |= print_ << shift
            if old is not None and (old >> shift) & _MASK == print_:
                same = getattr(previous, attr)
                if same is not None:
                    if kept is None:
                        kept = []
                    kept.append((attr, wire, same))
        if kept is None:
            obj = hook(data, sealed)
        else:
            rest = dict(data)
            for _attr, wire, _same in kept:
                del rest[wire]
            obj = hook(rest, sealed)
            for attr, _wire, same in kept:
                _setattr(obj, attr, same)
        _setattr(obj, "_cc_digest", digest)
        return obj

    return structure
