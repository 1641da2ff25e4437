"""Per-class structure/unstructure/copy functions generated from type hints (the sync hot path)."""

from __future__ import annotations

import datetime
import itertools
import linecache
import types
import typing
from collections.abc import Mapping
from typing import Any, Callable, Union

import attrs

from cloudcoil_cache.errors import DecodeError
from cloudcoil_cache.models import _time
from cloudcoil_cache.models._fields import editable_class, field_hints, is_model_class, is_resource_class, wire_name
from cloudcoil_cache.models._frozen import FrozenDict, FrozenList, freeze_json, rebind, thaw_json

__all__ = [
    "build",
    "build_init",
    "format_path",
    "init_by_wire_names",
    "init_converters",
    "model_from_mapping",
    "set_type_meta",
    "shape_of",
    "wire_keywords",
    "wire_name",
]

# Shapes: ("scalar",), ("json",), ("time",), ("micro",), ("model", cls), ("list", inner),
# ("dict", inner)
Shape = tuple[Any, ...]

_SCALARS = (str, int, float, bool)
_counter = itertools.count()


def shape_of(hint: Any) -> Shape:
    """The conversion shape of a field type hint."""
    origin = typing.get_origin(hint)
    if origin is Union or isinstance(hint, types.UnionType):
        return _union_shape(hint)
    if origin is typing.Annotated:
        return _annotated_shape(hint)
    if hint in _SCALARS or origin is typing.Literal:
        return ("scalar",)
    if hint is Any or hint is object or hint is dict or hint is list:
        return ("json",)
    if hint is datetime.datetime:
        return ("time",)
    if origin is list:
        (inner,) = typing.get_args(hint) or (Any,)
        inner_shape = shape_of(inner)
        return ("json",) if inner_shape == ("json",) else ("list", inner_shape)
    if origin is dict:
        type_args = typing.get_args(hint)
        inner_shape = shape_of(type_args[1]) if type_args else ("json",)
        return ("json",) if inner_shape == ("json",) else ("dict", inner_shape)
    if is_model_class(hint):
        return ("model", hint)
    raise TypeError(f"no wire conversion for type hint {hint!r}")


def _union_shape(hint: Any) -> Shape:
    """``X | None`` is shaped as X; a union of scalars (IntOrString) as a scalar; any other as JSON."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if len(args) == 1:
        return shape_of(args[0])
    if all(a in _SCALARS for a in args):
        return ("scalar",)  # IntOrString
    return ("json",)


def _annotated_shape(hint: Any) -> Shape:
    """``Annotated[str, "k8s:Time"]`` (or MicroTime) is a time; other annotations are shaped as their base."""
    base, *meta = typing.get_args(hint)
    if "k8s:Time" in meta:
        return ("time",)
    if "k8s:MicroTime" in meta:
        return ("micro",)
    return shape_of(base)


class _Emitter:
    """Builds one Python expression per shape and operation, collecting the globals it needs."""

    def __init__(self, op: str, lookup: Callable[[type, str], Callable[..., Any]]) -> None:
        self.op = op  # "structure", "structure_sealed", "unstructure", "copy", "copy_sealed"
        self.lookup = lookup
        self.globals: dict[str, Any] = {}
        self.later: list[tuple[str, type]] = []

    @property
    def sealed(self) -> bool:
        return self.op.endswith("sealed")

    def expr(self, shape: Shape, var: str, depth: int = 0) -> str | None:
        """Expression converting ``var``; None when the value passes through unchanged."""
        kind = shape[0]
        if kind == "scalar":
            return None
        if kind in ("time", "micro"):
            if self.op == "structure" or self.op == "structure_sealed":
                fn = "_ptime" if kind == "time" else "_pmicro"
            elif self.op == "unstructure":
                fn = "_ftime" if kind == "time" else "_fmicro"
            else:
                return None  # datetimes are immutable: share them
            return f"{fn}({var})"
        if kind == "json":
            return f"{'_freeze' if self.sealed else '_thaw'}({var})"
        if kind == "model":
            return f"{self.model_function(shape[1])}({var})"
        if kind == "list" and self.sealed and shape[1][0] == "model":
            return f"_FL(map({self.model_function(shape[1][1])}, {var}))"  # no intermediate list
        x = f"x{depth}"
        inner = self.expr(shape[1], x, depth + 1)
        if kind == "list":
            if inner is None:
                return f"_FL({var})" if self.sealed else f"list({var})"
            comp = f"[{inner} for {x} in {var}]"
        else:
            if inner is None:
                return f"_FD({var})" if self.sealed else f"dict({var})"
            comp = f"{{k{depth}: {inner} for k{depth}, {x} in {var}.items()}}"
        return f"_{'FL' if kind == 'list' else 'FD'}({comp})" if self.sealed else comp

    def model_function(self, cls: type) -> str:
        """Global name under which the generated code calls ``op`` of model ``cls``."""
        name = f"_m{len(self.later)}"
        self.later.append((name, cls))
        return name

    def compile(self, name: str, source: str, constants: dict[str, Any]) -> Callable[..., Any]:
        """Compile ``source`` (defining function ``name``) with the helpers and ``constants``."""
        self.globals = dict(_BASE_GLOBALS, **constants)
        filename = f"<cloudcoil_cache generated {name} #{next(_counter)}>"
        code = compile(source, filename, "exec")
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(code, self.globals)  # noqa: S102 - generated from type hints, as cattrs.gen does
        self._bind_lazily()
        fn: Callable[..., Any] = self.globals[name]
        return fn

    def _bind_lazily(self) -> None:
        """Bind each nested model function on its first call.

        Looking nested functions up while generating would let another thread reach a function
        whose own nested names are not bound yet (and recursion through JSONSchemaProps would not
        terminate); a stub that replaces itself on first use avoids both.
        """
        for name, cls in self.later:
            self.globals[name] = _first_call(self.globals, name, cls, self.lookup, self.op)


def _first_call(
    namespace: dict[str, Any],
    name: str,
    cls: type,
    lookup: Callable[[type, str], Callable[..., Any]],
    op: str,
) -> Callable[..., Any]:
    def first_call(*args: Any) -> Any:
        fn = lookup(cls, op)
        rebind(namespace, name, fn)  # later calls go straight to the real function
        return fn(*args)

    return first_call


_BASE_GLOBALS: dict[str, Any] = {
    "_new": object.__new__,
    "_FL": FrozenList,
    "_FD": FrozenDict,
    "_freeze": freeze_json,
    "_thaw": thaw_json,
    "_ptime": _time.parse_time,
    "_pmicro": _time.parse_micro_time,
    "_ftime": _time.format_time,
    "_fmicro": _time.format_micro_time,
}


def _fields(cls: type) -> list[tuple[str, str, Shape]]:
    hints = field_hints(cls)
    out = []
    for a in attrs.fields(cls):
        if a.name == "_extra":
            continue
        out.append((a.name, wire_name(cls, a.name), shape_of(hints[a.name])))
    return out


def _type_check(var: str, shape: Shape, attr: str) -> str | None:
    kind = shape[0]
    if kind == "list":
        return f"if {var}.__class__ is not list and not isinstance({var}, list): _bad({attr!r}, 'a list', {var})"
    if kind in ("dict", "model"):
        return f"if {var}.__class__ is not dict and not isinstance({var}, dict): _bad({attr!r}, 'an object', {var})"
    if kind in ("time", "micro"):
        return f"if {var}.__class__ is not str: _bad({attr!r}, 'a date-time string', {var})"
    return None


#: Most distinct sets of null-valued fields whose extras dict one class shares (see ``_extras``).
_SHARED_NULLS_MAX = 64


def _gen_structure(em: _Emitter, cls: type, fields: list[tuple[str, str, Shape]]) -> Callable[..., Any]:
    is_resource = is_resource_class(cls)
    source = _structure_source(em, is_resource, fields)
    editable: Any = editable_class(cls)
    api_version = editable.api_version if is_resource else None
    kind = editable.kind if is_resource else None

    def _not_object(d: Any) -> None:
        raise TypeError(f"{editable.__name__} expects a JSON object (dict), got {type(d).__name__}")

    def _bad(attr: str, what: str, v: Any) -> None:
        # The value itself is never shown: it could be a Secret's data.
        raise TypeError(f"{editable.__name__}.{attr} expects {what}, got {type(v).__name__}")

    return em.compile(
        "structure",
        source,
        {
            "CLS": editable,
            "TWIN": editable.__sealed_class__,
            "API_VERSION": api_version,
            "KIND": kind,
            "_extras": _extras_function(frozenset(w for _, w, _ in fields), is_resource, api_version, kind, em.sealed),
            "_not_object": _not_object,
            "_bad": _bad,
        },
    )


def _structure_source(em: _Emitter, is_resource: bool, fields: list[tuple[str, str, Shape]]) -> str:
    """The source of ``structure(d)``: one check-and-convert block per field, then the extras."""
    lines = [
        "def structure(d, _t=None):",
        "    if d.__class__ is not dict and not isinstance(d, dict):",
        "        _not_object(d)",
        "    g = d.get",
        "    o = _new(CLS)",
        "    n = 0",
    ]
    if is_resource:
        lines += [
            "    if g('apiVersion') == API_VERSION: n += 1",
            "    if g('kind') == KIND: n += 1",
        ]
    for attr, wire, shape in fields:
        conv = em.expr(shape, "v")
        check = _type_check("v", shape, attr)
        lines.append(f"    v = g({wire!r})")
        lines.append("    if v is not None:")
        lines.append("        n += 1")
        if check:
            lines.append(f"        {check}")
        if conv:
            lines.append(f"        v = {conv}")
        lines.append(f"    o.{attr} = v")
    lines += [
        "    o._extra = None if n == len(d) else _extras(d)",
    ]
    if em.sealed:
        lines.append("    o.__class__ = TWIN")
    lines.append("    return o")
    return "\n".join(lines) + "\n"


def _extras_function(
    known: frozenset[str], is_resource: bool, api_version: str | None, kind: str | None, sealed: bool
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """``_extras(d)``: the keys of ``d`` no field took (unknown ones, and explicit nulls), kept on ``_extra``."""
    # Sealed objects whose only extras are explicit nulls of their own fields (every pod
    # condition's ``"lastProbeTime": null``, a template's ``"creationTimestamp": null``) share one
    # read-only dict per set of such keys: ~180 bytes per object otherwise (~0.9 KB per pod).
    nulls: dict[tuple[str, ...], FrozenDict] = {}

    superset = known.issuperset

    def _extras(d: dict[str, Any]) -> dict[str, Any]:
        if sealed and not is_resource and superset(d):
            # the usual case (a pod condition's ``"lastProbeTime": null``): only known keys, so the
            # extras are the explicit nulls; their names found without the loop below
            names = tuple([k for k, v in d.items() if v is None])
            same = nulls.get(names)
            if same is not None:
                return same
        keep = freeze_json if sealed else thaw_json
        out: dict[str, Any] = {}
        only_known_nulls = True
        for k, v in d.items():
            if k in known and v is not None:
                continue
            if is_resource and ((k == "apiVersion" and v == api_version) or (k == "kind" and v == kind)):
                continue
            if v is None:
                out[k] = None
                only_known_nulls = only_known_nulls and k in known
            else:
                out[k] = keep(v)
                only_known_nulls = False
        if not sealed:
            return out
        if only_known_nulls:
            names = tuple(out)
            same = nulls.get(names)
            if same is None:
                same = FrozenDict(out)
                if len(nulls) < _SHARED_NULLS_MAX:  # subsets of the class's fields: a handful in practice
                    nulls[names] = same
            return same
        return FrozenDict(out)

    return _extras


def _gen_unstructure(em: _Emitter, cls: type, fields: list[tuple[str, str, Shape]]) -> Callable[..., Any]:
    lines = ["def unstructure(o):", "    x = o._extra"]
    if is_resource_class(cls):
        editable: Any = editable_class(cls)
        head = {"apiVersion": editable.api_version, "kind": editable.kind}
        head = {k: v for k, v in head.items() if v is not None}  # the undeclared GenericResource
        lines.append(f"    r = {head!r}")
        lines.append("    if x: r.update(_thaw(x))")
    else:
        lines.append("    r = {} if not x else _thaw(x)")
    for attr, wire, shape in fields:
        conv = em.expr(shape, "v")
        lines.append(f"    v = o.{attr}")
        lines.append("    if v is not None:")
        lines.append(f"        r[{wire!r}] = {conv or 'v'}")
    lines.append("    return r")
    return em.compile("unstructure", "\n".join(lines) + "\n", {})


def _gen_copy(em: _Emitter, cls: type, fields: list[tuple[str, str, Shape]]) -> Callable[..., Any]:
    sealed = em.sealed
    lines = ["def copy(o):", "    c = _new(CLS)", "    x = o._extra"]
    lines.append(f"    c._extra = None if x is None else {'_freeze' if sealed else '_thaw'}(x)")
    for attr, _wire, shape in fields:
        conv = em.expr(shape, "v")
        if conv is None:
            lines.append(f"    c.{attr} = o.{attr}")
        else:
            lines.append(f"    v = o.{attr}")
            lines.append(f"    c.{attr} = None if v is None else {conv}")
    if sealed:
        lines.append("    c.__class__ = TWIN")
    lines.append("    return c")
    editable: Any = editable_class(cls)
    return em.compile("copy", "\n".join(lines) + "\n", {"CLS": editable, "TWIN": editable.__sealed_class__})


def build(cls: type, op: str, lookup: Callable[[type, str], Callable[..., Any]]) -> Callable[..., Any]:
    """Generate function ``op`` of editable class ``cls``; nested models go through ``lookup``."""
    if op not in _GENERATORS:
        raise ValueError(f"unknown operation {op!r}")
    em = _Emitter(op, lookup)
    return _GENERATORS[op](em, cls, _fields(cls))


_GENERATORS: dict[str, Callable[[_Emitter, type, list[tuple[str, str, Shape]]], Callable[..., Any]]] = {
    "structure": _gen_structure,
    "structure_sealed": _gen_structure,
    "unstructure": _gen_unstructure,
    "copy": _gen_copy,
    "copy_sealed": _gen_copy,
}


# ------------------------------------------------------------------ keyword construction
# ``Pod(metadata=dict(name="a"), spec=dict(containers=[dict(name="c")]))``: values of fields whose
# type involves a model (or a Time) are converted when an object is built with keywords. Decoding
# (``from_dict``) never goes through ``__init__``, so none of this is on the decode hot path.

#: A field path, built lazily as a linked tuple ``(parent, segment)`` and formatted only on error.
Path = Any
InitConverter = Callable[[Any, Path], Any]


def format_path(path: Path) -> str:
    """``((("Pod", ".spec"), ".containers"), 0)`` → ``"Pod.spec.containers[0]"``.

    A segment is an attribute (".name"), a list index (int) or a dict key (a 1-tuple).
    """
    parts: list[str] = []
    while isinstance(path, tuple):
        path, segment = path
        if isinstance(segment, int):
            segment = f"[{segment}]"
        elif isinstance(segment, tuple):
            segment = f"[{segment[0]!r}]"
        parts.append(segment)
    parts.append(str(path))
    return "".join(reversed(parts))


def init_converters(cls: type) -> dict[str, InitConverter]:
    """Per-field functions ``(value, path) -> value`` for keyword construction of ``cls``.

    Only fields whose type involves a model or a Time get one; cached on the class.
    """
    table: dict[str, InitConverter] | None = cls.__dict__.get("_cc_init_conv")
    if table is None:
        hints = field_hints(cls)
        table = {}
        for a in attrs.fields(cls):
            if a.name == "_extra":
                continue
            fn = _init_converter(shape_of(hints[a.name]))
            if fn is None and cls.__dict__.get("_cc_checked"):
                fn = _plain_checker(hints[a.name])
            if fn is not None:
                table[a.name] = fn
        type.__setattr__(cls, "_cc_init_conv", table)
    return table


_PLAIN: dict[Any, tuple[type, ...]] = {
    str: (str,),
    int: (int,),
    float: (int, float),
    bool: (bool,),
    dict: (dict,),
    list: (list, tuple),
}


def _plain_types(hint: Any) -> tuple[type, ...] | None:
    """The classes a value of a plain field type may have, or None when anything goes (or unknown)."""
    origin = typing.get_origin(hint)
    if origin is Union or isinstance(hint, types.UnionType):
        found: list[type] = []
        for arg in typing.get_args(hint):
            if arg is type(None):
                continue
            inner = _plain_types(arg)
            if inner is None:
                return None
            found.extend(inner)
        return tuple(found) or None
    if origin is typing.Annotated:
        return _plain_types(typing.get_args(hint)[0])
    return _PLAIN.get(origin if origin in (dict, list) else hint)


def _plain_checker(hint: Any) -> InitConverter | None:
    """For a user's own model (``_cc_checked``): keyword values of plain-typed fields are checked, as
    pydantic checks them (``spec: dict`` refuses a string); generated models leave that to the server."""
    allowed = _plain_types(hint)
    if allowed is None:
        return None
    expected = " or ".join(t.__name__ for t in allowed)

    def check(value: Any, path: Path) -> Any:
        if isinstance(value, allowed):
            return value
        raise DecodeError(f"{format_path(path)}: expected {expected}, got {_type_name(value)}")

    return check


def _init_names(cls: type) -> dict[str, str]:
    """Keys a dict may use for a field of ``cls``: the attribute name and the wire name."""
    names: dict[str, str] | None = cls.__dict__.get("_cc_init_names")
    if names is None:
        names = {}
        for a in attrs.fields(cls):
            if a.name != "_extra":
                names[wire_name(cls, a.name)] = a.name
                names[a.name] = a.name
        type.__setattr__(cls, "_cc_init_names", names)
    return names


def _type_name(v: Any) -> str:
    return type(v).__name__


def model_from_mapping(cls: type, data: Any, path: Path) -> Any:
    """Build ``cls`` with keywords from a dict keyed by attribute or wire (camelCase) names."""
    names = _init_names(cls)
    convs = init_converters(cls)
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        attr = names.get(key) if isinstance(key, str) else None
        if attr is None:
            if is_resource_class(cls) and key in ("apiVersion", "api_version", "kind"):
                attr = "api_version" if key != "kind" else "kind"
            else:
                raise TypeError(f"{format_path(path)}: {cls.__name__} has no field {key!r}")
        elif value is not None:
            conv = convs.get(attr)
            if conv is not None:
                value = conv(value, (path, "." + attr))
        if attr in kwargs:
            raise TypeError(f"{format_path(path)}: field {attr!r} given twice (as {attr!r} and as its wire name)")
        kwargs[attr] = value
    return cls(**kwargs)


def _init_converter(shape: Shape) -> InitConverter | None:
    kind = shape[0]
    if kind == "model":
        return _model_converter(shape[1])
    if kind in ("time", "micro"):
        return _time_converter(kind)
    if kind in ("list", "dict"):
        inner = _init_converter(shape[1])
        if inner is None:
            return None
        return _list_converter(inner, shape[1]) if kind == "list" else _dict_converter(inner, shape[1])
    return None


def _describe(shape: Shape) -> str:
    kind = shape[0]
    if kind == "model":
        return f"{shape[1].__name__} or dict"
    if kind in ("time", "micro"):
        return "datetime or RFC 3339 string"
    if kind == "list":
        return f"a list of {_describe(shape[1])}"
    if kind == "dict":
        return f"a dict of {_describe(shape[1])}"
    return "a JSON value"


def _model_converter(target: type) -> InitConverter:
    def convert_model(value: Any, path: Path) -> Any:
        if isinstance(value, target):
            return value
        if value.__class__ is dict or isinstance(value, Mapping):
            return model_from_mapping(target, value, path)
        raise TypeError(f"{format_path(path)}: expected {target.__name__} or dict, got {_type_name(value)}")

    return convert_model


def _time_converter(kind: str) -> InitConverter:
    parse = _time.parse_time if kind == "time" else _time.parse_micro_time

    def convert_time(value: Any, path: Path) -> Any:
        if isinstance(value, datetime.datetime):
            return value
        if isinstance(value, str):
            try:
                return parse(value)
            except ValueError as exc:
                raise ValueError(f"{format_path(path)}: {exc}") from None
        raise TypeError(f"{format_path(path)}: expected a datetime or an RFC 3339 string, got {_type_name(value)}")

    return convert_time


def _list_converter(inner: InitConverter, inner_shape: Shape) -> InitConverter:
    def convert_list(value: Any, path: Path) -> Any:
        if value.__class__ is not list and not isinstance(value, (list, tuple)):
            raise TypeError(
                f"{format_path(path)}: expected a list of {_describe(inner_shape)}, got {_type_name(value)}"
            )
        out = [x if x is None else inner(x, (path, i)) for i, x in enumerate(value)]
        if value.__class__ is list and all(a is b for a, b in zip(out, value)):
            return value  # nothing converted: keep the caller's list
        return out

    return convert_list


def _dict_converter(inner: InitConverter, inner_shape: Shape) -> InitConverter:
    def convert_dict(value: Any, path: Path) -> Any:
        if value.__class__ is not dict and not isinstance(value, Mapping):
            raise TypeError(
                f"{format_path(path)}: expected a dict of {_describe(inner_shape)}, got {_type_name(value)}"
            )
        out = {k: x if x is None else inner(x, (path, (k,))) for k, x in value.items()}
        if value.__class__ is dict and all(out[k] is x for k, x in value.items()):
            return value
        return out

    return convert_dict


#: The class of ``attrs.Factory(...)`` defaults (``attrs.Factory`` is typed as a function).
_FACTORY: type = type(attrs.Factory(list))


def build_init(cls: type) -> Callable[..., None] | None:
    """A generated keyword ``__init__`` for ``cls`` that converts dicts to models inline.

    Fields whose type involves no model/Time are assigned as attrs would; the others are converted
    only when given a value of another class. Resources also take ``api_version``/``kind``
    (see ``set_type_meta``). None when a field is not a plain keyword field with a plain
    default (then the generic wrapper is used).
    """
    fields = [a for a in attrs.fields(cls) if a.name != "_extra"]
    extra_default = attrs.fields_dict(cls)["_extra"].default
    for a in fields:
        if (
            not a.init
            or a.converter is not None
            or a.validator is not None
            or a.alias != a.name
            or isinstance(a.default, _FACTORY)
            or a.default is attrs.NOTHING
        ):
            return None
    if extra_default is not None:
        return None
    hints = field_hints(cls)
    convs = init_converters(cls)
    constants: dict[str, Any] = {"_type_meta": set_type_meta}
    params = []
    body = ["    self._extra = None"]
    for i, a in enumerate(fields):
        constants[f"_d{i}"] = a.default
        params.append(f"{a.name}=_d{i}")
        conv = convs.get(a.name)
        if conv is not None:
            constants[f"_c{i}"] = conv
            shape = shape_of(hints[a.name])
            guard = f"{a.name} is not None"
            if shape[0] == "model":
                constants[f"_t{i}"] = shape[1]
                guard += f" and {a.name}.__class__ is not _t{i}"
            elif shape[0] in ("time", "micro"):
                guard += f" and {a.name}.__class__ is not _datetime"
            body.append(f"    if {guard}:")
            body.append(f"        {a.name} = _c{i}({a.name}, (self.__class__.__name__, {'.' + a.name!r}))")
        body.append(f"    self.{a.name} = {a.name}")
    if is_resource_class(cls):
        params += ["api_version=None", "kind=None"]
        body.append("    if api_version is not None or kind is not None:")
        body.append("        _type_meta(self, api_version, kind)")
    constants["_datetime"] = datetime.datetime
    constants["_by_wire"] = init_by_wire_names
    names = [p.split("=", 1)[0] for p in params]
    body.insert(0, "    if _kw:\n        return _by_wire(self, _kw, {" + ", ".join(f"{n!r}: {n}" for n in names) + "})")
    source = "def __init__(self, *, " + ", ".join(params + ["**_kw"]) + "):\n" + "\n".join(body) + "\n"
    namespace = dict(constants)
    filename = f"<cloudcoil_cache generated {cls.__qualname__}.__init__ #{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - generated from attrs fields
    init: Callable[..., None] = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = f"Keyword construction of {cls.__name__} (dict values of model fields are converted)."
    return init


def wire_keywords(cls: type, given: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``given`` (attribute-named keywords) with ``extra``'s wire (camelCase) names renamed in.

    ``Pod(apiVersion="v1", metadata=...)`` and ``ListMeta(resourceVersion="1")`` work as they do
    with pydantic's aliases; an unknown name, or one field named twice, is a ``TypeError``.
    """
    names = _init_names(cls)
    fields = attrs.fields_dict(cls)
    resource = is_resource_class(cls)
    out = dict(given)
    for key, value in extra.items():
        attr = names.get(key)
        if attr is None and resource and key in ("apiVersion", "api_version", "kind"):
            attr = "api_version" if key != "kind" else "kind"
        if attr is None:
            raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {key!r}")
        field = fields.get(attr)
        current = out.get(attr)
        if current is not None and (field is None or current is not field.default):
            raise TypeError(f"{cls.__name__}() got field {attr!r} twice (as {attr!r} and as {key!r})")
        out[attr] = value
    return out


def init_by_wire_names(obj: Any, extra: dict[str, Any], given: dict[str, Any]) -> None:
    """The generated ``__init__``'s path for keywords that are wire names (see ``wire_keywords``)."""
    cls = type(obj)
    cls.__init__(obj, **wire_keywords(cls, given, extra))


def set_type_meta(obj: Any, api_version: str | None, kind: str | None) -> None:
    """``Pod(api_version="v1", kind="Pod")``: values equal to the class constants are no-ops;
    others are kept as unknown fields and written by ``to_dict()``."""
    cls = type(obj)
    extra = {}
    if api_version is not None and api_version != cls.api_version:
        extra["apiVersion"] = api_version
    if kind is not None and kind != cls.kind:
        extra["kind"] = kind
    if extra:
        obj._extra = extra
