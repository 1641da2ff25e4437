"""api.md reference example: cached reads in an async program (run it as a script)."""

from __future__ import annotations

import asyncio
from typing import Any

from _fake_cluster import cluster

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod


def reference_example() -> tuple[Any, Any]:
    """The code of api.md, verbatim; returns its ``cfg`` and ``pods_in_default``."""
    from cloudcoil_cache.caching import Cache
    from cloudcoil_cache.client import Config
    from cloudcoil_cache.models.kubernetes.core.v1 import Pod

    cfg = Config(
        namespace="default",
        cache=Cache(
            resources=[Pod], namespaces=["default"], mode="strict", wait_for_sync=True, max_items_per_resource=0
        ),
    )

    async def pods_in_default():
        async with cfg:
            return await Pod.async_list(namespace="default")

    return cfg, pods_in_default


def main() -> dict[str, list[str]]:
    """Run the async form, then the synchronous form with a second Config; print both."""
    with cluster():
        cfg, pods_in_default = reference_example()
        # "Use one Config for sync scopes and another for async scopes."
        sync_cfg = Config(namespace="default", cache=Cache(resources=[Pod], namespaces=["default"], mode="strict"))
        try:
            async_names = sorted(pod.name for pod in asyncio.run(pods_in_default()))
            print("async:", " ".join(async_names))
            with sync_cfg:
                sync_names = sorted(pod.name for pod in Pod.list(namespace="default"))
            print("sync:", " ".join(sync_names))
        finally:
            cfg.close()
            sync_cfg.close()
    return {"async": async_names, "sync": sync_names}


if __name__ == "__main__":
    main()
