"""What an ``Api`` needs of the ``Config`` it goes through (a protocol: ``Config`` sits above the ``Api``,
whose objects it makes in ``client_for``)."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol

from cloudcoil_cache.caching import Cache

__all__ = ["ApiConfig"]


class ApiConfig(Protocol):
    """The transport, the cache and the default namespace of a ``Config``."""

    @property
    def transport(self) -> Any: ...

    @property
    def server(self) -> str: ...

    @property
    def namespace(self) -> str: ...

    @property
    def cache(self) -> Cache | None: ...

    #: labels a ``create`` adds to what it sends (``Config.create_labels``)
    create_labels: Callable[[Any], Mapping[str, str] | None] | None

    async def async_initialize(self) -> Any: ...
