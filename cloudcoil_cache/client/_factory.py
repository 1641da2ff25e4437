"""Installs the client factory that resource classes' API methods and ``Config.client_for`` call
(the models → client and Config → client seams)."""

from __future__ import annotations

from typing import Any

from cloudcoil_cache.client._async_client import AsyncResourceClient
from cloudcoil_cache.client._config import Config, client_in_scope, set_client_maker
from cloudcoil_cache.client._resource_client import ResourceClient
from cloudcoil_cache.models._methods import set_client_factory

__all__ = ["install"]


def _client_of(cls: type, config: Config, cached: bool, is_async: bool) -> Any:
    client: ResourceClient[Any] = ResourceClient(cls, config, cached=cached)
    return AsyncResourceClient(client) if is_async else client


def install() -> None:
    set_client_factory(client_in_scope)  # Pod.get's: a scope's cached clients are kept by the scope
    set_client_maker(_client_of)
