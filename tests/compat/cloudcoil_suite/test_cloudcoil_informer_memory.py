"""cloudcoil's test_async_informer_memory_efficiency, from tests/test_informers_edge_cases.py
(github.com/cloudcoil/cloudcoil at 78915a0; Apache License 2.0, see LICENSE here), imports renamed
cloudcoil -> cloudcoil_cache, formatted by ruff; the lines marked "adapted" are listed in conftest.py.
"""

import asyncio
import os

import pytest

import cloudcoil_cache.models.kubernetes as k8s
from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.testing._real import KUBERNETES_VERSION

k8s_version = KUBERNETES_VERSION.lstrip("v")  # adapted: the real tier's version (cloudcoil: its models' distribution)
cluster_provider = os.environ.get("CLUSTER_PROVIDER", "kind")


@pytest.mark.configure_test_cluster(
    cluster_name=f"cc-inf-edge-v{k8s_version}",
    version=f"v{k8s_version}",
    provider=cluster_provider,
    remove=False,
)
async def test_async_informer_memory_efficiency(test_config):
    """Test informer memory usage and cleanup."""
    import gc

    cache_config = Cache(enabled=True, resources=[k8s.core.v1.ConfigMap])
    config = test_config.with_cache(cache_config)

    async with config:
        ns = await k8s.core.v1.Namespace(metadata=ObjectMeta(generate_name="test-memory-")).async_create()

        await config.cache.async_wait(timeout=30.0)
        informer = config.cache.get_informer(k8s.core.v1.ConfigMap)
        assert informer is not None

        # Get initial memory usage
        gc.collect()
        initial_objects = len(gc.get_objects())

        # Create and delete many ConfigMaps
        for batch in range(3):
            # Create batch
            cms = []
            for i in range(10):
                cm = await k8s.core.v1.ConfigMap(
                    metadata=dict(name=f"test-memory-{batch}-{i}", namespace=ns.name),
                    data={"batch": str(batch)},
                ).async_create()
                cms.append(cm)

            # Wait for creation events
            await asyncio.sleep(1)

            # Delete batch
            await asyncio.gather(*[cm.async_remove() for cm in cms])

            # Wait for deletion events
            await asyncio.sleep(1)

        # Check that cache doesn't grow unboundedly
        cached_cms = informer.list(namespace=ns.name)
        assert len(cached_cms) < 10  # Should be mostly empty after deletions

        # Check memory hasn't grown excessively
        gc.collect()
        final_objects = len(gc.get_objects())
        object_growth = final_objects - initial_objects

        # Allow for some growth but not excessive
        assert object_growth < 1000  # Reasonable growth limit

        await ns.async_remove()
