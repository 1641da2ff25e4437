"""Probe (not a test): does an on_add handler registered on a started informer get the objects already listed?"""

import os
import tempfile
import threading

import cloudcoil_cache.models.kubernetes as k8s
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.testing import FakeAPIServer

with FakeAPIServer() as srv, tempfile.TemporaryDirectory() as d:
    kc = srv.write_kubeconfig(os.path.join(d, "kc"))
    base = Config(kubeconfig=kc)
    with base:
        k8s.core.v1.ConfigMap(metadata=dict(name="pre", namespace="kube-system"), data={"a": "b"}).create()
    config = base.with_cache(Cache(enabled=True, resources=[k8s.core.v1.ConfigMap]))
    got = []
    with config:
        inf = config.cache.get_informer(k8s.core.v1.ConfigMap, sync=True)
        inf.on_add(lambda o: got.append(o.metadata.name))
        config.cache.wait(timeout=10)
        threading.Event().wait(0.5)
    print("on_add received for pre-existing objects:", got)
    base.close()
