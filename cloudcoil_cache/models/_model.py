"""The ``Model`` base of every generated class and the ``model`` decorator: sealing, copies, conversion.

It calls the converter, code generation and ``model_dump`` directly: they sit below it and know a
model by its marker (``_cc_model``). ``Resource`` is above (``models._base``), with ``ObjectMeta``;
what differs for a resource here is read from its marker (``_cc_resource``) and its class hooks.
"""

from __future__ import annotations

import copy
import functools
import operator
import sys
from typing import Any, Callable, ClassVar, NoReturn, TypeVar

import attrs

from cloudcoil_cache.errors import ReadOnlyError
from cloudcoil_cache.models import _builders, _codegen, _convert, _dump
from cloudcoil_cache.models._fields import field_names, is_resource_class, wire_name

__all__ = ["Model", "convert_kwargs", "finish_model", "is_sealed", "model"]

M = TypeVar("M", bound="Model")
F = TypeVar("F")

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover

    def dataclass_transform(**_: Any) -> Callable[[F], F]:
        return lambda f: f


def _read_only(self: Model, name: str, *_: Any) -> NoReturn:
    cls = type(self).__name__
    raise ReadOnlyError(
        f"{cls} is a shared read-only object (from the cache); cannot change {name!r}. "
        f"Call obj.copy() (or obj.evolve({name}=...)) for an editable copy."
    )


# ------------------------------------------------------------------ a user's annotated classes
#: Class constants of a resource: never fields, also when annotated (``kind: str = "Widget"``).
_CONSTANTS = ("api_version", "kind", "plural", "namespaced", "group", "version")


def _wants_auto_model(namespace: dict[str, Any]) -> bool:
    """Whether a class body is a user's model declaration (not ours, not attrs' rebuilt class)."""
    module = namespace.get("__module__") or ""
    return (
        bool(namespace.get("__annotations__"))
        and "__attrs_attrs__" not in namespace
        and not module.startswith("cloudcoil_cache.")
    )


def _prepare_auto_model(bases: tuple[type, ...], namespace: dict[str, Any], kwargs: dict[str, Any]) -> None:
    """Turn a user's class body into what ``attrs.define`` expects of a model (in place).

    Resource constants (annotated or given as class keywords) stay class constants; every field
    defaults to ``None`` as generated fields do; mutable defaults become per-object copies; a class
    without its own field of a name in its bases' ``_cc_implied_fields`` gets it (a resource's
    ``metadata``: the ``ObjectMeta`` field every kind has).
    """
    annotations: dict[str, Any] = namespace["__annotations__"]
    for name in _CONSTANTS:
        annotations.pop(name, None)
    # class keywords (``GenericResource``'s api_version=...) stay for its __init_subclass__, which
    # checks them and leaves registration to _auto_model
    namespace["_cc_auto"] = True
    implied: dict[str, Any] = {}
    for base in reversed(bases):
        implied.update(getattr(base, "_cc_implied_fields", None) or {})
    for name, hint in implied.items():
        if name not in annotations and not any(attrs.has(b) and name in attrs.fields_dict(b) for b in bases):
            annotations[name] = hint
            namespace[name] = None
    for name, hint in annotations.items():
        if _is_class_var(hint):
            continue
        default = namespace.get(name)
        if isinstance(default, (list, dict, set, Model)):  # one per object, as pydantic copies them
            namespace[name] = attrs.field(factory=functools.partial(copy.deepcopy, default))
        elif name not in namespace:
            namespace[name] = None


def _is_class_var(hint: Any) -> bool:
    if isinstance(hint, str):
        return hint.startswith(("ClassVar", "typing.ClassVar"))
    return getattr(hint, "__origin__", None) is ClassVar or hint is ClassVar


def _auto_model(cls: type) -> type:
    """Finish a user's annotated class as a model: attrs fields, sealed twin, registration."""
    api_version = cls.__dict__.get("api_version")
    if isinstance(api_version, str) and "group" not in cls.__dict__:
        group, _, version = api_version.rpartition("/")
        type.__setattr__(cls, "group", group)
        type.__setattr__(cls, "version", version)
    type.__setattr__(cls, "_cc_checked", True)  # keyword values of plain-typed fields are checked
    if (
        is_resource_class(cls)
        and getattr(cls, "kind", None)
        and getattr(cls, "plural", None) is None
        and "namespaced" not in cls.__dict__
    ):
        type.__setattr__(cls, "namespaced", None)  # with the plural, from the server's discovery
    # only a class that declares its kind becomes what that kind decodes to: a subclass of Pod that
    # adds a field must not change what parse() and the cache build for every Pod
    declares = "kind" in cls.__dict__ or "api_version" in cls.__dict__
    return _build_model(cls, replace=True, register=declares)


class _ModelMeta(type):
    """Gives every model subclass ``__slots__ = ()``, and makes a user's annotated class a model.

    So a plain subclass (``class Widget(GenericResource, api_version=...)``) stays slotted: no
    per-object ``__dict__`` and no silently accepted misspelt attributes. A class written outside
    this library with annotated fields (``class Widget(Resource): api_version = ...; spec:
    WidgetSpec | None = None``) becomes a full model without a decorator, as a pydantic model
    would (see ``_auto_model``).
    """

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any) -> type:
        namespace.setdefault("__slots__", ())
        auto = _wants_auto_model(namespace)
        if auto:
            _prepare_auto_model(bases, namespace, kwargs)
            scope = sys._getframe(1)  # the code running the class statement
            if scope.f_locals is not scope.f_globals:  # a class defined in a function
                # the names its annotations may use (``from __future__ import annotations``), as
                # pydantic keeps them: the function's locals when the class was made
                namespace["_cc_localns"] = dict(scope.f_locals)
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)
        return _auto_model(cls) if auto else cls


@attrs.define(slots=True, eq=False, repr=False, weakref_slot=False, kw_only=True)
class Model(_builders.BuilderTypes, metaclass=_ModelMeta):
    """Base of every model: wire conversion, editable copies, and read-only ("sealed") objects.

    Objects a user builds (keyword construction, ``from_dict``, ``copy``) are ordinary editable
    objects, not synchronised: share them between threads only read-only. Objects from
    ``from_dict_sealed`` (what the cache stores) are deeply read-only and safe to share between
    threads; any change raises ``ReadOnlyError``. A sealed object is an instance of a "sealed twin"
    subclass (same name, ``__slots__ = ()``, ``__setattr__``/``__delattr__`` raise), so
    ``isinstance(obj, Pod)`` holds, reads cost nothing, and it compares equal to an editable
    object with the same content.

    Every field defaults to ``None`` at runtime, also fields the spec calls required: a server sends
    partial objects (watch bookmarks carry only ``metadata.resourceVersion``), and decoding them
    must not fail. Requiredness is documented per field in the generated code.

    Fields the model does not know (from a newer server), and known fields sent as explicit
    ``null``, are kept in ``_extra`` and written back by ``to_dict()``.
    """

    _extra: dict[str, Any] | None = attrs.field(default=None, init=False, repr=False)

    # The marker the converter, code generation and builders know a model class by.
    _cc_model: ClassVar[bool] = True

    # Set by model(): the sealed twin (a read-only subclass) and the editable class of this class.
    __sealed_class__: ClassVar[type]
    __editable_class__: ClassVar[type]
    # Wire names that are not the camelCase of the attribute name (e.g. {"pod_cidrs": "podCIDRs"}).
    _wire: ClassVar[dict[str, str]] = {}
    _sealed: ClassVar[bool] = False
    _eq_fields: ClassVar[Callable[[Any], tuple[Any, ...]]]

    @classmethod
    def from_dict(cls: type[M], data: Any) -> M:
        """An editable object from its wire form (camelCase keys). Raises ``DecodeError``."""
        return _convert.structure(data, cls)

    @classmethod
    def from_dict_sealed(cls: type[M], data: Any) -> M:
        """A deeply read-only object from its wire form, without copying on later reads.

        Raises ``DecodeError``. The result shares no container with ``data``.
        """
        return _convert.structure_sealed(data, cls)

    def to_dict(self) -> dict[str, Any]:
        """The wire form: camelCase keys, unknown fields written back, ``None`` fields omitted."""
        return _convert.to_wire(self)

    def copy(self: M) -> M:
        """An editable deep copy (plain lists and dicts), also of a sealed object."""
        return _convert.copy_model(self)

    def evolve(self: M, **changes: Any) -> M:
        """An editable deep copy with some fields replaced (like ``attrs.evolve``)."""
        new = _convert.copy_model(self)
        names = field_names(type(new))
        for key in changes:
            if key not in names:
                raise TypeError(f"{type(self).__name__}.evolve() got an unknown field {key!r}")
        convert_kwargs(type(new), changes)
        for key, value in changes.items():
            setattr(new, key, value)
        return new

    # ------------------------------------------------------------- pydantic's names
    # cloudcoil's models are pydantic models; these give code written for them the same calls.
    @classmethod
    def model_validate(cls: type[M], obj: Any) -> M:
        """``obj`` if it is already a ``cls``, else an editable object from a dict.

        The dict's keys are wire names (camelCase) or, as pydantic's ``populate_by_name`` allows,
        attribute names (``resource_version``), at any depth. Raises ``DecodeError`` (a
        ``ValueError``) naming the field that does not fit.
        """
        if isinstance(obj, cls):
            return obj
        built = cls.from_dict(obj)
        if isinstance(obj, dict) and _has_snake_key(obj) and _keeps_attribute_names(built):
            # the wire decoder kept the attribute-named keys as unknown fields: build it as keyword
            # construction does, which takes both names (and refuses a key it does not know)
            try:
                return cls(**obj)
            except (TypeError, ValueError) as exc:
                from cloudcoil_cache.errors import DecodeError

                raise DecodeError(f"cannot decode {cls.__name__}: {exc}") from None
        return built

    @classmethod
    def model_validate_json(cls: type[M], data: str | bytes | bytearray) -> M:
        """An editable object from JSON text. Raises ``DecodeError`` (a ``ValueError``)."""
        from cloudcoil_cache import _json
        from cloudcoil_cache.errors import DecodeError

        try:
            value = _json.loads(data)
        except ValueError as exc:
            raise DecodeError(f"{cls.__name__}: not valid JSON: {exc}") from None
        return cls.from_dict(value)

    def model_dump(self, *, mode: str = "python", by_alias: bool = False, exclude_none: bool = False) -> dict[str, Any]:
        """A plain dict of this object, as pydantic's ``model_dump``.

        Keys are attribute names (``by_alias=True``: the wire's camelCase names); fields without a
        value are ``None`` unless ``exclude_none``; ``mode="json"`` gives JSON values (times as
        their wire text), ``"python"`` keeps ``datetime`` objects. Unknown fields from the server
        are kept under their wire names. ``model_dump(mode="json", by_alias=True,
        exclude_none=True)`` is ``to_dict()``.
        """
        return _dump.dump(self, mode=mode, by_alias=by_alias, exclude_none=exclude_none)

    def model_dump_json(self, *, by_alias: bool = False, exclude_none: bool = False, indent: int | None = None) -> str:
        """``model_dump(mode="json", ...)`` as JSON text."""
        import json

        return json.dumps(self.model_dump(mode="json", by_alias=by_alias, exclude_none=exclude_none), indent=indent)

    def model_copy(self: M, *, update: dict[str, Any] | None = None, deep: bool = False) -> M:
        """An editable copy, as pydantic's ``model_copy``: shallow unless ``deep``.

        A shallow copy of a cached (read-only) object shares its nested values, which stay
        read-only; ``deep=True`` (or ``copy()``) copies everything. ``update`` sets fields by
        attribute or wire name, without conversion (as pydantic's).
        """
        return _dump.copy_model(self, update=update, deep=deep)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Model) or other.__editable_class__ is not self.__editable_class__:
            return NotImplemented
        get: Any = self._eq_fields
        return bool(get(self) == get(other))

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = []
        for name in field_names(type(self)):
            value = getattr(self, name)
            if value is not None:
                shown.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    def __reduce__(self) -> Any:
        return (_rebuild, (self.__editable_class__, self._sealed, self.to_dict()))

    # ------------------------------------------------------------- cloudcoil's fluent builders
    # Derived from the fields at first use (models._builders); nothing is generated per class.
    # ``Kind.Builder`` / ``Kind.ListBuilder`` come from the base ``_builders.BuilderTypes``.

    @classmethod
    def builder(cls: type[M]) -> _builders.Builder[M]:
        """An immutable fluent builder: ``Pod.builder().metadata(dict(name="a")).spec(lambda s: ...).build()``."""
        return _builders.Builder(cls)

    @classmethod
    def new(cls: type[M]) -> _builders.Scope[_builders.Builder[M]]:
        """``with Pod.new() as pod: pod.metadata(...)`` (set in place; nested ``with pod.spec() as s:``), then
        ``pod.build()``."""
        return _builders.Scope(_builders.Builder(cls))

    @classmethod
    def list_builder(cls: type[M]) -> _builders.ListBuilder[M]:
        """An immutable builder of a list: ``Container.list_builder().add(lambda c: c.name("a")).build()``."""
        return _builders.ListBuilder(cls)

    @classmethod
    def _cc_built(cls, *, replace: bool, register: bool) -> None:
        """Called by ``model()`` once ``cls`` is built (``Resource`` registers its kind here)."""


def _has_snake_key(data: Any) -> bool:
    """Whether a key with ``_`` appears anywhere in ``data`` (a cheap test before ``_attribute_named``)."""
    if isinstance(data, dict):
        return any(isinstance(k, str) and "_" in k or _has_snake_key(v) for k, v in data.items())
    if isinstance(data, list):
        return any(_has_snake_key(v) for v in data)
    return False


def _keeps_attribute_names(obj: Model) -> bool:
    """Whether ``obj`` (or a model inside it) kept as an unknown field a key that is the attribute
    name of a field, not its wire name (``metadata.resource_version``; not an explicit ``"data": null``)."""
    cls = type(obj)
    names = field_names(cls)
    if any(key in names and key != wire_name(cls, key) for key in obj._extra or ()):
        return True
    for name in names:
        value = getattr(obj, name)
        items = value if isinstance(value, list) else value.values() if isinstance(value, dict) else (value,)
        if any(isinstance(item, Model) and _keeps_attribute_names(item) for item in items):
            return True
    return False


def _rebuild(cls: type[Model], sealed: bool, data: dict[str, Any]) -> Model:
    return cls.from_dict_sealed(data) if sealed else cls.from_dict(data)


@dataclass_transform(kw_only_default=True, field_specifiers=(attrs.field,))
def model(cls: type[M]) -> type[M]:
    """Class decorator of every model: an attrs slotted class plus its sealed twin (idempotent)."""
    if "__sealed_class__" in cls.__dict__:
        return cls  # already a model (a user's annotated class is made one by its metaclass)
    return _build_model(cls, replace=False)


def _build_model(cls: type[M], *, replace: bool, register: bool = True) -> type[M]:
    built: type[M] = attrs.define(slots=True, kw_only=True, eq=False, repr=False, weakref_slot=False)(cls)
    finish_model(built)
    type.__setattr__(built, "__init__", _first_init(built, built.__init__, is_resource_class(built)))
    built._cc_built(replace=replace, register=register)
    return built


def _first_init(cls: type, attrs_init: Callable[..., None], resource: bool) -> Callable[..., None]:
    """``cls.__init__`` until its first call, which installs the real one and delegates to it.

    The real one (``_codegen.build_init``) converts dicts to models in keyword construction:
    ``Pod(metadata=dict(name="a"), spec=dict(containers=[dict(name="c")]))`` gives an
    ``ObjectMeta``, a ``PodSpec`` and a list of ``Container`` (dict keys: attribute or wire
    names); a value that does not fit raises ``TypeError``/``ValueError`` naming the field path
    (``Pod.spec.containers[0]: expected Container or dict, got int``). Resources also accept
    ``api_version``/``kind`` although both are class constants. It is generated lazily because
    field types name classes defined later in their module. Decoding (``from_dict``) never calls
    ``__init__``, so none of this is on the decode hot path.
    """

    def __init__(self: Model, *args: Any, **kwargs: Any) -> None:
        real = cls.__dict__.get("_cc_init")
        if real is None:
            real = _codegen.build_init(cls) or _keyword_init(attrs_init, resource)
            type.__setattr__(cls, "_cc_init", real)
            type.__setattr__(cls, "__init__", real)
        real(self, *args, **kwargs)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__doc__ = _first_init.__doc__
    return __init__


def _keyword_init(init: Callable[..., None], resource: bool) -> Callable[..., None]:
    """The generic form of the generated ``__init__`` (for classes ``build_init`` declines)."""

    @functools.wraps(init)
    def __init__(
        self: Model, *args: Any, api_version: str | None = None, kind: str | None = None, **kwargs: Any
    ) -> None:
        names = field_names(type(self))
        if any(key not in names for key in kwargs):
            given = {"api_version": api_version, "kind": kind} if resource else {}
            kwargs = _codegen.wire_keywords(type(self), given, kwargs)
            if resource:
                api_version, kind = kwargs.pop("api_version", None), kwargs.pop("kind", None)
        if not resource:
            if api_version is not None:
                kwargs["api_version"] = api_version
            if kind is not None:
                kwargs["kind"] = kind
        if kwargs:
            convert_kwargs(type(self), kwargs)
        init(self, *args, **kwargs)
        if resource and (api_version is not None or kind is not None):
            _codegen.set_type_meta(self, api_version, kind)

    return __init__


def convert_kwargs(cls: type, kwargs: dict[str, Any]) -> None:
    """Convert, in place, the keyword values of fields whose type involves a model (or a Time)."""
    table = cls.__dict__.get("_cc_init_conv")
    if table is None:
        table = _codegen.init_converters(cls)
    if table:
        for key, value in kwargs.items():
            if value is not None:
                conv = table.get(key)
                if conv is not None:
                    kwargs[key] = conv(value, (cls.__name__, "." + key))


def finish_model(cls: type[Model]) -> None:
    """Give an attrs model class its sealed twin and equality getter (idempotent)."""
    if "__sealed_class__" in cls.__dict__:
        return
    names = field_names(cls) + ("_extra",)
    metaclass: Any = type(cls)
    twin = metaclass(
        cls.__name__,
        (cls,),
        {
            "__slots__": (),
            "__qualname__": cls.__qualname__,
            "__module__": cls.__module__,
            "__doc__": cls.__doc__,
            "__setattr__": _read_only,
            "__delattr__": _read_only,
            "_sealed": True,
        },
    )
    type.__setattr__(cls, "_eq_fields", operator.attrgetter(*names))
    type.__setattr__(cls, "__editable_class__", cls)
    type.__setattr__(cls, "__sealed_class__", twin)
    type.__setattr__(twin, "__sealed_class__", twin)
    type.__setattr__(twin, "_cc_field_names", field_names(cls))


def is_sealed(obj: object) -> bool:
    """Whether ``obj`` is a read-only (sealed) model object."""
    return isinstance(obj, Model) and type(obj)._sealed
