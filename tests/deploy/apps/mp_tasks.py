"""Functions the deploy tier's multiprocessing children run (importable: forkserver and spawn import them)."""

from __future__ import annotations

import os
from typing import Any

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod


def names_from_the_default(expected: str, timeout: float, out: Any) -> None:
    """In a fork child of a process whose default Config caches pods: wait (on a handler) until the
    cache holds ``expected``, then report what the child saw and its cache's state."""
    import threading

    from cloudcoil_cache.client import current_config

    config = current_config()
    assert config.cache is not None
    before = config.cache.informers()[0].inherited
    seen = threading.Event()
    view = config.cache.get_informer(Pod, sync=True)
    assert view is not None
    view.on_add(lambda pod: seen.set() if pod.name == expected else None)
    arrived = seen.wait(timeout)
    names = sorted(p.name for p in Pod.list(namespace="default"))
    state = config.cache.status().informers[0].state
    out.put({"pid": os.getpid(), "inherited": before, "arrived": arrived, "names": names, "state": state})


def names_with_a_config_of_its_own(kubeconfig: str, out: Any) -> None:
    """In a child that inherits nothing (forkserver, spawn): its own cached Config, in a scope."""
    config = Config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod], namespaces=["default"]))
    with config:
        names = sorted(p.name for p in Pod.list(namespace="default"))
    config.close()
    out.put({"pid": os.getpid(), "names": names})
