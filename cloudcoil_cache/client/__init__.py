"""Config (connection + cache + scopes) and the live/cached operations on resource classes."""

from cloudcoil_cache.client import _factory
from cloudcoil_cache.client._async_client import AsyncResourceClient
from cloudcoil_cache.client._config import Config, current_config
from cloudcoil_cache.client._kubeconfig import Connection
from cloudcoil_cache.client._lists import ObjectList
from cloudcoil_cache.client._resource_client import ResourceClient

_factory.install()

__all__ = ["AsyncResourceClient", "Config", "Connection", "ObjectList", "ResourceClient", "current_config"]
