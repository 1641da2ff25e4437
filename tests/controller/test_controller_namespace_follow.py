"""A running controller follows its cache's set of namespaces: ``cache.add_namespace`` attaches its
handlers to the new namespace's informer (its objects reconciled within a sync), ``remove_namespace``
detaches them (no reconcile of it, no spurious deletion, its finalizers left alone), its own caches
follow the set too, and a ``NamespaceSelector`` drives the set by label. Over the fake."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from _controller_support import Calls
from cluster_support import FAST

from cloudcoil_cache.caching import Cache, NamespaceSelector
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Secret
from cloudcoil_cache.testing import FakeAPIServer

FINALIZER = "example.com/cleanup"


def namespace(server: FakeAPIServer, name: str, **labels: str) -> None:
    server.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})


def touch(server: FakeAPIServer, name: str, namespace: str, value: str) -> None:
    server.patch("configmaps", name, {"data": {"touched": value}}, namespace)


def test_a_running_controller_follows_namespaces_added_and_removed(
    fake_kubeconfig: Path, fake_api_server: FakeAPIServer, make_cm: Any
):
    for ns in ("a", "b", "c", "d"):
        make_cm(f"cm-{ns}", namespace=ns)
    cache = Cache(resources=[ConfigMap], namespaces=["a", "b", "c"], tuning=FAST)
    config = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=cache)
    ctl = Controller(ConfigMap, config=config)
    calls = Calls()
    finalized = Calls()

    @ctl.reconcile()
    def reconcile(cm: Any, ctx: Any) -> None:
        calls.add((cm.namespace, cm.name, (cm.data or {}).get("touched")))

    @ctl.finalize(FINALIZER)
    def finalize(cm: Any) -> None:
        finalized.add((cm.namespace, cm.name))

    try:
        with ctl:
            calls.wait(lambda c: {(ns, f"cm-{ns}", None) for ns in "abc"} <= set(c))
            assert not any(ns == "d" for ns, _, _ in calls.snapshot())
            assert ctl.status().namespaces == ("a", "b", "c")

            cache.add_namespace("d")  # a 4th namespace, at run time: replayed, reconciled within a sync
            calls.wait(lambda c: ("d", "cm-d", None) in c)
            touch(fake_api_server, "cm-d", "d", "1")  # and its changes from now on
            calls.wait(lambda c: ("d", "cm-d", "1") in c)
            status = ctl.status()
            assert status.namespaces == ("a", "b", "c", "d") and status.synced
            assert FINALIZER in fake_api_server.get("configmaps", "cm-d", "d")["metadata"]["finalizers"]

            cache.remove_namespace("b")  # its informer stopped: no delete event, no finalizer run
            assert ctl.status().namespaces == ("a", "c", "d")
            touch(fake_api_server, "cm-b", "b", "2")
            ctl.enqueue("b/cm-b")  # a key of a removed namespace is dropped, not reconciled
            ctl.enqueue("a/cm-a")
            touch(fake_api_server, "cm-a", "a", "2")
            calls.wait(lambda c: ("a", "cm-a", "2") in c)
            assert not any(ns == "b" and touched == "2" for ns, _, touched in calls.snapshot())
            assert finalized.snapshot() == []  # leaving the set is not a deletion
            kept = fake_api_server.get("configmaps", "cm-b", "b")["metadata"]
            assert FINALIZER in kept["finalizers"] and not kept.get("deletionTimestamp")
            assert "b" not in {i.key.namespace for i in cache.informers()}
            assert ctl.status().last_errors == {}
    finally:
        config.close()


def test_the_controllers_own_caches_follow_the_set(fake_kubeconfig: Path, fake_api_server: FakeAPIServer, make_cm: Any):
    owners = {ns: make_cm(f"cm-{ns}", namespace=ns) for ns in ("a", "b")}
    cache = Cache(resources=[ConfigMap], namespaces=["a", "b"], tuning=FAST)
    config = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=cache)
    ctl = Controller(ConfigMap, config=config).owns(Secret)  # Secrets: in a cache of the controller's own
    calls = Calls()
    ctl.reconcile(lambda cm: calls.add(cm.name))
    try:
        with ctl:
            calls.wait(lambda c: {"cm-a", "cm-b"} <= set(c))
            own = ctl.sources[Secret]
            assert not own.shared
            own_cache = own.config.cache
            assert own_cache is not None and own_cache.namespaces == ("a", "b")
            cache.add_namespace("c")
            assert own_cache.namespaces == ("a", "b", "c")  # followed before add_namespace returns
            assert own.describe() == "Secret in namespaces a, b, c"
            owner = make_cm("cm-c", namespace="c")
            calls.wait(lambda c: "cm-c" in c)
            seen = len(calls.snapshot())
            fake_api_server.create(  # an owned Secret in the new namespace queues its owner
                "secrets",
                {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "metadata": {
                        "name": "s",
                        "namespace": "c",
                        "ownerReferences": [
                            {
                                "apiVersion": "v1",
                                "kind": "ConfigMap",
                                "name": "cm-c",
                                "uid": owner["metadata"]["uid"],
                                "controller": True,
                            }
                        ],
                    },
                },
                "c",
            )
            calls.wait(lambda c: len(c) > seen and c[-1] == "cm-c")
            cache.remove_namespace("a")
            assert own_cache.namespaces == ("b", "c")
            assert {i.key.namespace for i in own_cache.informers()} == {"b", "c"}
            assert owners["a"]["metadata"]["name"] == "cm-a"
    finally:
        config.close()


def test_a_controller_over_a_namespace_selector(fake_kubeconfig: Path, fake_api_server: FakeAPIServer, make_cm: Any):
    namespace(fake_api_server, "a", team="x")
    namespace(fake_api_server, "b")
    for ns in ("a", "b"):
        make_cm(f"cm-{ns}", namespace=ns)
    cache = Cache(resources=[ConfigMap], namespaces=NamespaceSelector("team=x"), tuning=FAST)
    config = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=cache)
    ctl = Controller(ConfigMap, config=config).owns(Secret)  # Secrets: a cache of its own, following the set
    calls = Calls()
    changed = threading.Condition()

    def notify(namespace: str, added: bool) -> None:
        with changed:
            changed.notify_all()

    def followed(namespaces: tuple[str, ...]) -> bool:
        """Wait until the controller covers ``namespaces`` (it follows a change of the set after
        its handlers saw the new namespace's objects: a reconcile can come first)."""
        with changed:
            return changed.wait_for(lambda: ctl.status().namespaces == namespaces, 10)

    @ctl.reconcile()
    def reconcile(cm: Any) -> None:
        calls.add((cm.namespace, (cm.data or {}).get("touched")))

    try:
        with ctl:
            calls.wait(lambda c: ("a", None) in c)
            # subscribed after the controller's InformerSet: called once the controller followed the change
            cache.on_namespaces_changed(notify)
            assert ctl.status().namespaces == ("a",)
            assert ("b", None) not in calls.snapshot()
            fake_api_server.patch("namespaces", "b", {"metadata": {"labels": {"team": "x"}}})  # labelled after start
            calls.wait(lambda c: ("b", None) in c)
            assert followed(("a", "b"))
            fake_api_server.patch("namespaces", "a", {"metadata": {"labels": {"team": None}}})  # unlabelled
            assert followed(("b",))
            own_cache = ctl.sources[Secret].config.cache
            assert own_cache is not None and own_cache.namespaces == ("b",)
            assert {i.key.namespace for i in own_cache.informers()} == {"b"}
            touch(fake_api_server, "cm-a", "a", "late")
            touch(fake_api_server, "cm-b", "b", "late")
            calls.wait(lambda c: ("b", "late") in c)
            assert ("a", "late") not in calls.snapshot()
    finally:
        config.close()


def test_a_controller_over_a_selector_that_selects_nothing_at_its_start(
    fake_kubeconfig: Path, fake_api_server: FakeAPIServer, make_cm: Any
):
    namespace(fake_api_server, "a")
    make_cm("cm-a", namespace="a")
    cache = Cache(resources=[ConfigMap], namespaces=NamespaceSelector("team=x"), tuning=FAST)
    config = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=cache)
    ctl = Controller(ConfigMap, config=config)
    calls = Calls()
    ctl.reconcile(lambda cm: calls.add(cm.namespace))
    try:
        with ctl:
            status = ctl.status()
            assert status.synced and status.namespaces == ()  # started over the empty set
            assert ctl.sources[ConfigMap].view.status().object_count == 0
            fake_api_server.patch("namespaces", "a", {"metadata": {"labels": {"team": "x"}}})
            calls.wait(lambda c: "a" in c)
            assert ctl.status().namespaces == ("a",)
        assert ctl.sources == {}
    finally:
        config.close()
