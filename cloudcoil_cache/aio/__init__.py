"""Asyncio adapters over the threaded core (re-exported here; no second implementation).

``AsyncInformer`` is ``config.cache.get_informer(Kind, sync=False)``; ``AsyncResourceClient`` is
``await Kind.async_client(config)``. Both hand blocking work to the library's executor and read
memory on the event loop directly.
"""

from cloudcoil_cache._threads import run_blocking
from cloudcoil_cache.caching._async import AsyncInformer
from cloudcoil_cache.client._async_client import AsyncResourceClient

__all__ = ["AsyncInformer", "AsyncResourceClient", "run_blocking"]
