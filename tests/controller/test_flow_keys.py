"""ResourceKey: cloudcoil 0.8's key type, taken wherever a key is (enqueue, mappers); the string form still works."""

from __future__ import annotations

import pytest
from _controller_support import Calls

from cloudcoil_cache.controller import Controller, ResourceKey
from cloudcoil_cache.controller._keys import normalize_key
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Namespace, Secret


def test_resource_key_has_0_8_fields_a_string_form_and_is_checked():
    key = ResourceKey("web", "prod")
    assert (key.name, key.namespace) == ("web", "prod")
    assert str(key) == "prod/web" and str(ResourceKey("node-1")) == "node-1"
    assert ResourceKey.parse("prod/web") == key and ResourceKey.parse("node-1") == ResourceKey("node-1", None)
    assert ResourceKey.from_resource(ConfigMap.from_dict({"metadata": {"name": "web", "namespace": "prod"}})) == key
    assert hash(key) == hash(ResourceKey("web", "prod"))  # frozen: a queue key, a dict key
    for bad in ("", "a/b"):
        with pytest.raises(ValueError, match="ResourceKey\\(name=...\\)"):
            ResourceKey(bad)
    with pytest.raises(ValueError, match="ResourceKey\\(namespace=...\\)"):
        ResourceKey("a", "x/y")


def test_a_resource_key_normalizes_like_its_string_form():
    assert normalize_key(ResourceKey("a", "ns"), namespaced=True, default_namespace="default") == "ns/a"
    assert normalize_key(ResourceKey("a"), namespaced=True, default_namespace="default") == "default/a"
    assert normalize_key(ResourceKey("a", "ns"), namespaced=False, default_namespace=None) == "a"
    with pytest.raises(ValueError, match="has no namespace"):
        normalize_key(ResourceKey("a"), namespaced=True, default_namespace=None)
    with pytest.raises(TypeError, match="a ResourceKey"):
        normalize_key(3, namespaced=True, default_namespace=None)


def test_enqueue_takes_a_resource_key_and_a_string_alike(config, make_cm):
    make_cm("a")
    make_cm("b")
    ctl = Controller(ConfigMap, config=config)
    seen = Calls()

    @ctl.reconcile()
    def reconcile(cm, ctx):
        seen.add(ctx.key)

    with ctl:
        seen.wait(lambda c: {"default/a", "default/b"} <= set(c))
        before = len(seen.snapshot())
        ctl.enqueue(ResourceKey("a", "default"))
        seen.wait(lambda c: len(c) >= before + 1)
        ctl.enqueue(ResourceKey("b"))  # the controller's namespace
        ctl.enqueue("default/a")
        seen.wait(lambda c: len(c) >= before + 3)
        with pytest.raises(ValueError, match="cannot enqueue"):
            ctl.enqueue(ResourceKey("a", "elsewhere"))
    assert sorted(seen.snapshot()[before:]) == ["default/a", "default/a", "default/b"]


def test_a_mapper_may_return_resource_keys(config, fake_api_server, make_cm):
    make_cm("target")
    ctl = Controller(ConfigMap, config=config)
    seen = Calls()

    @ctl.watch(Secret)
    def secret_to_configmap(secret):
        return ResourceKey(secret.metadata.labels["for"], secret.metadata.namespace)

    @ctl.watch(Namespace)
    def namespace_to_many(ns):
        return [ResourceKey("target")] if ns.name == "default" else None

    @ctl.reconcile()
    def reconcile(cm, ctx):
        seen.add(ctx.key)

    with ctl:
        seen.wait(lambda c: "default/target" in c)
        before = len(seen.snapshot())
        fake_api_server.create(
            "secrets", {"metadata": {"name": "s", "namespace": "default", "labels": {"for": "target"}}}, "default"
        )
        seen.wait(lambda c: len(c) > before)
    assert set(seen.snapshot()) == {"default/target"}
