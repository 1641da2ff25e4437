"""``Quantity``: a Kubernetes resource quantity ("500m", "1Gi"), a string as on the wire."""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, Iterator

__all__ = ["Quantity", "QuantityBuilder"]

# The serialisation grammar of k8s.io/apimachinery/pkg/api/resource: a signed decimal number and an
# optional suffix (binary SI, decimal SI or a decimal exponent).
_GRAMMAR = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+|[KMGTPE]i|[mkMGTPE])?")


class Quantity(str):
    """A resource quantity (``Quantity("500m")``): a ``str`` that checks the Kubernetes grammar.

    It is what cloudcoil's ``apimachinery.Quantity`` is (a root model of a string): ``.root`` is its
    text, ``Quantity.new()`` / ``Quantity.builder()`` build one. Being a ``str``, it fits every quantity
    field of the models (typed ``str``, as the wire carries them) and serialises as its text.
    Equality is that of the text: ``Quantity("1") == "1"``, but ``"1000m" != "1"``.
    """

    __slots__ = ()

    def __new__(cls, root: str | int | float) -> Quantity:
        if isinstance(root, bool) or not isinstance(root, (str, int, float)):
            raise TypeError(f"a Quantity is a string such as '500m' or '1Gi', got {type(root).__name__}")
        text = root if isinstance(root, str) else str(root)
        if not _GRAMMAR.fullmatch(text):
            raise ValueError(f"not a Kubernetes quantity (e.g. '500m', '1.5', '1Gi', '1e3'): {text!r:.60}")
        return super().__new__(cls, text)

    @property
    def root(self) -> str:
        """The text of the quantity, as a plain ``str``."""
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"Quantity({str.__repr__(self)})"

    def __reduce__(self) -> Any:
        return (Quantity, (self.root,))

    @classmethod
    def model_validate(cls, value: Any) -> Quantity:
        """A ``Quantity`` from its text (or a ``Quantity``); pydantic's name."""
        return value if isinstance(value, Quantity) else cls(value)

    def model_dump(self, **_: Any) -> str:
        """The wire form: the text."""
        return self.root

    def model_dump_json(self, **_: Any) -> str:
        """The wire form as JSON: the quoted text."""
        return json.dumps(self.root)

    @classmethod
    def builder(cls) -> QuantityBuilder:
        """A fluent builder: ``Quantity.builder().root("1").build()``."""
        return QuantityBuilder()

    @classmethod
    @contextlib.contextmanager
    def new(cls) -> Iterator[QuantityBuilder]:
        """``with Quantity.new() as q: q.root("1")``, then ``q.build()``."""
        builder = QuantityBuilder(in_context=True)
        try:
            yield builder
        finally:
            builder._in_context = False


class QuantityBuilder:
    """The builder of a ``Quantity``: ``root(text)`` (or calling it) sets the text, ``build()`` checks it.

    Immutable (each call returns a new builder) except inside ``with Quantity.new() as q:``.
    """

    __slots__ = ("_value", "_in_context")

    def __init__(self, value: str | int | float | None = None, *, in_context: bool = False) -> None:
        self._value = value
        self._in_context = in_context

    def root(self, value: str | int | float, /) -> QuantityBuilder:
        if self._in_context:
            self._value = value
            return self
        return QuantityBuilder(value)

    __call__ = root

    def build(self) -> Quantity:
        if self._value is None:
            raise TypeError("Quantity builder: no value set (call .root('500m') first)")
        return Quantity(self._value)

    def __repr__(self) -> str:
        return f"Quantity.builder().root({self._value!r})"
