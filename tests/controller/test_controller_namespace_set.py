"""A controller on a cache over a set of namespaces (issue 35) reconciles the objects of every
namespace of the set, and only those: one informer per namespace, shared with the cache; its
reads (``ctx.cached``) are served in the set and refused outside it. Over the fake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _controller_support import Calls
from cluster_support import FAST

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller
from cloudcoil_cache.errors import CacheUnavailableError
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Secret
from cloudcoil_cache.testing import FakeAPIServer


def test_a_controller_over_a_set_reconciles_every_namespace_of_it(fake_kubeconfig: Path, make_cm: Any):
    for ns in ("a", "b", "c"):
        make_cm(f"cm-{ns}", namespace=ns)
    cache = Cache(resources=[ConfigMap], namespaces=["a", "b"], tuning=FAST)
    config = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=cache)
    ctl = Controller(ConfigMap, config=config)
    calls = Calls()
    refused: list[str] = []

    @ctl.reconcile()
    def reconcile(cm: Any, ctx: Any) -> None:
        assert ctx.cached(ConfigMap).get(cm.name, cm.namespace) is not None
        try:
            ctx.cached(ConfigMap).get("cm-c", "c")
        except CacheUnavailableError as exc:
            refused.append(str(exc))
        calls.add((cm.namespace, cm.name))

    try:
        with ctl:
            calls.wait(lambda c: {("a", "cm-a"), ("b", "cm-b")} <= set(c))
            assert ("c", "cm-c") not in calls.snapshot()
            assert refused and "outside the cache's set of namespaces ['a', 'b']" in refused[0]
            source = ctl.sources[ConfigMap]
            assert source.shared  # the cache's own informers, one per namespace of the set
            assert source.view.status().synced
            assert {i.key.namespace for i in cache.informers()} == {"a", "b"}
    finally:
        config.close()


def test_an_owned_kind_outside_the_cache_is_watched_over_the_same_set(
    fake_kubeconfig: Path, fake_api_server: FakeAPIServer, make_cm: Any
):
    make_cm("cm-a", namespace="a")
    cache = Cache(resources=[ConfigMap], namespaces=["a", "b"], tuning=FAST)
    config = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=cache)
    ctl = Controller(ConfigMap, config=config).owns(Secret)
    calls = Calls()
    ctl.reconcile(lambda cm: calls.add(cm.name))
    try:
        with ctl:
            calls.wait(lambda c: "cm-a" in c)
            own = ctl.sources[Secret]
            assert not own.shared
            watched = {r.path for r in fake_api_server.requests if r.verb == "list" and "secrets" in r.path}
            assert watched == {"/api/v1/namespaces/a/secrets", "/api/v1/namespaces/b/secrets"}
    finally:
        config.close()


def test_a_controller_named_to_one_namespace_of_the_set(fake_kubeconfig: Path, make_cm: Any):
    for ns in ("a", "b"):
        make_cm(f"cm-{ns}", namespace=ns)
    cache = Cache(resources=[ConfigMap], namespaces=["a", "b"], tuning=FAST)
    config = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=cache)
    ctl = Controller(ConfigMap, config=config, namespace="b")
    calls = Calls()
    ctl.reconcile(lambda cm: calls.add(cm.name))
    try:
        with ctl:
            calls.wait(lambda c: "cm-b" in c)
            assert "cm-a" not in calls.snapshot()
            assert ctl.sources[ConfigMap].shared
    finally:
        config.close()
