"""The informer cache: Cache, informer views, status types and notifications.

A ``Cache`` is given to a ``Config``; entering ``with config:`` starts one reflector thread per
informer, which lists and watches the API server into a thread-safe store. Reads through resource
classes (``Pod.list()``) are served from those stores; ``get_informer()`` subscribes handlers.
"""

from cloudcoil_cache.caching._async import AsyncInformer
from cloudcoil_cache.caching._backoff import Backoff
from cloudcoil_cache.caching._cache import Cache, CacheStatus, after_fork
from cloudcoil_cache.caching._counts import ReadCounts
from cloudcoil_cache.caching._informer import Informer, InformerKey, InformerStatus
from cloudcoil_cache.caching._options import CacheOptions, NamespaceSelector
from cloudcoil_cache.caching._policy import InformerState, Mode
from cloudcoil_cache.caching._reader import CachedResources, CacheReader
from cloudcoil_cache.caching._reflector import Tuning
from cloudcoil_cache.caching._store import Added, Deleted, Notification, Store, Updated, Writer
from cloudcoil_cache.caching._transform import strip_managed_fields
from cloudcoil_cache.caching._views import HandlerHandle, InformerView, StoreView, SyncInformer

__all__ = [
    "Added",
    "AsyncInformer",
    "Backoff",
    "Cache",
    "CacheOptions",
    "CacheReader",
    "CacheStatus",
    "CachedResources",
    "Deleted",
    "HandlerHandle",
    "Informer",
    "InformerKey",
    "InformerState",
    "InformerStatus",
    "InformerView",
    "Mode",
    "NamespaceSelector",
    "Notification",
    "ReadCounts",
    "Store",
    "StoreView",
    "SyncInformer",
    "Tuning",
    "Updated",
    "Writer",
    "after_fork",
    "strip_managed_fields",
]
