"""The shard ring: XXH64 (seed 0) consistent hashing with virtual nodes, and the hash keys of objects."""

from __future__ import annotations

import bisect
import struct
from typing import Any, Iterable

__all__ = ["HashRing", "api_group", "controller_ref", "hash_key", "owner_hash_key", "xxh64"]

_MASK = 0xFFFFFFFFFFFFFFFF
_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_P4 = 0x85EBCA77C2B2AE63
_P5 = 0x27D4EB2F165667C5


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _MASK


def _round(acc: int, lane: int) -> int:
    acc = (acc + lane * _P2) & _MASK
    return (_rotl(acc, 31) * _P1) & _MASK


def _merge(acc: int, val: int) -> int:
    acc ^= _round(0, val)
    return (acc * _P1 + _P4) & _MASK


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64 of ``data`` (the reference algorithm, as ``cespare/xxhash``'s ``Sum64``; never ``hash()``,
    which is salted per process)."""
    n = len(data)
    i = 0
    if n >= 32:
        v1 = (seed + _P1 + _P2) & _MASK
        v2 = (seed + _P2) & _MASK
        v3 = seed & _MASK
        v4 = (seed - _P1) & _MASK
        limit = n - 32
        while i <= limit:
            a, b, c, d = struct.unpack_from("<4Q", data, i)
            v1, v2, v3, v4 = _round(v1, a), _round(v2, b), _round(v3, c), _round(v4, d)
            i += 32
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _MASK
        for v in (v1, v2, v3, v4):
            h = _merge(h, v)
    else:
        h = (seed + _P5) & _MASK
    h = (h + n) & _MASK
    while i + 8 <= n:
        (lane,) = struct.unpack_from("<Q", data, i)
        h ^= _round(0, lane)
        h = (_rotl(h, 27) * _P1 + _P4) & _MASK
        i += 8
    if i + 4 <= n:
        (word,) = struct.unpack_from("<I", data, i)
        h ^= (word * _P1) & _MASK
        h = (_rotl(h, 23) * _P2 + _P3) & _MASK
        i += 4
    while i < n:
        h ^= (data[i] * _P5) & _MASK
        h = (_rotl(h, 11) * _P1) & _MASK
        i += 1
    h ^= h >> 33
    h = (h * _P2) & _MASK
    h ^= h >> 29
    h = (h * _P3) & _MASK
    h ^= h >> 32
    return h


def _hash(text: str) -> int:
    return xxh64(text.encode("utf-8"))


def api_group(api_version: str | None) -> str:
    """The API group of ``apiVersion`` (``""`` for the core group's ``v1``)."""
    return (api_version or "").rpartition("/")[0]


def hash_key(group: str | None, kind: str, namespace: str | None, name: str) -> str:
    """The ring key of a main object: ``group/Kind/namespace/name`` (timebertt's ``key.ForObject``)."""
    return f"{group or ''}/{kind}/{namespace or ''}/{name}"


def controller_ref(meta: Any, kind: Any) -> Any | None:
    """``meta``'s controller ownerReference if it names an object of ``kind``, else None."""
    for ref in meta.owner_references or ():
        if ref.controller and ref.kind == kind.kind and api_group(ref.api_version) == (kind.group or ""):
            return ref
    return None


def owner_hash_key(obj: Any, kind: Any, namespace: str | None = None) -> str | None:
    """The ring key of ``obj`` as a child of ``kind``: its controller ownerReference's key (so it lands
    on its owner's shard; timebertt's ``key.ForController``), None without one of that kind, or when
    ``kind`` is namespaced and neither ``obj`` nor ``namespace`` (an admission request's) names one."""
    meta = obj.metadata
    ref = controller_ref(meta, kind)
    if ref is None:
        return None
    if not kind.namespaced:
        return hash_key(kind.group, kind.kind, None, ref.name)
    where = meta.namespace or namespace
    return hash_key(kind.group, kind.kind, where, ref.name) if where else None


class HashRing:
    """A consistent hash ring over ``members`` with ``tokens`` virtual nodes each: a member's tokens are
    ``xxh64(member + str(i))``, sorted; a key belongs to the member of the first token at or after
    ``xxh64(key)``, wrapping (timebertt's ``consistenthash.Ring``). A join or a leave moves about 1/N
    of the keys. Immutable: build a new ring when the members change."""

    def __init__(self, members: Iterable[str], tokens: int = 400) -> None:
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
            raise ValueError(f"HashRing(tokens=...) must be an int >= 1, got {tokens!r}")
        self.members: tuple[str, ...] = tuple(sorted(set(members)))
        self.tokens = tokens
        points = sorted((_hash(f"{m}{i}"), m) for m in self.members for i in range(tokens))
        self._hashes = [h for h, _ in points]
        self._owners = [m for _, m in points]

    def __repr__(self) -> str:
        return f"<HashRing members={list(self.members)} tokens={self.tokens}>"

    def __bool__(self) -> bool:
        return bool(self.members)

    def owner(self, key: str) -> str | None:
        """The member ``key`` belongs to (None on an empty ring)."""
        return self.owner_of_hash(_hash(key))

    def owner_of_hash(self, digest: int) -> str | None:
        """The member of the key whose ``xxh64`` is ``digest`` (None on an empty ring)."""
        if not self._hashes:
            return None
        i = bisect.bisect_left(self._hashes, digest)
        return self._owners[i if i < len(self._owners) else 0]
