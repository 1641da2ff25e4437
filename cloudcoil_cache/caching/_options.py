"""Cache options: validation at construction and per-kind effective settings (unset fields inherit)."""

from __future__ import annotations

import fnmatch
import re
from typing import Any, Callable, Iterable, Mapping

import attrs

from cloudcoil_cache._listwatch import check_path_segment, parse_field_selector, parse_label_selector
from cloudcoil_cache.caching._policy import Mode

__all__ = [
    "CacheOptions",
    "KindSettings",
    "NamespaceSelector",
    "NamespaceSet",
    "PER_RESOURCE_KEYS",
    "awaits_discovery",
    "check_mode",
    "check_index",
    "check_namespace_name",
    "check_resource_class",
    "kind_settings",
    "validate_options",
]

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")

PER_RESOURCE_KEYS = frozenset(
    {
        "label_selector",
        "field_selector",
        "resync_period",
        "max_items",
        "enabled",
        "max_staleness",
        "transform",
        "metadata_only",
        "namespaces",
    }
)


class NamespaceSelector:
    """``Cache(namespaces=NamespaceSelector("team=a"))``: a set of namespaces that follows the
    Namespaces whose labels match ``label_selector`` and whose names match ``names`` (globs, kopf's
    style: ``"team-*"``; a glob starting with ``!`` excludes: ``["*", "!kube-*"]``). The cache
    watches the Namespaces (metadata only, with the label selector) and adds or removes a namespace
    of its set as one appears, is relabelled or goes (``Cache.add_namespace``)."""

    __slots__ = ("excluded", "label_selector", "names", "parsed")

    def __init__(self, label_selector: str | None = None, *, names: Iterable[str] | None = None) -> None:
        where = f"NamespaceSelector({label_selector!r}, names={names!r})"
        if label_selector is not None and not isinstance(label_selector, str):
            raise ValueError(f"{where}: label_selector must be a label selector string such as 'team=a'")
        if isinstance(names, (str, bytes)):
            raise ValueError(f"{where}: names must be a list of globs such as ['team-*'], not one string")
        globs = tuple(names or ())
        if not all(isinstance(g, str) and g.strip("!") for g in globs):
            raise ValueError(f"{where}: names must be non-empty glob strings such as 'team-*' or '!kube-*'")
        self.label_selector: str = (label_selector or "").strip()
        self.parsed = parse_label_selector(self.label_selector)  # a bad selector: its ValueError
        if not self.label_selector and not globs:
            raise ValueError(f"{where}: give a label selector ('team=a') or names (['team-*']), or both")
        self.names: tuple[str, ...] = tuple(g for g in globs if not g.startswith("!"))
        self.excluded: tuple[str, ...] = tuple(g[1:] for g in globs if g.startswith("!"))

    def matches(self, name: str, labels: Mapping[str, str] | None) -> bool:
        """Does the Namespace ``name`` with ``labels`` belong to the set?"""
        if self.names and not any(fnmatch.fnmatchcase(name, g) for g in self.names):
            return False
        if any(fnmatch.fnmatchcase(name, g) for g in self.excluded):
            return False
        return self.parsed.matches(labels)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NamespaceSelector):
            return NotImplemented
        return (self.label_selector, self.names, self.excluded) == (
            other.label_selector,
            other.names,
            other.excluded,
        )

    def __hash__(self) -> int:
        return hash((self.label_selector, self.names, self.excluded))

    def __repr__(self) -> str:
        globs = [*self.names, *(f"!{g}" for g in self.excluded)]
        return f"NamespaceSelector({self.label_selector!r}" + (f", names={globs!r})" if globs else ")")


class NamespaceSet(tuple[str, ...]):
    """``Cache(namespaces=NamespaceSet(["a"]))``: a set of namespaces even with one namespace or
    none, changed only by ``add_namespace``/``remove_namespace`` (a controller's own caches follow
    its Config's cache's set so)."""

    __slots__ = ()


@attrs.frozen
class KindSettings:
    """The effective settings of one kind: its per_resource entry over the global values."""

    enabled: bool
    label_selector: str
    field_selector: str
    resync_period: float | None
    max_items: int
    max_staleness: float | None = 60.0
    transform: Callable[[Any], Any] | None = None
    #: the kind's informer stores ``PartialObjectMetadata.of(kind)`` (``Cache(metadata_only=[...])``)
    metadata_only: bool = False
    #: a set of namespaces (``namespaces=["a", "b"]``): one informer per namespace behind one reader;
    #: None: the one namespace of ``CacheOptions.namespace`` (or all of them)
    namespaces: tuple[str, ...] | None = None


@attrs.frozen
class CacheOptions:
    """Every ``Cache`` option, checked and normalised (see ``validate_options``)."""

    resources: list[Any] | None
    namespace: str | None
    label_selector: str
    field_selector: str
    resync_period: float | None
    wait_for_sync: bool
    sync_timeout: float
    max_items: int
    per_resource: Mapping[Any, Mapping[str, Any] | None]
    mode: Mode
    enabled: bool
    max_staleness: float | None
    read_your_writes_timeout: float
    transform: Callable[[Any], Any] | None
    #: ``handler(informer name, error)`` at each failed list or watch of any informer (None: logged only)
    watch_error_handler: Callable[[str, BaseException], Any] | None = None
    #: count the gets served at once (``CacheReader.hit``) too: ~0.1 µs more on each (see ``ReadCounts``)
    count_hits: bool = False
    #: ``{Kind: {index name: index function}}``, each added to the kind's informer when it is made
    indexes: Mapping[Any, Mapping[str, Callable[[Any], Any]]] = attrs.field(factory=dict)
    #: kinds cached as their metadata only (``Cache(metadata_only=[Secret])``)
    metadata_only: tuple[Any, ...] = ()
    #: ``Cache(namespaces=["a", "b"])``: the set of namespaces watched (one informer per kind and
    #: namespace); None when the cache watches one namespace (``namespace``) or all of them
    namespaces: tuple[str, ...] | None = None
    #: ``Cache(namespaces=NamespaceSelector(...))``: the set follows the Namespaces it selects
    namespace_selector: NamespaceSelector | None = None


def check_mode(mode: Any, where: str = "Cache") -> Mode:
    """``"strict"`` / ``"fallback"`` (or a ``Mode``) as a ``Mode``; anything else is a ValueError."""
    try:
        return Mode(mode)
    except ValueError:
        raise ValueError(f"{where}(mode={mode!r}): not a read mode; expected 'strict' or 'fallback'") from None


def _check_staleness(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or value == float("inf"):
        raise ValueError(
            f"{where}: expected seconds >= 0 (0: stop serving at the first error) or None "
            f"(serve forever), got {value!r}"
        )
    return float(value)


def _check_transform(value: Any, where: str) -> Callable[[Any], Any] | None:
    if value is not None and not callable(value):
        raise ValueError(f"{where}: expected a function obj -> obj or None, got {type(value).__name__}")
    return value  # type: ignore[no-any-return]


def _check_watch_error_handler(value: Any) -> Callable[[str, BaseException], Any] | None:
    if value is not None and not callable(value):
        raise ValueError(
            f"Cache(watch_error_handler=...): expected a function (informer name, error) or None, "
            f"got {type(value).__name__}"
        )
    return value  # type: ignore[no-any-return]


def _kind_name(cls: Any) -> str:
    return str(getattr(cls, "kind", None) or getattr(cls, "__name__", repr(cls)))


def awaits_discovery(cls: Any) -> bool:
    """A kind whose plural and scope come from the API server's discovery and are not known yet
    (``get_dynamic_resource`` classes, a class declared without a plural): kind and apiVersion, no plural."""
    return (
        getattr(cls, "plural", None) is None
        and bool(getattr(cls, "kind", None))
        and bool(getattr(cls, "api_version", None))
    )


def check_resource_class(cls: Any, where: str, *, discovered_at_start: bool = False) -> None:
    """``cls`` is a resource class; with ``discovered_at_start``, a kind still waiting for discovery
    is accepted too (``Cache(resources=...)`` binds it when the cache starts)."""
    if not isinstance(cls, type):
        raise ValueError(f"{where}: {cls!r} is not a resource class (expected a class such as Pod)")
    if discovered_at_start and awaits_discovery(cls):
        return
    for attr in ("api_version", "kind", "plural", "namespaced"):
        if getattr(cls, attr, None) is None:
            if attr in ("plural", "namespaced") and getattr(cls, "kind", None):
                raise ValueError(
                    f"{where}: {cls.__name__} ({getattr(cls, 'api_version', None)}) does not know its {attr} "
                    "yet: declare "
                    "plural and namespaced on the class, or use it once through a Config (a read or "
                    "write learns them from the API server's discovery), or list it in "
                    "Cache(resources=[...]) (learnt when the cache starts), or cache it with Cache() "
                    "(resources=None), whose informers are made on first use"
                )
            raise ValueError(f"{where}: {cls!r} is not a resource class (it has no {attr!r})")


def _check_selector(value: Any, where: str, label: bool) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{where}: expected a selector string, got {type(value).__name__}")
    try:
        (parse_label_selector if label else parse_field_selector)(value)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    return value


def _check_period(value: Any, where: str) -> float | None:
    if value is None or value == 0:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"{where}: expected seconds >= 0 or None, got {value!r}")
    return float(value)


def _check_count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{where}: expected an integer >= 0, got {value!r}")
    return value


def _check_resources(resources: Iterable[Any] | None) -> list[Any] | None:
    if resources is None:
        return None
    if isinstance(resources, (str, bytes)) or not isinstance(resources, Iterable):
        raise ValueError("Cache(resources=...): expected a list of resource classes or None")
    classes = list(resources)
    for cls in classes:
        check_resource_class(cls, "Cache(resources=...)", discovered_at_start=True)
    return classes


def check_namespace_name(namespace: Any, where: str) -> str:
    """One namespace name (a DNS-1123 label), else a ``ValueError`` naming ``where``."""
    if not isinstance(namespace, str) or not namespace:
        raise ValueError(f"{where}: a namespace must be a non-empty string, got {namespace!r}")
    try:
        check_path_segment(namespace, "namespace")
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    if not _DNS1123_LABEL.fullmatch(namespace):
        raise ValueError(
            f"{where}: {namespace!r} is not a valid namespace "
            "name (a DNS-1123 label: at most 63 lowercase letters, digits and '-', "
            "starting and ending with a letter or digit)"
        )
    return namespace


def _check_namespaces(namespaces: Any, where: str) -> tuple[str | None, tuple[str, ...] | None]:
    """``(one namespace, None)`` for a string or a one-item list, ``(None, set)`` for a list of two
    or more (one informer per namespace), ``(None, None)`` for None (all namespaces)."""
    if namespaces is None:
        return None, None
    if isinstance(namespaces, NamespaceSelector):
        return None, ()  # empty until its Namespaces are listed
    if isinstance(namespaces, NamespaceSet):  # a set even when it holds one namespace or none
        for namespace in namespaces:
            check_namespace_name(namespace, f"{where}={namespaces!r})")
        return None, tuple(dict.fromkeys(namespaces))
    if isinstance(namespaces, str):
        return check_namespace_name(namespaces, f"{where}={namespaces!r})"), None
    if isinstance(namespaces, bytes) or not isinstance(namespaces, Iterable):
        raise ValueError(
            f"{where}={namespaces!r}): expected a namespace, a list of namespaces, a NamespaceSelector, or None (all)"
        )
    listed = list(namespaces)
    if not listed:  # as cloudcoil: an empty list is not "all namespaces" by accident
        raise ValueError(
            f"{where}=[]): name the namespace to watch (namespaces=['default']), "
            "or pass namespaces=None to watch all of them"
        )
    for namespace in listed:
        check_namespace_name(namespace, f"{where}={listed!r})")
    unique = tuple(dict.fromkeys(listed))
    if len(unique) == 1:
        return unique[0], None
    return None, unique


def _namespaces_where(where: str) -> str:
    return where.replace(" namespaces", "") + " namespaces"


def _check_kind_namespaces(namespaces: Any, where: str) -> tuple[str | None, tuple[str, ...] | None]:
    """``per_resource[Kind]["namespaces"]``: as ``Cache(namespaces=...)``, but no ``NamespaceSelector``
    (a selector is the cache's: its kinds over a set follow it)."""
    if isinstance(namespaces, NamespaceSelector):
        raise ValueError(
            f"{where}={namespaces!r}): a NamespaceSelector is the cache's own (Cache(namespaces=...)); "
            "a kind names its namespaces (a list)"
        )
    return _check_namespaces(namespaces, where)


def _check_flags_and_timeouts(
    *, enabled: Any, wait_for_sync: Any, read_your_writes_timeout: Any, sync_timeout: Any, count_hits: Any = False
) -> None:
    for name, flag in (("enabled", enabled), ("wait_for_sync", wait_for_sync), ("count_hits", count_hits)):
        if not isinstance(flag, bool):
            raise ValueError(f"Cache({name}={flag!r}): expected True or False")
    if (
        isinstance(read_your_writes_timeout, bool)
        or not isinstance(read_your_writes_timeout, (int, float))
        or read_your_writes_timeout < 0
    ):
        raise ValueError(
            f"Cache(read_your_writes_timeout={read_your_writes_timeout!r}): expected seconds >= 0 (0 disables)"
        )
    if isinstance(sync_timeout, bool) or not isinstance(sync_timeout, (int, float)) or sync_timeout <= 0:
        raise ValueError(f"Cache(sync_timeout={sync_timeout!r}): expected seconds > 0")


def _check_metadata_flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{where}: expected True (cache only the metadata of the kind) or False, got {value!r}")
    return value


def _check_metadata_only(kinds: Any) -> tuple[Any, ...]:
    """``Cache(metadata_only=[...])``: resource classes (not their metadata classes, not strings)."""
    if kinds is None:
        return ()
    if isinstance(kinds, (str, bytes, type)) or not isinstance(kinds, Iterable):
        raise ValueError("Cache(metadata_only=...): expected a list of resource classes (metadata_only=[Secret])")
    checked: list[Any] = []
    for cls in kinds:
        check_resource_class(cls, "Cache(metadata_only=...)", discovered_at_start=True)
        if getattr(cls, "metadata_of", None) is not None:
            raise ValueError(
                f"Cache(metadata_only=[{cls.__name__}]): name the kind itself "
                f"(metadata_only=[{cls.metadata_of.__name__}]), not its metadata class"
            )
        if cls not in checked:
            checked.append(cls)
    return tuple(checked)


# One checker per per_resource setting, in the order they are checked: (value, where) -> normalised value.
_PER_RESOURCE_CHECKS: tuple[tuple[str, Callable[[Any, str], Any]], ...] = (
    ("label_selector", lambda value, where: _check_selector(value, where, True)),
    ("field_selector", lambda value, where: _check_selector(value, where, False)),
    ("resync_period", _check_period),
    ("max_items", _check_count),
    ("enabled", lambda value, where: bool(value)),
    ("max_staleness", _check_staleness),
    ("transform", _check_transform),
    ("metadata_only", _check_metadata_flag),
    ("namespaces", lambda value, where: _check_kind_namespaces(value, _namespaces_where(where))),
)


def _check_entry(entry: Any, where: str) -> dict[str, Any]:
    """One per_resource entry (a dict of settings), each setting checked by its row of the table."""
    if not isinstance(entry, Mapping):
        raise ValueError(f"{where}: expected a dict of settings or None, got {type(entry).__name__}")
    unknown = set(entry) - PER_RESOURCE_KEYS
    if unknown:
        raise ValueError(f"{where}: unknown setting(s) {sorted(unknown)}; known: {sorted(PER_RESOURCE_KEYS)}")
    return {key: check(entry[key], f"{where} {key}") for key, check in _PER_RESOURCE_CHECKS if key in entry}


def check_index(cls: Any, name: Any, func: Any, where: str) -> None:
    """One index declaration: a resource class, a non-empty string name and a callable."""
    check_resource_class(cls, where, discovered_at_start=True)
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}: an index name must be a non-empty string, got {name!r}")
    if not callable(func):
        raise ValueError(f"{where}: index {name!r} needs a callable (object -> key, keys or None), got {func!r}")


def _check_indexes(indexes: Any) -> dict[Any, dict[str, Callable[[Any], Any]]]:
    """``Cache(indexes={Kind: {name: func}})``, each declaration checked."""
    if indexes is None:
        return {}
    if not isinstance(indexes, Mapping):
        raise ValueError(f"Cache(indexes=...): expected {{Kind: {{name: function}}}}, got {type(indexes).__name__}")
    checked: dict[Any, dict[str, Callable[[Any], Any]]] = {}
    for cls, named in indexes.items():
        where = f"Cache(indexes={{{_kind_name(cls)}: ...}})"
        if not isinstance(named, Mapping):
            raise ValueError(f"{where}: expected a dict of index name -> function, got {type(named).__name__}")
        for name, func in named.items():
            check_index(cls, name, func, where)
        checked[cls] = dict(named)
    return checked


def _check_per_resource(per_resource: Mapping[Any, Any] | None) -> dict[Any, dict[str, Any] | None]:
    per: dict[Any, dict[str, Any] | None] = {}
    for cls, entry in (per_resource or {}).items():
        check_resource_class(cls, "Cache(per_resource=...)", discovered_at_start=True)
        where = f"Cache(per_resource={{{_kind_name(cls)}: ...}})"
        per[cls] = None if entry is None else _check_entry(entry, where)
    return per


def validate_options(
    *,
    resources: Iterable[Any] | None,
    namespaces: Any,
    label_selector: Any,
    field_selector: Any,
    resync_period: Any,
    wait_for_sync: Any,
    sync_timeout: Any,
    max_items_per_resource: Any,
    per_resource: Mapping[Any, Any] | None,
    mode: Any,
    enabled: Any,
    max_staleness: Any = 60,
    read_your_writes_timeout: Any = 2.0,
    transform: Any = None,
    watch_error_handler: Any = None,
    count_hits: Any = False,
    indexes: Any = None,
    metadata_only: Any = None,
) -> CacheOptions:
    """Check every Cache option; raise ``ValueError`` naming the problem. Returns normalised values."""
    checked_resources = _check_resources(resources)
    namespace, namespace_set = _check_namespaces(namespaces, "Cache(namespaces")
    checked_mode = check_mode(mode)
    _check_flags_and_timeouts(
        enabled=enabled,
        wait_for_sync=wait_for_sync,
        read_your_writes_timeout=read_your_writes_timeout,
        sync_timeout=sync_timeout,
        count_hits=count_hits,
    )
    per = _check_per_resource(per_resource)
    return CacheOptions(
        resources=checked_resources,
        namespace=namespace,
        label_selector=_check_selector(label_selector, "Cache(label_selector=...)", True),
        field_selector=_check_selector(field_selector, "Cache(field_selector=...)", False),
        resync_period=_check_period(resync_period, "Cache(resync_period=...)"),
        wait_for_sync=bool(wait_for_sync),
        sync_timeout=float(sync_timeout),
        max_items=_check_count(max_items_per_resource, "Cache(max_items_per_resource=...)"),
        per_resource=per,
        mode=checked_mode,
        enabled=bool(enabled),
        max_staleness=_check_staleness(max_staleness, "Cache(max_staleness=...)"),
        read_your_writes_timeout=float(read_your_writes_timeout),
        transform=_check_transform(transform, "Cache(transform=...)"),
        watch_error_handler=_check_watch_error_handler(watch_error_handler),
        count_hits=count_hits,
        indexes=_check_indexes(indexes),
        metadata_only=_check_metadata_only(metadata_only),
        namespaces=namespace_set,
        namespace_selector=namespaces if isinstance(namespaces, NamespaceSelector) else None,
    )


def kind_settings(options: CacheOptions, cls: Any) -> KindSettings:
    """Effective settings for ``cls``: per_resource fields override, unset ones inherit (fix)."""
    per = options.per_resource
    if cls in per and per[cls] is None:
        return KindSettings(False, "", "", None, 0)
    entry = per.get(cls) or {}
    return KindSettings(
        enabled=entry.get("enabled", True),
        label_selector=entry.get("label_selector", options.label_selector),
        field_selector=entry.get("field_selector", options.field_selector),
        resync_period=entry.get("resync_period", options.resync_period),
        max_items=entry.get("max_items", options.max_items),
        max_staleness=entry.get("max_staleness", options.max_staleness),
        transform=entry.get("transform", options.transform),
        metadata_only=entry.get("metadata_only", cls in options.metadata_only),
        namespaces=_kind_namespaces(options, entry),
    )


def _kind_namespaces(options: CacheOptions, entry: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The kind's set of namespaces: its own (``per_resource[Kind]["namespaces"]``), else the cache's."""
    if "namespaces" not in entry:
        return options.namespaces
    one, several = entry["namespaces"]
    return several if several is not None else ((one,) if one is not None else None)
