"""The one cattrs converter that owns the wire format (camelCase JSON <-> objects).

It dispatches on the model marker (``_fields.is_model_class``), as cattrs dispatches attrs classes
on theirs, so it sits below the ``Model`` base, which calls it directly.
"""

from __future__ import annotations

import logging
import threading
import typing
from typing import Any, Callable, TypeVar

import attrs
import cattrs

from cloudcoil_cache.errors import DecodeError
from cloudcoil_cache.models import _codegen
from cloudcoil_cache.models._fields import editable_class, field_hints, field_names, is_model_class, is_resource_class
from cloudcoil_cache.models._frozen import FrozenDict, FrozenList, interning, sharing

__all__ = [
    "ModelConverter",
    "configure_converter",
    "converter",
    "copy_model",
    "evolve_sealed",
    "make_converter",
    "structure",
    "structure_sealed",
    "to_wire",
    "unstructure",
]

log = logging.getLogger(__name__)

T = TypeVar("T")


class ModelConverter(cattrs.Converter):
    """A cattrs ``Converter`` that also keeps the generated copy functions of the models.

    Thread-safe once configured: hooks are generated once per class under a lock, and the
    generated functions are pure.
    """

    __slots__ = ("_cloudcoil_generate",)

    _cloudcoil_generate: Callable[[type, str], Callable[..., Any]]

    def copy_function(self, cls: type, sealed: bool) -> Callable[[Any], Any]:
        """The deep-copy function of editable class ``cls`` (editable or read-only result)."""
        return self._cloudcoil_generate(cls, "copy_sealed" if sealed else "copy")


def configure_converter(conv: cattrs.Converter) -> None:
    """Register the model hooks on ``conv``.

    The hooks are functions generated per class from its type hints (like ``cattrs.gen``, but
    specialised for Kubernetes models: every field optional, unknown fields kept, read-only
    variants). Nested models are looked up through ``conv``, so hooks registered on it win.
    """
    hooks = _ModelHooks(conv)
    conv.register_structure_hook_factory(is_model_class, hooks.structure_factory)
    conv.register_unstructure_hook_factory(is_model_class, hooks.unstructure_factory)
    if isinstance(conv, ModelConverter):
        conv._cloudcoil_generate = hooks.generate


class _ModelHooks:
    """The model hooks of one converter: each function generated once per (class, operation).

    Thread-safe: generation happens once per class under one lock (reflector threads may race);
    the generated functions are pure.
    """

    __slots__ = ("conv", "generated", "shared", "lock")

    def __init__(self, conv: cattrs.Converter) -> None:
        self.conv = conv
        self.generated: dict[tuple[type, str], Callable[..., Any]] = {}
        self.shared: dict[type, Callable[..., Any]] = {}  # sealed structure hooks that share equal values
        self.lock = threading.RLock()

    def lookup(self, cls: type, op: str) -> Callable[..., Any]:
        """The function generated code calls for a nested model: the converter's hook."""
        editable: Any = getattr(cls, "__editable_class__")
        if op == "unstructure":
            return self.conv.get_unstructure_hook(editable)
        if op not in ("structure", "structure_sealed"):
            return self.generate(editable, op)
        target = editable if op == "structure" else editable.__sealed_class__
        hook = self.conv.get_structure_hook(target)
        if hook is self.generated.get((editable, op)) or hook is self.shared.get(editable):
            return hook  # ours: takes the data alone
        return lambda data: hook(data, target)  # a hook registered by hand: (data, type)

    def generate(self, cls: type, op: str) -> Callable[..., Any]:
        """Function ``op`` of editable class ``cls``, generated on first use."""
        key = (cls, op)
        fn = self.generated.get(key)
        if fn is None:
            with self.lock:
                fn = self.generated.get(key)
                if fn is None:
                    log.debug("generating %s function of %s", op, cls.__qualname__)
                    fn = _codegen.build(cls, op, self.lookup)
                    self.generated[key] = fn
        return fn

    def structure_factory(self, t: type) -> Callable[..., Any]:
        editable = editable_class(t)
        if not getattr(t, "_sealed"):
            return self.generate(editable, "structure")
        with self.lock:
            hook = self.shared.get(editable)
            if hook is None:
                # Repeated strings (condition types, phases, images...) become one string object.
                fn = interning(self.generate(editable, "structure_sealed"), _string_fields(editable))
                if is_resource_class(editable):
                    hook = fn  # a top-level object is unique (its name, uid, resourceVersion)
                else:
                    # Nested read-only values repeat across objects (the containers of a ReplicaSet's
                    # pods): equal JSON gets one shared object (see _frozen.sharing; adaptive, bounded).
                    hook = sharing(fn, editable.__qualname__)
                self.shared[editable] = hook
        return hook

    def unstructure_factory(self, t: type) -> Callable[..., Any]:
        return self.generate(editable_class(t), "unstructure")


def _string_fields(cls: type) -> list[str]:
    """The attributes of ``cls`` that hold a plain string on the wire."""
    hints = field_hints(cls)
    names = []
    for field in attrs.fields(cls):
        hint = hints.get(field.name)
        if field.name == "_extra" or hint is None:
            continue
        try:
            scalar = _codegen.shape_of(hint) == ("scalar",)
        except TypeError:
            continue
        if scalar and str in _scalar_types(hint):
            names.append(field.name)
    return names


def _scalar_types(hint: Any) -> tuple[Any, ...]:
    args = typing.get_args(hint)
    if typing.get_origin(hint) is typing.Annotated:
        return _scalar_types(args[0])
    return tuple(a for a in args if a is not type(None)) if args else (hint,)


def make_converter() -> ModelConverter:
    """A new converter configured for the models (the module-level ``converter`` is one)."""
    conv = ModelConverter()
    configure_converter(conv)
    return conv


converter = make_converter()
"""The converter of the library: every conversion between wire dicts and models goes through it."""


def structure(data: Any, cls: type[T]) -> T:
    """An editable ``cls`` from its wire form. Raises ``DecodeError`` naming what was wrong."""
    try:
        return converter.structure(data, cls)
    except DecodeError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        raise DecodeError(f"cannot decode {getattr(cls, '__name__', cls)}: {exc}") from exc


def structure_sealed(data: Any, cls: type[T]) -> T:
    """Build a deeply read-only ``cls`` from its wire form (what the cache stores)."""
    built: T = structure(data, getattr(cls, "__sealed_class__"))
    return built


def unstructure(obj: Any) -> Any:
    """The wire form of ``obj`` (camelCase dicts, unknown fields included, ``None`` omitted)."""
    try:
        return converter.unstructure(obj)
    except (TypeError, ValueError, AttributeError) as exc:
        raise TypeError(f"cannot convert {type(obj).__name__} to its wire form: {exc}") from exc


def to_wire(obj: Any) -> dict[str, Any]:
    """The wire form of model ``obj``: ``unstructure`` of a model is always a dict."""
    wire: dict[str, Any] = unstructure(obj)
    return wire


def copy_model(obj: T, sealed: bool = False) -> T:
    """A deep copy of model ``obj``: editable (plain lists/dicts), or read-only when ``sealed``."""
    copied: T = converter.copy_function(editable_class(type(obj)), sealed)(obj)
    return copied


def evolve_sealed(obj: Any, **changes: Any) -> Any:
    """A read-only copy of sealed ``obj`` with some fields replaced, sharing every other field.

    Nothing in a sealed object can change, so the fields not replaced are shared with ``obj``
    instead of deep-copied (a transform such as ``strip_managed_fields`` then costs one small
    object per level it changes, and keeps the sharing of the rest). Replacement values are made
    read-only: sealed models and frozen containers are kept, editable models are copied sealed,
    lists and dicts become frozen. Raises ``TypeError`` for an editable ``obj`` or an unknown field.
    """
    cls = type(obj)
    if not getattr(cls, "_sealed", False):
        raise TypeError(f"evolve_sealed() needs a sealed object, got {cls.__name__} (use .evolve())")
    names = field_names(cls)
    unknown = [name for name in changes if name not in names]
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {unknown[0]!r}")
    new = object.__new__(cls)
    for name in names + ("_extra",):
        object.__setattr__(new, name, changes[name] if name in changes else getattr(obj, name))
    for name, value in changes.items():
        object.__setattr__(new, name, _read_only_value(value))
    return new


def _read_only_value(value: Any) -> Any:
    if value is None or value.__class__ in (str, int, float, bool, FrozenList, FrozenDict):
        return value
    if is_model_class(value.__class__):
        return value if value._sealed else copy_model(value, sealed=True)
    if isinstance(value, (list, tuple)):
        return FrozenList([_read_only_value(v) for v in value])
    if isinstance(value, dict):
        return FrozenDict({k: _read_only_value(v) for k, v in value.items()})
    return value  # datetimes and other immutable scalars
