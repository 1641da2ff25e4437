"""Predicates: which informer events of a kind queue keys (controller-runtime's ``predicate`` package)."""

from __future__ import annotations

import logging
from typing import Any, Callable, Iterable

__all__ = [
    "AllOf",
    "AnnotationsChanged",
    "AnyOf",
    "Funcs",
    "GenerationChanged",
    "LabelsChanged",
    "Predicate",
    "ResourceVersionChanged",
    "all_of",
    "any_of",
    "as_predicates",
    "default_predicates",
    "event_passes",
]


class Predicate:
    """Decides whether an event queues keys: ``create(obj)``, ``update(old, new)`` and ``delete(obj)``
    return True to queue. Every method returns True here; the ready-made predicates filter updates
    only. The objects are the cached ones: read them, never change them. ``a | b`` passes when
    either does, ``a & b`` when both do."""

    def create(self, obj: Any) -> bool:
        """Does the creation (or initial listing) of ``obj`` queue keys?"""
        return True

    def update(self, old: Any, new: Any) -> bool:
        """Does the change from ``old`` to ``new`` queue keys?"""
        return True

    def delete(self, obj: Any) -> bool:
        """Does the deletion of ``obj`` queue keys?"""
        return True

    def __or__(self, other: Predicate) -> Predicate:
        return AnyOf(self, other)

    def __and__(self, other: Predicate) -> Predicate:
        return AllOf(self, other)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _meta(obj: Any) -> Any:
    return getattr(obj, "metadata", None)


def _field(obj: Any, name: str) -> Any:
    meta = _meta(obj)
    return getattr(meta, name, None) if meta is not None else None


class GenerationChanged(Predicate):
    """An update passes when ``metadata.generation`` changed (a spec change: status writes do not bump
    it). For kinds without a generation (None on either side: ConfigMaps, Secrets, ...) every update
    passes. kube-rs's ``predicates::generation``, controller-runtime's ``GenerationChangedPredicate``."""

    def update(self, old: Any, new: Any) -> bool:
        before, after = _field(old, "generation"), _field(new, "generation")
        if before is None or after is None:
            return True
        return bool(before != after)


class LabelsChanged(Predicate):
    """An update passes when ``metadata.labels`` changed (controller-runtime's ``LabelChangedPredicate``)."""

    def update(self, old: Any, new: Any) -> bool:
        return (_field(old, "labels") or {}) != (_field(new, "labels") or {})


class AnnotationsChanged(Predicate):
    """An update passes when ``metadata.annotations`` changed (``AnnotationChangedPredicate``)."""

    def update(self, old: Any, new: Any) -> bool:
        return (_field(old, "annotations") or {}) != (_field(new, "annotations") or {})


class ResourceVersionChanged(Predicate):
    """An update passes when ``metadata.resourceVersion`` changed (``ResourceVersionChangedPredicate``).
    Every write changes it; a controller queues resync re-deliveries whatever its predicates say, so
    here it passes every real change: it is the explicit "no filter" in a combination."""

    def update(self, old: Any, new: Any) -> bool:
        return bool(_field(old, "resource_version") != _field(new, "resource_version"))


class Funcs(Predicate):
    """A predicate of your functions (controller-runtime's ``predicate.Funcs``): ``update(old, new)``,
    ``create(obj)``, ``delete(obj)``, each returning True to queue; one not given passes. The
    functions get deep copies. A plain function ``(old, new) -> bool`` in a ``predicates=`` list is
    ``Funcs(update=function)``."""

    def __init__(
        self,
        update: Callable[[Any, Any], Any] | None = None,
        *,
        create: Callable[[Any], Any] | None = None,
        delete: Callable[[Any], Any] | None = None,
    ) -> None:
        for what, func in (("update", update), ("create", create), ("delete", delete)):
            if func is not None and not callable(func):
                raise TypeError(f"Funcs({what}=...) expects a callable, got {type(func).__name__}")
        self._update = update
        self._create = create
        self._delete = delete

    def create(self, obj: Any) -> bool:
        return True if self._create is None else bool(self._create(obj.copy()))

    def update(self, old: Any, new: Any) -> bool:
        return True if self._update is None else bool(self._update(old.copy(), new.copy()))

    def delete(self, obj: Any) -> bool:
        return True if self._delete is None else bool(self._delete(obj.copy()))

    def __repr__(self) -> str:
        named = [
            f"{what}={getattr(func, '__qualname__', func)}"
            for what, func in (("update", self._update), ("create", self._create), ("delete", self._delete))
            if func is not None
        ]
        return f"Funcs({', '.join(named)})"


class AnyOf(Predicate):
    """Passes an event when any of its predicates does (controller-runtime's ``predicate.Or``)."""

    def __init__(self, *predicates: Predicate) -> None:
        self.predicates = as_predicates(predicates, "any_of()")

    def create(self, obj: Any) -> bool:
        return any(p.create(obj) for p in self.predicates)

    def update(self, old: Any, new: Any) -> bool:
        return any(p.update(old, new) for p in self.predicates)

    def delete(self, obj: Any) -> bool:
        return any(p.delete(obj) for p in self.predicates)

    def __repr__(self) -> str:
        return " | ".join(map(repr, self.predicates)) or "AnyOf()"


class AllOf(Predicate):
    """Passes an event when all of its predicates do (``predicate.And``; a ``predicates=`` list is one)."""

    def __init__(self, *predicates: Predicate) -> None:
        self.predicates = as_predicates(predicates, "all_of()")

    def create(self, obj: Any) -> bool:
        return all(p.create(obj) for p in self.predicates)

    def update(self, old: Any, new: Any) -> bool:
        return all(p.update(old, new) for p in self.predicates)

    def delete(self, obj: Any) -> bool:
        return all(p.delete(obj) for p in self.predicates)

    def __repr__(self) -> str:
        return " & ".join(map(repr, self.predicates)) or "AllOf()"


def any_of(*predicates: Predicate | Callable[[Any, Any], Any]) -> Predicate:
    """A predicate passing an event when any of ``predicates`` does."""
    return AnyOf(*as_predicates(predicates, "any_of()"))


def all_of(*predicates: Predicate | Callable[[Any, Any], Any]) -> Predicate:
    """A predicate passing an event when all of ``predicates`` do."""
    return AllOf(*as_predicates(predicates, "all_of()"))


def default_predicates(kind: Any = None) -> tuple[Predicate, ...]:
    """The primary kind's predicates when ``Controller(predicates=...)`` is not given.

    A custom resource (its status is its controller's own): a change of the generation (any change for
    kinds without one), the labels or the annotations, so a status write of ours costs no pass. A
    built-in kind (a generated model: a Pod, a Node, a Deployment, whose status others write and the
    controller may be waiting for): none, every change queues (controller-runtime's default).
    """
    if kind is not None and str(getattr(kind, "__module__", "")).startswith(_BUILT_IN):
        return ()
    return (AnyOf(GenerationChanged(), LabelsChanged(), AnnotationsChanged()),)


#: The module of the generated models of kube-apiserver's own kinds.
_BUILT_IN = "cloudcoil_cache.models.kubernetes."


def as_predicates(value: Any, what: str) -> tuple[Predicate, ...]:
    """``value`` (a predicate, a function ``(old, new) -> bool``, or an iterable of them) as a tuple of
    predicates; anything else is a ``TypeError`` naming ``what``."""
    if isinstance(value, Predicate) or (callable(value) and not isinstance(value, type)):
        value = (value,)
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(
            f"{what}: predicates must be a Predicate, a function (old, new) -> bool or a list of them, "
            f"got {type(value).__name__}"
        )
    result: list[Predicate] = []
    for item in value:
        if isinstance(item, Predicate):
            result.append(item)
        elif isinstance(item, type) and issubclass(item, Predicate):
            raise TypeError(f"{what}: {item.__name__} is a class: pass an instance, {item.__name__}()")
        elif callable(item):
            result.append(Funcs(update=item))
        else:
            raise TypeError(
                f"{what}: a predicate must be a Predicate or a function (old, new) -> bool, got {type(item).__name__}"
            )
    return tuple(result)


def _lifecycle_changed(old: Any, new: Any) -> bool:
    """Did the deletion mark or the finalizers change (what a finalizer's pass must see)?"""
    return bool(
        _field(old, "deletion_timestamp") != _field(new, "deletion_timestamp")
        or (_field(old, "finalizers") or []) != (_field(new, "finalizers") or [])
    )


def _resync(old: Any, new: Any) -> bool:
    """Is this update a resync re-delivery (the same resourceVersion on both sides)?"""
    before = _field(old, "resource_version")
    return before is not None and before == _field(new, "resource_version")


def event_passes(
    predicates: tuple[Predicate, ...], event: str, objs: tuple[Any, ...], logger: logging.Logger, where: str
) -> bool:
    """Do all ``predicates`` pass this ``event`` (``add``, ``update`` with ``(old, new)``, ``delete``)?

    Whatever the predicates say, a resync re-delivery (the safety net) and an update that sets the
    deletion mark or changes the finalizers pass. A predicate that raises is logged and passes."""
    if not predicates:
        return True
    if event == "update":
        old, new = objs
        if _resync(old, new) or _lifecycle_changed(old, new):
            return True
    for predicate in predicates:
        try:
            if event == "update":
                ok = predicate.update(objs[0], objs[1])
            elif event == "delete":
                ok = predicate.delete(objs[0])
            else:
                ok = predicate.create(objs[0])
        except Exception:
            logger.exception("%s: predicate %r failed on a %s event; the event passes", where, predicate, event)
            ok = True
        if not ok:
            return False
    return True
