"""EventMapping: which keys an informer event queues (the object, its controller owner, what mappers return)."""

from __future__ import annotations

import logging
from typing import Any, Callable, Mapping, Sequence

from cloudcoil_cache.controller._informers import Source
from cloudcoil_cache.controller._keys import ResourceKey, key_of

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
