"""Fluent builders of every model (cloudcoil's API): ``Kind.builder()``, ``Kind.new()``, ``Kind.list_builder()``.

Nothing is generated per class: the setters of a class are derived from its attrs fields and their
types at first use, and cached on the class. A setter is named after the field's attribute
(``singular_name``; a field called ``build`` is set with ``build_``). A field whose type is a model
also takes a function receiving that model's builder (``.spec(lambda s: s.containers(...))``); a
field that is a list of models, a function receiving a ``ListBuilder``.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeAlias, TypeVar, overload

import attrs

from cloudcoil_cache.models._codegen import model_from_mapping, shape_of
from cloudcoil_cache.models._fields import field_hints, is_resource_class
from cloudcoil_cache.models._quantity import Quantity

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["Builder", "BuilderTypes", "ListBuilder", "Scope"]

_S = TypeVar("_S", bound="_Model")


class _Model(Protocol):
    """What a builder needs of a model (``Model`` is defined above this module, which it imports)."""

    def copy(self: _S) -> _S: ...


M = TypeVar("M", bound=_Model)
M_co = TypeVar("M_co", bound=_Model, covariant=True)
T = TypeVar("T", bound="Builder[Any] | ListBuilder[Any]")


class _Unset:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<unset>"


_UNSET: Any = _Unset()


class _Field(NamedTuple):
    """What a setter needs to know of one field."""

    name: str  # the attribute name (the keyword of the model's constructor)
    nested: type[Any] | None  # the model class of a field that holds one model or a list of them
    many: bool  # a list of ``nested``
    plain: bool  # a field of strings/scalars: a Quantity given to it is stored as its text


def _fields_of(cls: type[Any]) -> dict[str, _Field]:
    """The setters of ``cls`` by name, derived from its fields once and cached on the class."""
    table: dict[str, _Field] | None = cls.__dict__.get("_cc_builder_fields")
    if table is not None:
        return table
    try:
        fields = [a.name for a in attrs.fields(cls) if a.name != "_extra"]
    except (TypeError, attrs.exceptions.NotAnAttrsClassError):
        raise TypeError(f"{cls.__name__} is not a model class; builders need a model") from None
    hints = field_hints(cls)
    table = {}
    for name in fields:
        try:
            shape = shape_of(hints[name])
        except (TypeError, KeyError):
            table[_setter_name(name)] = _Field(name, None, False, False)
            continue
        if shape[0] == "model":
            table[_setter_name(name)] = _Field(name, shape[1], False, False)
        elif shape[0] == "list" and shape[1][0] == "model":
            table[_setter_name(name)] = _Field(name, shape[1][1], True, False)
        else:
            table[_setter_name(name)] = _Field(name, None, False, shape[0] != "json")
    if is_resource_class(cls):
        # Class constants, but the constructor takes them (cloudcoil's builders have setters for them).
        for name in ("api_version", "kind"):
            table.setdefault(name, _Field(name, None, False, True))
    type.__setattr__(cls, "_cc_builder_fields", table)
    return table


def _setter_name(attr: str) -> str:
    return "build_" if attr == "build" else attr


def _editable(cls: type[M]) -> type[M]:
    """The editable class of ``cls`` (a builder of a read-only twin builds editable objects)."""
    editable: type[M] = getattr(cls, "__editable_class__", cls)
    return editable


def _plain(value: Any) -> Any:
    """``value`` with a ``Quantity`` (also inside one list or dict) turned into its plain text."""
    if isinstance(value, Quantity):
        return value.root
    if value.__class__ is dict and any(isinstance(v, Quantity) for v in value.values()):
        return {k: v.root if isinstance(v, Quantity) else v for k, v in value.items()}
    if value.__class__ is list and any(isinstance(v, Quantity) for v in value):
        return [v.root if isinstance(v, Quantity) else v for v in value]
    return value


class Scope(Generic[T]):
    """The context manager of ``with Kind.new() as b:`` and of the nested forms inside it.

    Entering gives the builder, which is changed in place until the block ends; a nested scope then
    hands what it built to its parent (``done``). An exception in the block hands nothing.
    """

    __slots__ = ("_target", "_done")

    def __init__(self, target: T, done: Callable[[T], object] | None = None) -> None:
        self._target = target
        self._done = done

    def __enter__(self) -> T:
        self._target._in_context = True
        return self._target

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._target._in_context = False
        if exc_type is None and self._done is not None:
            self._done(self._target)


class Builder(Generic[M_co]):
    """An immutable fluent builder of one model class: every setter returns a new builder.

    ``Pod.builder().metadata(dict(name="web")).spec(lambda s: s.containers(...)).build()``. Inside
    ``with Pod.new() as pod:`` the builder is changed in place instead, and calling a model field's
    setter with no value opens a nested ``with`` block (``with pod.metadata() as meta:``).
    ``_attrs`` holds the values set so far, by attribute name. ``build()`` returns a new editable
    object each time (the values given are copied, read-only cached objects included).
    """

    __slots__ = ("_model", "_attrs", "_in_context")

    _model: type[M_co]
    _attrs: dict[str, Any]
    _in_context: bool

    def __init__(self, model: type[M_co], values: dict[str, Any] | None = None, *, in_context: bool = False) -> None:
        self._model = _editable(model)
        self._attrs = {} if values is None else values
        self._in_context = in_context

    def build(self) -> M_co:
        """A new ``Kind`` from the values set (keyword construction: dicts become nested models)."""
        return self._model(**self._attrs).copy()

    def _set(self, name: str, value: Any) -> Builder[M_co]:
        if self._in_context:
            self._attrs[name] = value
            return self
        return Builder(self._model, {**self._attrs, name: value})

    def __getattr__(self, name: str) -> _Setter[M_co]:
        if name.startswith("_"):
            raise AttributeError(name)
        table = _fields_of(self._model)
        field = table.get(name)
        if field is None:
            close = difflib.get_close_matches(name, table, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise AttributeError(f"{self._model.__name__} has no field {name!r}{hint}")
        return _Setter(self, field)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(_fields_of(self._model)))

    def __repr__(self) -> str:
        calls = "".join(f".{_setter_name(k)}({v!r})" for k, v in self._attrs.items())
        return f"{self._model.__name__}.builder(){calls}"


class _Setter(Generic[M_co]):
    """``builder.<field>``: called with a value it sets the field; with none (in a ``with``), it nests."""

    __slots__ = ("_builder", "_field")

    def __init__(self, builder: Builder[M_co], field: _Field) -> None:
        self._builder = builder
        self._field = field

    @overload
    def __call__(self, /) -> Any: ...

    @overload
    def __call__(self, value: Any, /) -> Builder[M_co]: ...

    def __call__(self, value: Any = _UNSET, /) -> Any:
        builder, field = self._builder, self._field
        if value is _UNSET:
            return self._nested_scope()
        if field.nested is not None and callable(value) and not isinstance(value, type):
            value = self._from_function(value)
        elif field.plain and value is not None:
            value = _plain(value)
        return builder._set(field.name, value)

    def _where(self) -> str:
        return f"{self._builder._model.__name__}.builder().{_setter_name(self._field.name)}()"

    def _from_function(self, fn: Callable[[Any], Any]) -> Any:
        nested = self._field.nested
        assert nested is not None
        if self._field.many:
            result = fn(ListBuilder(nested))
            if isinstance(result, ListBuilder):
                return list(result._items)
            if isinstance(result, (list, tuple)):
                return list(result)
            expected = f"a ListBuilder of {nested.__name__} (the one it received, after .add(...))"
        else:
            result = fn(Builder(nested))
            if isinstance(result, Builder):
                return result.build()
            if isinstance(result, (nested, Mapping)):
                return result
            expected = f"a {nested.__name__} builder (the one it received: b.field(...) returns it)"
        raise TypeError(f"the function given to {self._where()} returned {type(result).__name__}; expected {expected}")

    def _nested_scope(self) -> Any:
        builder, field = self._builder, self._field
        if field.nested is None or not builder._in_context:
            where = self._where()
            if field.nested is None:
                raise TypeError(f"{where} needs a value")
            raise TypeError(
                f"{where} needs a value: a {field.nested.__name__}, a dict or a function receiving a "
                f"builder; called with none it opens a nested block only inside "
                f"`with {builder._model.__name__}.new() as b:`"
            )

        def done(child: Builder[Any] | ListBuilder[Any]) -> None:
            if not builder._in_context:
                raise RuntimeError(f"the nested `with` of {self._where()} ended after its parent's block")
            built = list(child._items) if isinstance(child, ListBuilder) else child.build()
            builder._set(field.name, built)

        target: Builder[Any] | ListBuilder[Any] = ListBuilder(field.nested) if field.many else Builder(field.nested)
        return Scope(target, done)


class ListBuilder(Generic[M]):
    """An immutable builder of a list of one model class: ``.add(...)`` returns a new list builder.

    ``add`` takes a ``Kind``, a dict, or a function receiving a ``Kind`` builder. Inside a ``with``
    block (``with pod.spec().containers() as containers:``) it appends in place, and ``add()`` with no
    value opens a nested block: ``with containers.add() as c: c.name("web")``.
    """

    __slots__ = ("_model", "_items", "_in_context")

    _model: type[M]
    _items: list[M]
    _in_context: bool

    def __init__(self, model: type[M], items: list[M] | None = None, *, in_context: bool = False) -> None:
        self._model = _editable(model)
        self._items = [] if items is None else items
        self._in_context = in_context

    @overload
    def add(self, /) -> Scope[Builder[M]]: ...

    @overload
    def add(self, value: M | Mapping[str, Any] | Callable[[Builder[M]], Builder[M] | M], /) -> ListBuilder[M]: ...

    def add(self, value: Any = _UNSET, /) -> Any:
        """Append one item (see the class); returns the list builder (itself inside a ``with``)."""
        if value is _UNSET:
            if not self._in_context:
                raise TypeError(
                    f"{self._model.__name__} list builder: add() needs a value outside a `with` block "
                    "(a model, a dict or a function receiving a builder)"
                )
            return Scope(Builder(self._model), lambda child: self._append(child.build()))
        return self._append(self._item(value))

    def build(self) -> list[M]:
        """A new list of new editable objects."""
        return [item.copy() for item in self._items]

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"{self._model.__name__}.list_builder()" + "".join(f".add({item!r})" for item in self._items)

    def _append(self, item: M) -> ListBuilder[M]:
        if self._in_context:
            self._items.append(item)
            return self
        return ListBuilder(self._model, [*self._items, item])

    def _item(self, value: Any) -> M:
        cls = self._model
        if callable(value) and not isinstance(value, type):
            value = value(Builder(cls))
            if isinstance(value, Builder):
                built: M = value.build()
                return built
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            item: M = model_from_mapping(cls, value, (f"{cls.__name__}.list_builder()", len(self._items)))
            return item
        raise TypeError(
            f"{cls.__name__} list builder: add() takes a {cls.__name__}, a dict or a function "
            f"returning a {cls.__name__} builder, got {type(value).__name__}"
        )


_AnyBuilder: TypeAlias = "Builder[Any]"
_AnyListBuilder: TypeAlias = "ListBuilder[Any]"
_classes = (Builder, ListBuilder)


class BuilderTypes:
    """A base of ``Model``: ``Kind.Builder`` and ``Kind.ListBuilder`` name the builder types (as cloudcoil's).

    So ``def add_pods(resources: APIResource.ListBuilder) -> APIResource.ListBuilder`` type-checks.
    (Declared outside ``Model``'s attrs class body: mypy's attrs plugin cannot take a type alias there.)
    """

    __slots__ = ()

    if TYPE_CHECKING:
        Builder: TypeAlias = _AnyBuilder
        ListBuilder: TypeAlias = _AnyListBuilder
    else:  # the classes themselves, so that isinstance() works
        Builder, ListBuilder = _classes
