"""Config (connection + cache + scopes) and the typed ``Api[T]`` of each resource class: its verbs, live or
through the cache."""

from cloudcoil_cache._listwatch import DeleteOptions, ListOptions, WatchOptions
from cloudcoil_cache.client._async_client import AsyncApi, AsyncResourceClient
from cloudcoil_cache.client._config import Config, api_in_scope, current_config
from cloudcoil_cache.client._kubeconfig import Connection
from cloudcoil_cache.client._lists import CoveringList, ObjectList
from cloudcoil_cache.client._resource_client import Api, ResourceClient
from cloudcoil_cache.client._verbs import ASYNC_VERBS, VERBS

__all__ = [
    "ASYNC_VERBS",
    "Api",
    "AsyncApi",
    "AsyncResourceClient",
    "Config",
    "Connection",
    "CoveringList",
    "DeleteOptions",
    "ListOptions",
    "ObjectList",
    "ResourceClient",
    "VERBS",
    "WatchOptions",
    "api_in_scope",
    "current_config",
]
