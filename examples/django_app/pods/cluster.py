"""The one Config of the process: a cache of pods, started by ``PodsConfig.ready()``."""

from __future__ import annotations

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod

# KUBECONFIG (or ~/.kube/config, or the in-cluster service account) says which cluster.
config = Config(cache=Cache(resources=[Pod]))
