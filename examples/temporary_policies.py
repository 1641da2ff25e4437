"""api.md reference example: temporary read policies (``python examples/temporary_policies.py``).

``cfg`` is the Config of the async cached-reads example: a strict cache of ``default``. After
the api.md block, the script prints the reads that reached the API server (fake server only):
the paused list and the fallback get; every other read was answered from memory.
"""

from __future__ import annotations

from _fake_cluster import api_reads, cluster

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import CacheUnavailableError
from cloudcoil_cache.models.kubernetes.core.v1 import Pod


def reference_example(cfg: Config) -> None:
    """The code of api.md, verbatim."""
    with cfg:
        print(cfg.cache.status())
        with cfg.cache.pause():
            Pod.list(namespace="default")  # straight from the API server
        with cfg.cache.fallback_mode():
            Pod.get("web-0", namespace="other")  # outside the cache's namespace: read from the API


def main() -> list[str]:
    """Run the api.md block, then show the strict policy refusing the same read; return the API reads."""
    with cluster() as server:
        cfg = Config(namespace="default", cache=Cache(resources=[Pod], namespaces=["default"], mode="strict"))
        try:
            with cfg:  # an outer scope: the cache syncs now, and the block's own scope nests in it
                if server is not None:
                    server.clear_requests()
                reference_example(cfg)
                reads = api_reads(server)
            for read in reads:
                print("read from the API server:", read)
            with cfg:
                try:
                    Pod.get("web-0", namespace="other")
                except CacheUnavailableError as exc:
                    print("strict mode:", exc)
        finally:
            cfg.close()
    return reads


if __name__ == "__main__":
    main()
