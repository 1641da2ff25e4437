"""Cached reads in a script: ``with config:`` starts the informers, then ``Pod.list``/``Pod.get`` read memory.

Run it as ``python examples/cached_reads.py`` (a fake cluster is started when ``KUBECONFIG`` is not set).
The fake server's request log shows what reached the API server: the informer's LIST and WATCH only.
"""

from __future__ import annotations

import time

from _fake_cluster import api_reads, cluster

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import ReadOnlyError, ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import Pod


def main() -> dict[str, object]:
    """List and get pods through the cache; print and return what was read and what the server saw."""
    with cluster() as server:
        config = Config(namespace="default", cache=Cache(resources=[Pod], mode="strict"))
        try:
            with config:  # starts one informer per kind and waits for its first LIST
                if server is not None:
                    server.clear_requests()
                t0 = time.perf_counter()
                pods = Pod.list(namespace="default")  # from memory
                everywhere = Pod.list(all_namespaces=True)  # from memory too
                web0 = Pod.get("web-0")  # the config's namespace: default
                other = Pod.get("web-0", namespace="other")
                micros = (time.perf_counter() - t0) * 1e6
                try:
                    Pod.get("missing")
                except ResourceNotFound as exc:  # a strict miss: not in the synced cache
                    missing = str(exc)
                try:
                    web0.metadata.labels["edited"] = "yes"  # cached objects are shared: read-only
                except ReadOnlyError:
                    editable = web0.copy()  # a copy is an ordinary object
                    editable.metadata.labels["edited"] = "yes"
                result: dict[str, object] = {
                    "default": sorted(p.name for p in pods),
                    "all": sorted(f"{p.namespace}/{p.name}" for p in everywhere),
                    "web-0 phase": web0.status.phase,
                    "other/web-0 uid differs": web0.metadata.uid != other.metadata.uid,
                    "missing": missing,
                    "copy edited": editable.metadata.labels["edited"],
                    "api reads": api_reads(server),  # [] : every read came from memory
                }
        finally:
            config.close()
    for key, value in result.items():
        print(f"{key}: {value}")
    print(f"4 cached reads took {micros:.0f} µs in all")
    return result


if __name__ == "__main__":
    main()
