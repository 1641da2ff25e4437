"""The classes whose plural and scope come from the API server's discovery (``get_dynamic_resource``
classes, and classes declared without a plural): one per (apiVersion, kind), and what discovery bound."""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, TypeVar

from cloudcoil_cache import _fork

__all__ = ["bind_served", "discovered_classes", "dynamic_class"]

C = TypeVar("C", bound=type)

_dynamic_lock = threading.Lock()
_fork.renew_locks(globals(), _dynamic_lock=threading.Lock)
_dynamic: dict[tuple[str, str], Any] = {}
# The classes whose plural and scope came from discovery (bind_served): Config.refresh_api_resources() reads
# them again. A class that declares its own plural is never here.
_discovered: weakref.WeakSet[type] = weakref.WeakSet()


def dynamic_class(api_version: str, kind: str, make: Callable[[], C]) -> C:
    """The dynamic class of ``kind`` in ``api_version``: the one made before, else ``make()`` (once)."""
    with _dynamic_lock:
        found: C | None = _dynamic.get((api_version, kind))
        if found is None:
            found = _dynamic[(api_version, kind)] = make()
        return found


def bind_served(cls: Any, plural: str, namespaced: bool, subresources: frozenset[str], *, again: bool = False) -> None:
    """Give a dynamic class what discovery found for its kind (its first binding stays; ``again=True``:
    what discovery says now replaces a binding discovery gave, never a plural the class declares)."""
    with _dynamic_lock:
        if cls.plural is None or (again and cls in _discovered):
            _bind_locked(cls, plural, namespaced, subresources)
            _discovered.add(cls)


def discovered_classes() -> list[Any]:
    """The ``get_dynamic_resource`` classes and every class bound from discovery (bound or not yet)."""
    with _dynamic_lock:
        return list({*_dynamic.values(), *_discovered})


def _bind_locked(cls: Any, plural: str, namespaced: bool, subresources: frozenset[str]) -> None:
    type.__setattr__(cls, "subresources", subresources)
    type.__setattr__(cls, "namespaced", namespaced)
    type.__setattr__(cls, "plural", plural)  # last: a plural set means the class is complete
