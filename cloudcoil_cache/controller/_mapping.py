"""EventMapping: which keys an informer event queues (the object, its controller owner, what mappers return),
each of the three paths filtered by its predicates."""

from __future__ import annotations

import logging
from typing import Any, Callable, Mapping, Sequence

from cloudcoil_cache.controller._informers import Source
from cloudcoil_cache.controller._keys import ResourceKey, key_of
from cloudcoil_cache.controller._predicates import Predicate, event_passes

__all__ = ["EventMapping", "Mapper"]

Mapper = Callable[[Any], Any]


class EventMapping:
    """The keys an event for an object queues (kube-rs's ``trigger_self``, ``trigger_owners`` and
    ``trigger_with``): the object itself if it is a primary, the primary named by its controller
    ownerReference (owned kinds), and what the mappers of its kind return.

    It reads the controller's declarations (``owned``, ``watches``: the lists themselves, filled
    until the controller starts) and asks the controller through callables: ``in_scope(obj)`` (a
    primary?), ``normalize(key)`` (a key with the default namespace), ``outside_scope(key)`` (the
    namespace of a key it may not reconcile, else None), ``namespace()`` (the one it reconciles),
    ``sources()`` (its informers, empty before it starts).

    ``keys_for_event`` filters each path by its predicates (``primary_predicates``, ``owned_predicates``
    by kind, ``watch_predicates`` beside ``watches``): a path whose predicates refuse the event queues
    nothing; ``keys_for`` is the unfiltered mapping of one object.
    """

    def __init__(
        self,
        name: str,
        kind: Any,
        owned: Sequence[Any],
        watches: Sequence[tuple[Any, Mapper]],
        *,
        in_scope: Callable[[Any], bool],
        normalize: Callable[[Any], str],
        outside_scope: Callable[[str], str | None],
        namespace: Callable[[], str | None],
        sources: Callable[[], Mapping[Any, Source]],
        logger: logging.Logger,
        primary_predicates: tuple[Predicate, ...] = (),
        owned_predicates: Mapping[Any, tuple[Predicate, ...]] | None = None,
        watch_predicates: Sequence[tuple[Predicate, ...]] = (),
    ) -> None:
        self.name = name
        self.kind = kind
        self._owned = owned
        self._watches = watches
        self._in_scope = in_scope
        self._normalize = normalize
        self._outside_scope = outside_scope
        self._namespace = namespace
        self._sources = sources
        self.logger = logger
        self.primary_predicates = primary_predicates
        self._owned_predicates = owned_predicates if owned_predicates is not None else {}
        self._watch_predicates = watch_predicates

    def keys_for_event(self, event: str, objs: tuple[Any, ...]) -> list[str]:
        """The keys an informer event queues, each once: ``event`` is ``add``, ``update`` (``objs`` is
        ``(old, new)``: the keys of both, so an object leaving a primary's scope or owner still queues
        it) or ``delete``; each path (the primary itself, the owner, each watch) counts only when its
        predicates pass the event."""
        keys: dict[str, None] = {}
        where = f"controller {self.name}"
        obj = objs[-1]
        if isinstance(obj, self.kind) and event_passes(self.primary_predicates, event, objs, self.logger, where):
            for o in objs:
                if self._in_scope(o):
                    keys[key_of(o)] = None
        owned = next((kind for kind in self._owned if isinstance(obj, kind)), None)
        if owned is not None and event_passes(
            self._owned_predicates.get(owned, ()), event, objs, self.logger, f"{where} owns({owned.__name__})"
        ):
            for o in objs:
                keys.update(dict.fromkeys(self._owner_keys(o)))
        for i, (kind, mapper) in enumerate(self._watches):
            if not isinstance(obj, kind):
                continue
            predicates = self._watch_predicates[i] if i < len(self._watch_predicates) else ()
            if event_passes(predicates, event, objs, self.logger, f"{where} watch({kind.__name__})"):
                for o in objs:
                    keys.update(dict.fromkeys(self._mapped_keys(mapper, o)))
        return list(keys)

    def keys_for(self, obj: Any) -> list[str]:
        """The keys an event for ``obj`` queues, each once, in that order."""
        keys: dict[str, None] = {}  # (cached objects are instances of a sealed subclass: isinstance)
        if isinstance(obj, self.kind) and self._in_scope(obj):
            keys[key_of(obj)] = None
        if any(isinstance(obj, kind) for kind in self._owned):
            keys.update(dict.fromkeys(self._owner_keys(obj)))
        for kind, mapper in self._watches:
            if isinstance(obj, kind):
                keys.update(dict.fromkeys(self._mapped_keys(mapper, obj)))
        return list(keys)

    def _owner_keys(self, obj: Any) -> list[str]:
        primary = self._sources().get(self.kind)
        if primary is None:
            return []
        keys = []
        for ref in obj.metadata.owner_references or ():
            if not ref.controller or ref.kind != self.kind.kind:
                continue
            group = (ref.api_version or "").rpartition("/")[0]
            if group != (self.kind.group or ""):
                continue
            namespace = obj.metadata.namespace if self.kind.namespaced else None
            if self.kind.namespaced and not namespace:
                continue
            owner = primary.view.get(ref.name, namespace)
            if owner is not None and owner.metadata.uid == ref.uid and self._in_scope(owner):
                keys.append(key_of(owner))
        return keys

    def _mapped_keys(self, mapper: Mapper, obj: Any) -> list[str]:
        try:
            result = mapper(obj.copy())
            if result is None:
                return []
            if isinstance(result, (str, tuple, ResourceKey)) or hasattr(result, "metadata"):
                result = [result]
            keys = [self._normalize(k) for k in result if k is not None]
        except Exception:
            self.logger.exception(
                "controller %s: mapper %s failed for %s %s",
                self.name,
                getattr(mapper, "__qualname__", mapper),
                type(obj).__name__,
                _describe(obj),
            )
            return []
        outside = [k for k in keys if self._outside_scope(k) is not None]
        if outside:
            self.logger.warning(
                "controller %s: mapper %s returned keys outside namespace %r, dropped: %s",
                self.name,
                getattr(mapper, "__qualname__", mapper),
                self._namespace(),
                ", ".join(outside[:5]),
            )
            keys = [k for k in keys if k not in outside]
        return keys


def _describe(obj: Any) -> str:
    try:
        return key_of(obj)
    except Exception:
        return "?"
