"""The one Config of the process; ``podsite/wsgi.py`` (imported by servers only) makes it the default.

``KUBECONFIG`` (or ``~/.kube/config``, or the in-cluster service account) says which cluster; when
``KUBECONFIG`` is not set the examples' embedded fake cluster is started for the process instead.
Management commands never import this module: they run without a cluster.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod


def _fake_cluster() -> Any:
    """The examples' fake cluster when ``KUBECONFIG`` is not set (a real project has none of this)."""
    examples = str(Path(__file__).resolve().parents[2])
    if examples not in sys.path:
        sys.path.append(examples)
    from _fake_cluster import ProcessCluster

    return ProcessCluster()


_fake = _fake_cluster()
config = Config(cache=Cache(resources=[Pod]))


def stop() -> None:
    """Close the cache (its threads are joined) and the fake cluster; also done at interpreter exit."""
    config.close()
    _fake.stop()  # nothing in a forked worker (gunicorn --preload): the fake cluster is the master's
