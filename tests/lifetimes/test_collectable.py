"""Closed Configs and their caches are freed, with the library's GC freeze on (the default Tuning)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from typing import Any

from cluster_support import FAST, seed

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod
from cloudcoil_cache.testing import FakeAPIServer

#: Closed Configs per test. Before the fix every closed Config stayed alive (the GC freeze kept it), so
#: any round shows a leak; 20 rounds of sync, freeze and close is still many freezes over closed scopes.
ROUNDS = 20


def on_add(pod: Pod) -> None:
    """A handler of the application's (module level: it holds no Config)."""


def _cached(kubeconfig: str) -> Config:
    return Config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod], tuning=FAST))


def _refs(config: Config) -> list[weakref.ref[Any]]:
    cache = config.cache
    assert cache is not None
    return [weakref.ref(config), weakref.ref(cache), *(weakref.ref(i) for i in cache.informers())]


def _use_sync(kubeconfig: str) -> list[weakref.ref[Any]]:
    config = _cached(kubeconfig)
    with config:
        assert len(Pod.list()) == 3
        view = config.cache.get_informer(Pod)  # type: ignore[union-attr]
        view.on_add(on_add)
        view.on_update(lambda old, new: (config, view))  # holds its Config and view: a cycle until close()
        config.cache.get_informer(ConfigMap)  # type: ignore[union-attr]  # a lazy informer too
    config.close()
    return _refs(config)


async def _use_async(kubeconfig: str) -> list[weakref.ref[Any]]:
    config = _cached(kubeconfig)
    async with config:
        assert len(await Pod.async_list()) == 3
        view = config.cache.get_informer(Pod, sync=False)  # type: ignore[union-attr]
        view.on_add(on_add)

        async def updated(old: Pod, new: Pod) -> None:
            print(config, view)  # holds its Config and view: a cycle until close()

        view.on_update(updated)
    config.close()
    return _refs(config)


def _alive(refs: list[list[weakref.ref[Any]]]) -> list[str]:
    gc.collect()
    return sorted({type(obj).__name__ for group in refs for ref in group if (obj := ref()) is not None})


def test_closed_configs_entered_with_with_are_all_freed(server: FakeAPIServer, kubeconfig: str) -> None:
    seed(server, 3)
    assert gc.isenabled()  # so the informers' syncs freeze (FAST keeps freeze_gc on)
    frozen_before = gc.get_freeze_count()
    refs = [_use_sync(kubeconfig) for _ in range(ROUNDS)]
    assert gc.get_freeze_count() > frozen_before  # the freeze did run
    assert _alive(refs) == []


def test_closed_configs_entered_with_async_with_are_all_freed(server: FakeAPIServer, kubeconfig: str) -> None:
    seed(server, 3)

    async def main() -> list[list[weakref.ref[Any]]]:
        return [await _use_async(kubeconfig) for _ in range(ROUNDS)]

    refs = asyncio.run(main())
    assert _alive(refs) == []


def test_a_closed_config_is_freed_without_the_cyclic_collector(server: FakeAPIServer, kubeconfig: str) -> None:
    """Reference counting alone frees it: nothing of the scope's machinery is in a reference cycle,
    so whatever a freeze moved into the permanent generation is still freed."""
    seed(server, 3)
    refs = _use_sync(kubeconfig)  # a first use, so that the classes' caches exist
    gc.collect()
    gc.disable()
    try:
        refs = _use_sync(kubeconfig)
        alive = [type(obj).__name__ for ref in refs if (obj := ref()) is not None]
    finally:
        gc.enable()
    assert alive == []


def test_a_cache_whose_config_was_not_kept_still_starts_and_a_dropped_one_stops_its_reflector(
    server: FakeAPIServer, kubeconfig: str
) -> None:
    """cloudcoil's pattern: ``Config(cache=cache)`` not kept, then ``cache.start()``; and a started
    cache dropped without ``stop()`` takes its reflector thread with it."""
    import threading

    seed(server, 2)
    cache = Cache(resources=[Pod], tuning=FAST)
    Config(kubeconfig=kubeconfig, cache=cache)  # not kept: the cache discovers through it at start
    cache.start()
    assert cache.wait(10)
    assert len(cache.get_informer(Pod, sync=True).list()) == 2  # type: ignore[union-attr]
    reflectors = [t for t in threading.enumerate() if t.name.startswith("cloudcoil-reflector-")]
    assert reflectors
    del cache
    gc.collect()
    for thread in reflectors:
        thread.join(10)
    assert not any(t.is_alive() for t in reflectors)


def test_the_process_default_keeps_one_cached_client_per_class_and_is_freed_when_closed(
    server: FakeAPIServer, kubeconfig: str
) -> None:
    """``set_default()`` (web apps): ``Pod.get`` outside every scope reuses one cached client, as a
    scope does; ``close()`` drops it, and reference counting alone frees the Config."""
    from cloudcoil_cache.client import _config, api_in_scope

    seed(server, 3)
    config = _cached(kubeconfig).set_default()
    try:
        first = api_in_scope(Pod, None, True)
        assert api_in_scope(Pod, None, True) is first and first.config is config
        assert len(Pod.list()) == 3
    finally:
        config.close()
    assert _config._default is None and _config.default_scope is None
    refs = _refs(config)
    del config, first
    gc.disable()
    try:
        alive = [type(obj).__name__ for ref in refs if (obj := ref()) is not None]
    finally:
        gc.enable()
    assert alive == []
