"""The event loop thread of a controller's coroutine reconcilers: ``aio._loop.LoopThread`` (shared with admission)."""

from cloudcoil_cache.aio._loop import LoopThread

__all__ = ["LoopThread"]
