"""``Unstructured``: a resource whose content is a plain dict, and the dynamic classes built on it."""

from __future__ import annotations

import functools
import inspect
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterator

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.client import Api, AsyncApi, Config
from cloudcoil_cache.client._verbs import ASYNC_VERBS, CLASS_VERBS
from cloudcoil_cache.errors import ReadOnlyError
from cloudcoil_cache.models._base import _convert_kwargs, finish_model, model
from cloudcoil_cache.models._dynamic import dynamic_class
from cloudcoil_cache.models.apimachinery import ObjectMeta

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["Unstructured", "dynamic_resource"]

#: The class verbs and their async twins (``async_client`` is checked by ``client``'s override).
_CLASS_VERBS = frozenset(CLASS_VERBS) | frozenset(ASYNC_VERBS)

_TYPE_KEYS = {"apiVersion": "api_version", "api_version": "api_version", "kind": "kind"}


class _TypeMeta:
    """``api_version``/``kind`` of an Unstructured: the class constant, else the object's own data."""

    def __init__(self, wire: str) -> None:
        self.wire = wire

    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return None  # the class Unstructured itself stands for no kind
        extra = obj._extra
        return None if not extra else extra.get(self.wire)


@model
class Unstructured(Resource):
    """A resource of any kind, its content a plain dict: ``obj["spec"]``, ``obj["spec"] = {...}``,
    ``"status" in obj``, ``obj.get("data", {})``, ``obj.raw`` (the wire form).

    ``metadata`` is a typed ``ObjectMeta`` (``obj.name``, ``obj.namespace``, ``obj.metadata.labels``);
    ``obj["metadata"]`` is a snapshot of it as a dict (assign ``obj["metadata"] = {...}`` or change
    ``obj.metadata`` to edit it). Every other top-level key is the object's own value: nested edits
    (``obj["data"]["key"] = "v"``) stick and are sent by the next write. ``apiVersion`` and ``kind``
    come from the data (or, for a class from ``get_dynamic_resource``, from the class).

    API calls work as on typed objects: instance methods (``create()``, ``update()``,
    ``update_status()``, ``remove()``, ``scale()``...) go to the kind named by the object's
    ``apiVersion``/``kind`` (resolved through the API server's discovery), class methods (``get``,
    ``list``, ``watch``, ``delete``) need a class from ``get_dynamic_resource(kind, api_version)``.
    Objects from the cache are read-only (``ReadOnlyError``); ``copy()`` gives an editable one.
    """

    metadata: ObjectMeta | None = None

    api_version = _TypeMeta("apiVersion")
    kind = _TypeMeta("kind")

    # Its objects hold any kind's content (``Unstructured.from_file`` reads a manifest of any kind).
    _cc_any_content: ClassVar[bool] = True
    # True on the classes get_dynamic_resource() makes (plural/namespaced come from discovery).
    _cc_dynamic: ClassVar[bool] = False
    #: Subresources the server lists for the kind (``status``, ``scale``), once discovered.
    subresources: ClassVar[frozenset[str]] = frozenset()

    # ------------------------------------------------------- pydantic names
    def model_dump(self, *, mode: str = "python", by_alias: bool = False, exclude_none: bool = False) -> dict[str, Any]:
        """The wire form as a new dict: the keys as the API server has them, whatever ``by_alias``
        (an Unstructured has no attribute names but ``metadata``)."""
        return self.to_dict()

    # ------------------------------------------------------------ dict access
    @property
    def raw(self) -> dict[str, Any]:
        """The wire form: ``apiVersion``, ``kind``, ``metadata`` (a snapshot) and the object's own
        top-level values (nested edits of those stick; assign ``obj[key]`` to replace one)."""
        out: dict[str, Any] = {}
        for wire in ("apiVersion", "kind"):
            value = self._type_value(wire)
            if value is not None:
                out[wire] = value
        if self.metadata is not None:
            out["metadata"] = self.metadata.to_dict()
        if self._extra:
            out.update((k, v) for k, v in self._extra.items() if k not in ("apiVersion", "kind"))
        return out

    def _type_value(self, wire: str) -> Any:
        return self.api_version if wire == "apiVersion" else self.kind

    def __getitem__(self, key: str) -> Any:
        if key == "metadata":
            if self.metadata is None:
                raise KeyError(key)
            return self.metadata.to_dict()
        if key in ("apiVersion", "kind"):
            value = self._type_value(key)
            if value is None:
                raise KeyError(key)
            return value
        extra = self._extra
        if not extra or key not in extra:
            raise KeyError(key)
        return extra[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._check_editable(key)
        if not isinstance(key, str):
            raise TypeError(f"{type(self).__name__} keys are strings, got {type(key).__name__}")
        if key == "metadata":
            self.metadata = _metadata(type(self), value)
            return
        if key in ("apiVersion", "kind"):
            constant = getattr(type(self), _TYPE_KEYS[key])
            if constant is not None:
                if value != constant:
                    raise ValueError(f"{type(self).__name__}: {key} must be {constant!r}, got {value!r}")
                return
        if self._extra is None:
            self._extra = {}
        self._extra[key] = value

    def __delitem__(self, key: str) -> None:
        self._check_editable(key)
        if key == "metadata" and self.metadata is not None:
            self.metadata = None
            return
        if not self._extra or key not in self._extra:
            raise KeyError(key)
        del self._extra[key]

    def __contains__(self, key: object) -> bool:
        if key == "metadata":
            return self.metadata is not None
        if key in ("apiVersion", "kind"):
            return self._type_value(str(key)) is not None
        extra = self._extra
        return bool(extra) and extra is not None and key in extra

    def _get_key(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def keys(self) -> list[str]:
        return list(self.raw)

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __repr__(self) -> str:
        # Keys only: the values may be a Secret's data.
        keys = sorted(k for k in (self._extra or {}) if k not in ("apiVersion", "kind"))
        return (
            f"{type(self).__name__}(apiVersion={self.api_version!r}, kind={self.kind!r}, "
            f"name={self.name!r}, namespace={self.namespace!r}, keys={keys!r})"
        )

    def _check_editable(self, key: str) -> None:
        if self._sealed:
            raise ReadOnlyError(
                f"{type(self).__name__} is a shared read-only object (from the cache); cannot change "
                f"{key!r}. Call obj.copy() for an editable copy."
            )

    # ----------------------------------------------------------- API routing
    @classmethod
    def client(cls, config: Config | None = None, cached: bool = False) -> Api[Self]:
        _needs_kind(cls)
        return super().client(config, cached)

    @classmethod
    async def async_client(cls, config: Config | None = None, cached: bool = False) -> AsyncApi[Self]:
        _needs_kind(cls)
        return await super().async_client(config, cached)

    def _routed(self) -> Unstructured:
        """This object as an instance of the dynamic class of its own apiVersion/kind (shared values)."""
        if type(self)._cc_dynamic:
            return self
        api_version, kind = self.api_version, self.kind
        if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
            raise ValueError(
                f"{type(self).__name__}: apiVersion and kind are required for an API call, "
                f"got apiVersion={api_version!r}, kind={kind!r}"
            )
        target = dynamic_resource(kind, api_version)
        routed: Unstructured = object.__new__(target)
        object.__setattr__(routed, "metadata", self.metadata)
        extra = {k: v for k, v in (self._extra or {}).items() if k not in ("apiVersion", "kind")}
        object.__setattr__(routed, "_extra", extra or None)
        return routed


def _metadata(cls: type, value: Any) -> ObjectMeta | None:
    if value is None or isinstance(value, ObjectMeta):
        return value
    converted = {"metadata": value}
    _convert_kwargs(cls, converted)
    meta: ObjectMeta = converted["metadata"]
    return meta


def _init(self: Unstructured, **fields: Any) -> None:
    """``Unstructured(apiVersion=..., kind=..., metadata={...}, spec={...}, ...)``: any top-level keys.

    ``metadata`` may be an ``ObjectMeta`` or a dict (attribute or wire names); other values are kept
    as given (not copied).
    """
    object.__setattr__(self, "metadata", None)
    object.__setattr__(self, "_extra", None)
    for key, value in fields.items():
        self[_wire_key(key)] = value


def _wire_key(key: str) -> str:
    return "apiVersion" if key == "api_version" else key


def _needs_kind(cls: type[Unstructured]) -> None:
    if cls.api_version is None or cls.kind is None:
        raise TypeError(
            f"{cls.__name__} stands for no kind: use get_dynamic_resource(kind, api_version) for class "
            "methods (get, list, watch, delete), or call the method on an object with apiVersion and kind"
        )


def _route(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(method):

        async def routed_async(self: Unstructured, *args: Any, **kwargs: Any) -> Any:
            return await method(self._routed(), *args, **kwargs)

        return functools.wraps(method)(routed_async)

    def routed(self: Unstructured, *args: Any, **kwargs: Any) -> Any:
        return method(self._routed(), *args, **kwargs)

    return functools.wraps(method)(routed)


def _kind_checked(method: classmethod[Any, Any, Any]) -> classmethod[Any, Any, Any]:
    """A class verb (``get``, ``list``...) that first says what to use on a class of no kind."""
    func = method.__func__

    def checked(cls: type[Unstructured], *args: Any, **kwargs: Any) -> Any:
        _needs_kind(cls)
        return func(cls, *args, **kwargs)

    return classmethod(functools.wraps(func)(checked))


def _install() -> None:
    type.__setattr__(Unstructured, "__init__", _init)
    # Every instance method of the API (create, update, save, wait_for...), sent to the object's kind;
    # every class verb (get, list, watch, delete...), checked for a kind first.
    for name, value in vars(Resource).items():
        if not name.startswith("_") and inspect.isfunction(value):
            type.__setattr__(Unstructured, name, _route(name, value))
        elif name in _CLASS_VERBS and isinstance(value, classmethod):
            type.__setattr__(Unstructured, name, _kind_checked(value))


class _ClassOrInstance:
    """``Kind.get(name, namespace)`` on the class (the API read), ``obj.get(key, default)`` on an object."""

    def __init__(self, for_class: Any, for_instance: Callable[..., Any]) -> None:
        self.for_class = for_class
        self.for_instance = for_instance
        self.__doc__ = (
            f"On the class: {inspect.getdoc(for_class.__func__) or 'the API read'} "
            "On an object: ``obj[key]``, or ``default`` when it has no such key."
        )

    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return self.for_class.__get__(None, owner)
        return self.for_instance.__get__(obj, owner)


_install()
type.__setattr__(Unstructured, "get", _ClassOrInstance(_kind_checked(vars(Resource)["get"]), Unstructured._get_key))


def dynamic_resource(kind: str, api_version: str) -> type[Unstructured]:
    """The ``Unstructured`` class of ``kind`` in ``api_version`` (the same class on every call).

    Made without any request: its ``plural``, scope and ``subresources`` are filled in from the
    API server's discovery by the client at first use (``bind_served``).

    Raises:
        ValueError: ``kind`` or ``api_version`` is not a non-empty string without spaces.
    """
    for what, value in (("kind", kind), ("api_version", api_version)):
        if not isinstance(value, str) or not value or value != value.strip() or " " in value:
            raise ValueError(f"get_dynamic_resource: {what} must be a non-empty string without spaces, got {value!r}")

    def make() -> type[Unstructured]:
        group, _, version = api_version.rpartition("/")
        metaclass: Any = type(Unstructured)
        new: type[Unstructured] = metaclass(
            f"Dynamic{kind}",
            (Unstructured,),
            {
                "__slots__": (),
                "__module__": __name__,
                "__qualname__": f"Dynamic{kind}",
                "__doc__": f"{kind} ({api_version}) as an Unstructured resource (get_dynamic_resource).",
                "api_version": api_version,
                "kind": kind,
                "group": group,
                "version": version,
                "plural": None,
                "namespaced": None,
                "_cc_dynamic": True,
            },
        )
        finish_model(new)
        return new

    return dynamic_class(api_version, kind, make)
