"""Read-only list and dict types for sealed objects; deep freeze/thaw of free-form JSON values; sharing.

Every mutating method raises ``ReadOnlyError``. Deliberate bypasses through the base type
(``dict.__setitem__(d, k, v)``, ``list.__init__(l, ...)``, calling ``__init__`` again) are not
guarded: guarding ``__init__`` would cost a Python-level call per container on the hot path.

Sharing: read-only values cannot change, so two sealed objects decoded from identical JSON can be
one object. ``sharing()`` wraps a builder (a sealed structure function) with a table keyed by the
JSON bytes of its input: pods of one ReplicaSet then hold one ``Container`` object between them,
one ``fieldsV1`` tree per manager, and the builder runs once per distinct value — less memory and
less CPU. The table is adaptive and bounded by what is alive:

- it samples its first ``SHARE_SAMPLE`` inputs and switches itself off (for good) when fewer than
  ``SHARE_KEEP_RATE`` of them were repeats (already after ``SHARE_FIRST_LOOK`` inputs without one):
  values unique per object (a pod's metadata or status) soon stop paying for the key. A quarter,
  not a half: a repeat saves a whole built value, a miss costs its JSON key, several times
  smaller. kube-apiserver's freshly created pods have two managedFields entries, one equal across
  a ReplicaSet and one naming the pod's IP: 47% repeats, which a half switched off (15.5 KB of heap
  per pod instead of 7.3);
- entries nobody else references any more are dropped when the table has doubled since the last
  sweep, first at ``_SWEEP_AT`` entries (amortised O(1); it never holds more than about twice what
  the cache uses, so the objects of a few dozen deleted objects do not linger while it samples).

Equal JSON bytes are equal JSON values of equal types (``1`` and ``1.0`` serialise differently),
so a shared object is exactly what the builder would have built. A value that cannot be serialised
is built unshared. In a table that reached ``DIGEST_FROM`` entries, keys longer than
``DIGEST_ABOVE`` bytes are kept as a keyed 128-bit BLAKE2b digest (its key a secret of the
process): such an entry then costs 49 bytes, not the value's JSON.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from typing import Any, Callable, NoReturn, SupportsIndex

from cloudcoil_cache import _fork, _json
from cloudcoil_cache.errors import ReadOnlyError

__all__ = [
    "FrozenDict",
    "FrozenList",
    "SharingStats",
    "freeze_json",
    "interning",
    "keyed_digest",
    "rebind",
    "sharing",
    "sharing_stats",
    "thaw_json",
]

_HINT = "call .copy() (or .evolve(...)) on the object that holds it for an editable copy"


def _refuse(kind: str, method: str) -> NoReturn:
    raise ReadOnlyError(f"this {kind} belongs to a shared read-only object and cannot be changed ({method}); {_HINT}")


class FrozenList(list[Any]):
    """A ``list`` whose mutating methods raise ``ReadOnlyError``; otherwise just a list."""

    __slots__ = ()

    def _ro(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse("list", "list mutation")

    def append(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("list", "append")

    def extend(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("list", "extend")

    def insert(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("list", "insert")

    def pop(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("list", "pop")

    def remove(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("list", "remove")

    def clear(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("list", "clear")

    def sort(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("list", "sort")

    def reverse(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("list", "reverse")

    def __setitem__(self, *a: Any) -> NoReturn:
        _refuse("list", "item assignment")

    def __delitem__(self, *a: Any) -> NoReturn:
        _refuse("list", "item deletion")

    def __iadd__(self, *a: Any) -> NoReturn:  # type: ignore[misc]  # mypy: as __add__ or not at all
        _refuse("list", "+=")

    def __imul__(self, value: SupportsIndex, /) -> NoReturn:
        _refuse("list", "*=")

    def copy(self) -> list[Any]:
        """A plain, editable shallow copy."""
        return list(self)

    def __reduce__(self) -> Any:
        return (FrozenList, (list(self),))


class FrozenDict(dict[Any, Any]):
    """A ``dict`` whose mutating methods raise ``ReadOnlyError``; otherwise just a dict."""

    __slots__ = ()

    def __setitem__(self, *a: Any) -> NoReturn:
        _refuse("dict", "item assignment")

    def __delitem__(self, *a: Any) -> NoReturn:
        _refuse("dict", "item deletion")

    def pop(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("dict", "pop")

    def popitem(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("dict", "popitem")

    def clear(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("dict", "clear")

    def update(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("dict", "update")

    def setdefault(self, *a: Any, **k: Any) -> NoReturn:
        _refuse("dict", "setdefault")

    def __ior__(self, *a: Any) -> NoReturn:  # type: ignore[misc]  # mypy: as __or__ or not at all
        _refuse("dict", "|=")

    def copy(self) -> dict[Any, Any]:
        """A plain, editable shallow copy."""
        return dict(self)

    @classmethod
    def fromkeys(cls, keys: Any, value: Any = None) -> FrozenDict:
        return cls(dict.fromkeys(keys, value))

    def __reduce__(self) -> Any:
        return (FrozenDict, (dict(self),))


EMPTY_DICT = FrozenDict()
EMPTY_LIST = FrozenList()
_set = dict.__setitem__


def freeze_json(value: Any) -> Any:
    """Deeply read-only version of a JSON value (dicts/lists become Frozen*; scalars are kept).

    Identical non-empty values are shared (see ``sharing``): managedFields' ``fieldsV1`` trees repeat
    across every object one manager wrote.
    """
    cls = value.__class__
    if (cls is dict or cls is list) and value:
        return _freeze_shared(value)
    return _freeze_json(value)


def _freeze_json(value: Any) -> Any:
    cls = value.__class__
    if cls is dict:
        return _freeze_dict(value) if value else EMPTY_DICT
    if cls is list:
        if not value:
            return EMPTY_LIST
        return FrozenList([x if x.__class__ in _SCALARS else _freeze_json(x) for x in value])
    if cls is FrozenDict or cls is FrozenList:
        return value  # already deeply frozen: Frozen* values are only ever built by this function
    if isinstance(value, dict):
        return _freeze_json(dict(value))
    if isinstance(value, list):
        return _freeze_json(list(value))
    return value


def _freeze_dict(value: dict[str, Any]) -> FrozenDict:
    # The hot case is managedFields' fieldsV1: ~100 small dicts per pod, half of them empty.
    out = {}
    for key, item in value.items():
        cls = item.__class__
        if cls is dict:
            out[key] = _freeze_dict(item) if item else EMPTY_DICT
        elif cls in _SCALARS:
            out[key] = item
        else:
            out[key] = _freeze_json(item)
    return FrozenDict(out)


def thaw_json(value: Any) -> Any:
    """Deep, plain, editable copy of a JSON value (also of a frozen one)."""
    cls = value.__class__
    if cls in _SCALARS:
        return value
    if cls is dict or cls is FrozenDict:
        return _thaw_dict(value)
    if cls is list or cls is FrozenList:
        return [x if x.__class__ in _SCALARS else thaw_json(x) for x in value]
    if isinstance(value, dict):
        return _thaw_dict(value)
    if isinstance(value, list):
        return [thaw_json(x) for x in value]
    return value


def _thaw_dict(value: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, item in value.items():
        cls = item.__class__
        if cls is dict or cls is FrozenDict:
            out[key] = _thaw_dict(item) if item else {}
        elif cls in _SCALARS:
            out[key] = item
        else:
            out[key] = thaw_json(item)
    return out


_SCALARS = frozenset({str, int, float, bool, type(None)})


# ------------------------------------------------------------------------------------------ sharing
SHARE_SAMPLE = 4096
SHARE_FIRST_LOOK = 256  # not one repeat in the first 256 values: unique per object, stop at once
SHARE_MIN_HITS = 0.5  # interning: the share of repeats an attribute needs to stay interned
SHARE_KEEP_RATE = 0.25  # sharing: the share of repeats a table needs to stay on (module docstring)
_SWEEP_AT = 32

_key = _json.key
_exact = bytes
# In a table with DIGEST_FROM entries or more, a key longer than DIGEST_ABOVE bytes is kept as a
# 16-byte keyed BLAKE2b digest of itself. A table holds one key per distinct value, and the JSON of
# a big value (a pod spec: ~3.7 KB) costs more memory than sharing it saves; tables with few
# distinct values (managedFields trees, volumes) keep their keys and spend no time on digests. The
# digest's key is a secret of the process, so no one can craft two values with one digest (which
# would let one object's value stand in for another's, across namespaces).
DIGEST_ABOVE = 256
DIGEST_FROM = 1024
_DIGEST_SIZE = 16
_SECRET = os.urandom(16)
_GIL_KEPT_BELOW = 2048  # CPython's HASHLIB_GIL_MINSIZE


def keyed_digest(data: bytes, size: int) -> bytes:
    """A BLAKE2b digest of ``data`` keyed by a secret of the process, fed in pieces under 2 KB.

    hashlib lets other threads run while it hashes 2 KB or more: a thread that does that thousands
    of times a second keeps winning the GIL back before a woken thread runs, and starved another
    thread for 50-70 ms during a relist. Hashing in small pieces keeps the GIL, like the rest of
    the decoding does.
    """
    h = hashlib.blake2b(digest_size=size, key=_SECRET)
    if len(data) < _GIL_KEPT_BELOW:
        h.update(data)
    else:
        view = memoryview(data)
        for start in range(0, len(data), _GIL_KEPT_BELOW - 1):
            h.update(view[start : start + _GIL_KEPT_BELOW - 1])
    return h.digest()


def _digest(key: bytes) -> bytes:
    return keyed_digest(key, _DIGEST_SIZE)


_refcount = sys.getrefcount
_sharers: list[SharingStats] = []
_sharers_lock = threading.Lock()
_fork.renew_locks(globals(), _sharers_lock=threading.Lock)


class SharingStats:
    """What one sharing table did: inputs seen while sampling and after, repeats found, entries."""

    __slots__ = ("name", "attempts", "hits", "enabled", "sampling", "digests", "table", "next_sweep", "lock")

    def __init__(self, name: str) -> None:
        self.name = name
        self.attempts = 0
        self.hits = 0
        self.enabled = True
        self.sampling = True  # until the sample is judged (at the first miss from SHARE_SAMPLE inputs on)
        self.digests = False  # big keys kept as digests (see DIGEST_ABOVE), from DIGEST_FROM entries
        self.table: dict[bytes, Any] = {}
        self.next_sweep = _SWEEP_AT
        self.lock = threading.Lock()

    @property
    def entries(self) -> int:
        return len(self.table)

    def __repr__(self) -> str:
        state = "on" if self.enabled else "off"
        return f"<sharing {self.name}: {state}, {self.hits}/{self.attempts} shared, {self.entries} entries>"

    def judged_off(self, attempts: int) -> bool:
        """The sample judged at a miss (a hit never reaches it), from ``SHARE_FIRST_LOOK`` inputs on:
        whether the table switches off for good (mostly unique values: stop paying for keys)."""
        if not self.hits or (attempts >= SHARE_SAMPLE and self.hits < SHARE_KEEP_RATE * attempts):
            self.enabled = self.sampling = False
            return True
        if attempts >= SHARE_SAMPLE:
            self.sampling = False  # judged: on for good
        return False

    def sweep(self) -> None:
        """Drop the entries only the table still references (another thread may race us: harmless,
        an entry fetched meanwhile just stops being shared)."""
        with self.lock:
            table = self.table
            if len(table) < self.next_sweep:
                return
            value = None
            for key in list(table):
                value = table.get(key)
                # references: the table, ``value`` here and getrefcount's argument
                if value is not None and _refcount(value) <= 3:
                    table.pop(key, None)
            del value
            self.next_sweep = max(_SWEEP_AT, 2 * len(table))
            if not self.digests and len(table) >= DIGEST_FROM:
                # many distinct values: their keys now cost memory; the few tables that get here
                # pay a digest per lookup from now on (lookups racing this just miss, harmlessly)
                items = [(_digest(k) if len(k) > DIGEST_ABOVE else k, v) for k, v in table.items()]
                table.clear()
                table.update(items)
                self.digests = True


def sharing(build: Callable[[Any], Any], name: str) -> Callable[..., Any]:
    """``build`` (a function of one JSON value, returning a read-only value) with identical inputs
    answered by one shared result; adaptive and bounded as the module docstring says."""
    stats = SharingStats(name)
    with _sharers_lock:
        _sharers.append(stats)
    table = stats.table
    get = table.get
    slot = {"build": build}  # ``build`` may step aside later (``interning``): always the current one
    rebind(slot, "build", build)

    def shared(data: Any, _t: Any = None) -> Any:
        if not stats.enabled or data.__class__ is not dict:
            return slot["build"](data)
        try:
            key = _key(data)
        except TypeError:
            return slot["build"](data)
        if not stats.digests:  # the usual hit, without the call below
            found = get(key)
            if found is not None:
                stats.attempts += 1  # racy counts only blur the sample a little
                stats.hits += 1
                return found
        return with_key(data, key)

    def with_key(data: Any, key: bytes) -> Any:
        """``shared(data)`` when the caller has already computed ``key(data)`` (``models._reuse``
        fingerprints a pod's spec with the same bytes)."""
        if not stats.enabled:
            return slot["build"](data)
        digested = stats.digests and len(key) > DIGEST_ABOVE
        if digested:
            key = _digest(key)
        attempts = stats.attempts = stats.attempts + 1  # racy counts only blur the sample a little
        found = get(key)
        if found is not None:
            stats.hits += 1
            return found
        if stats.sampling and attempts >= SHARE_FIRST_LOOK and stats.judged_off(attempts):
            table.clear()
            callers.inner = slot["build"]
            callers.bypass()  # and the generated code that calls us calls ``build`` itself
            return slot["build"](data)
        value = slot["build"](data)
        # a copy: orjson's result keeps its whole 4 KB output buffer allocated (a digest is exact)
        table[key if digested else _exact(memoryview(key))] = value
        if len(table) >= stats.next_sweep:
            stats.sweep()
        return value

    callers = _Callers(build, lambda: not stats.enabled)
    setattr(shared, "__wrapped__", build)  # as functools.wraps marks a wrapper
    setattr(shared, "with_key", with_key)
    setattr(shared, "bind", callers.bind)
    return shared


class _Callers:
    """Where generated code calls a wrapper through a global name (``_codegen``'s nested model
    functions): once the wrapper has nothing left to do (a sharing table switched off, an
    interning wrapper that keeps no attribute), each such name is rebound to the function it wraps,
    so the generated code calls it directly (a Python call less per object). A call that still goes
    through the wrapper meanwhile is answered as before: rebinding only removes a detour."""

    __slots__ = ("inner", "done", "names", "lock")

    def __init__(self, inner: Callable[..., Any], done: Callable[[], bool]) -> None:
        self.inner = inner
        self.done = done
        self.names: list[tuple[dict[str, Any], str]] | None = []
        self.lock = threading.Lock()

    def bind(self, namespace: dict[str, Any], name: str) -> None:
        """``namespace[name]`` calls the wrapper: rebind it to the inner function when the wrapper is done."""
        with self.lock:
            if self.names is not None and not self.done():
                self.names.append((namespace, name))
                return
        rebind(namespace, name, self.inner)

    def bypass(self) -> None:
        with self.lock:
            names, self.names = self.names, None
        for namespace, name in names or ():
            rebind(namespace, name, self.inner)


def rebind(namespace: dict[str, Any], name: str, fn: Callable[..., Any]) -> None:
    """``namespace[name] = fn``, and ``fn`` told (when it is a wrapper that may step aside later)."""
    namespace[name] = fn
    bind = getattr(fn, "bind", None)
    if bind is not None:
        bind(namespace, name)


def sharing_stats() -> list[SharingStats]:
    """Every sharing table of the process (for benchmarks and tests)."""
    with _sharers_lock:
        return list(_sharers)


_freeze_shared_dict = sharing(lambda value: _freeze_json(value), "freeze_json")


def _freeze_shared(value: Any) -> Any:
    if value.__class__ is dict:
        return _freeze_shared_dict(value)
    return _freeze_json(value)


# ---------------------------------------------------------------------------------------- interning
INTERN_SAMPLE = 1024
_intern = sys.intern
_setattr = object.__setattr__


def interning(build: Callable[..., Any], attributes: list[str]) -> Callable[..., Any]:
    """``build`` whose results get their string ``attributes`` replaced by the interned equal string.

    Per attribute and adaptive: the first ``INTERN_SAMPLE`` objects built decide; an attribute whose
    values were mostly new (names, uids, resourceVersions, IPs) or never strings stops being
    interned, one whose values repeat (condition types and statuses, phases, images, managers,
    namespaces) keeps it, and from then on the kept ones are interned without counting. Interned strings
    are freed with their last user (CPython's interning is not immortal for these). Setting a slot
    with ``object.__setattr__`` on a just-built sealed object changes no visible value.

    When the sample keeps no attribute, the generated code that calls this wrapper calls ``build``
    in its place. (Generating a builder that interns the kept attributes inline was measured too:
    no CPU gained beyond the noise, and 0.1-0.5 KB more RSS per cached pod.)
    """
    if not attributes:
        return build
    # while sampling: [name, str values seen, of which repeats]; then only the names kept
    entries: list[list[Any]] = [[name, 0, 0] for name in attributes]
    state: dict[str, Any] = {"built": 0, "kept": None}

    def built(data: Any, _t: Any = None) -> Any:
        obj = build(data)
        kept = state["kept"]
        if kept is not None:
            for name in kept:
                value = getattr(obj, name)
                if value.__class__ is str:
                    _setattr(obj, name, _intern(value))
            return obj
        for entry in entries:
            name = entry[0]
            value = getattr(obj, name)
            if value.__class__ is str:
                same = _intern(value)
                if same is not value:
                    _setattr(obj, name, same)
                    entry[2] += 1
                entry[1] += 1
        count = state["built"] = state["built"] + 1  # racy counts only blur the sample a little
        if count == INTERN_SAMPLE:
            kept = state["kept"] = tuple(e[0] for e in entries if e[1] and e[2] >= SHARE_MIN_HITS * e[1])
            if not kept:
                callers.bypass()
        return obj

    callers = _Callers(build, lambda: state["kept"] == ())
    setattr(built, "__wrapped__", build)  # as functools.wraps marks a wrapper
    setattr(built, "bind", callers.bind)
    return built
