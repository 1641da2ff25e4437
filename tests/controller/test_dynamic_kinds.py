"""Controllers, owns(), watch() and Cache(resources=) over kinds from get_dynamic_resource (no plural until
discovery): their plural and scope are learnt when the manager, the controller or the cache starts; a kind
the server does not serve fails that start with the client's message, leaving nothing running."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path
from typing import Any

import pytest
from _controller_support import Calls
from _operator_support import Passes, conditions, writes, writes_by_kind
from cluster_support import FAST

from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, Manager
from cloudcoil_cache.errors import ConfigError, ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.resources import get_dynamic_resource
from cloudcoil_cache.testing import FakeAPIServer

FINALIZER = "dyn.example.com/cleanup"
_groups = itertools.count()


def served(server: FakeAPIServer, kind: str, *, namespaced: bool = True) -> tuple[Any, str]:
    """A kind the server serves in a group of its own (so its dynamic class is not bound yet): (class, plural)."""
    group = f"dyn-ctl-{next(_groups)}.example.com"
    plural = kind.lower() + "s"
    server.register_resource(group, "v1", kind, plural, namespaced=namespaced)
    cls = get_dynamic_resource(kind, f"{group}/v1")
    assert cls.plural is None  # nothing asked the server yet
    return cls, plural


def unserved(kind: str) -> Any:
    return get_dynamic_resource(kind, f"dyn-missing-{next(_groups)}.example.com/v1")


def create(
    server: FakeAPIServer, cls: Any, plural: str, name: str, spec: dict[str, Any], **meta: Any
) -> dict[str, Any]:
    body = {"apiVersion": cls.api_version, "kind": cls.kind, "metadata": {"name": name, **meta}, "spec": spec}
    return server.create(plural, body, "default" if cls.namespaced in (None, True) else None)


def discovery_gets(server: FakeAPIServer, cls: Any) -> int:
    return sum(1 for r in server.requests if r.verb == "get" and r.path == f"/apis/{cls.api_version}")


def test_a_dynamic_primary_runs_the_operator_story_learning_its_plural_when_the_manager_starts(
    fake_api_server: FakeAPIServer, config: Config
) -> None:
    Gadget, gadgets = served(fake_api_server, "Gadget")
    create(fake_api_server, Gadget, gadgets, "g1", {"size": 1})
    ctl = Controller(Gadget, report_status=True).owns(ConfigMap)
    ctl.observer = passes = Passes()
    finalized: list[str] = []

    @ctl.reconcile()
    def reconcile(gadget: Any, ctx: Any) -> None:
        size = str(gadget["spec"]["size"])
        before = ctx.cached(ConfigMap).get(gadget.name)
        child = ctx.ensure(ConfigMap(metadata=ObjectMeta(name=gadget.name), data={"size": size}))
        ctx.set_status(size=gadget["spec"]["size"])
        ctx.condition("Synced", True, reason="ChildApplied", message=f"size {size}")
        if before is None or (before.data or {}).get("size") != size:
            ctx.event("ChildApplied", f"ConfigMap {child.name} has size {size}")

    @ctl.finalize(FINALIZER)
    def cleanup(gadget: Any) -> None:
        finalized.append(gadget.name)

    def live() -> dict[str, Any]:
        return fake_api_server.get(gadgets, "g1", "default")

    assert Gadget.plural is None  # declared without a request
    with Manager(ctl, config=config):
        assert (Gadget.plural, Gadget.namespaced) == (gadgets, True)
        assert discovery_gets(fake_api_server, Gadget) == 1  # learnt once, at the start
        passes.wait_for(lambda: conditions(live()).get("Ready", ("",))[0] == "True")
        obj = live()
        assert obj["metadata"]["finalizers"] == [FINALIZER]
        assert obj["status"]["size"] == 1 and obj["status"]["observedGeneration"] == 1
        assert conditions(obj)["Synced"] == ("True", "ChildApplied", "size 1")
        [owner] = fake_api_server.get("configmaps", "g1", "default")["metadata"]["ownerReferences"]
        assert (owner["apiVersion"], owner["kind"], owner["uid"], owner["controller"]) == (
            Gadget.api_version,
            "Gadget",
            obj["metadata"]["uid"],
            True,
        )
        [event] = fake_api_server.list("events.events.k8s.io", "default")
        assert (event["reason"], event["regarding"]["kind"]) == ("ChildApplied", "Gadget")
        # one write of each, and none from a pass where nothing changed (the status is read as a key
        # of the dynamic object: a status "missing" every pass would write it again, or fail with 409)
        passes.wait_for(lambda: len(writes(fake_api_server.requests)) >= 4)
        passes.wait_for(lambda: "conditions" in (ctl.cached(Gadget).get("g1") or {}).get("status", {}))
        mark, before = len(fake_api_server.requests), passes.total()
        ctl.enqueue("default/g1")
        passes.wait_for(lambda: passes.total() > before)
        requests = fake_api_server.requests
        assert writes_by_kind(requests) == {gadgets: 1, "configmaps": 1, f"{gadgets}/status": 1, "events": 1}
        assert writes(requests[mark:]) == []

        fake_api_server.patch(gadgets, "g1", {"spec": {"size": 3}}, "default")
        passes.wait_for(lambda: live()["status"].get("observedGeneration") == 2)
        assert fake_api_server.get("configmaps", "g1", "default")["data"] == {"size": "3"}

        fake_api_server.clear_requests()
        fake_api_server.delete(gadgets, "g1", "default")
        passes.wait_for(lambda: bool(finalized))
        fake_api_server.wait_for_request(lambda r: r.verb == "patch" and r.path.endswith(f"/{gadgets}/g1"), served=True)
        with pytest.raises(ResourceNotFound):
            live()
    assert finalized == ["g1"]


def test_owned_and_watched_dynamic_kinds_queue_their_primaries(
    fake_api_server: FakeAPIServer, config: Config, make_cm: Any
) -> None:
    Part, parts = served(fake_api_server, "Part")
    Label, labels = served(fake_api_server, "Label", namespaced=False)  # cluster-scoped, watched
    primary = make_cm("app")
    ctl = Controller(ConfigMap, config=config).owns(Part)
    ctl.watch(Label, lambda label: label["spec"]["for"])
    calls = Calls()

    @ctl.reconcile()
    def reconcile(cm: Any, ctx: Any) -> None:
        calls.add((cm.name, sorted(p.name for p in ctx.cached(Part).list())))

    assert (Part.plural, Label.plural) == (None, None)
    with ctl.start():
        assert (Part.plural, Part.namespaced, Label.plural, Label.namespaced) == (parts, True, labels, False)
        calls.wait(lambda items: ("app", []) in items)
        owner = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "app",
            "uid": primary["metadata"]["uid"],
            "controller": True,
        }
        create(fake_api_server, Part, parts, "p1", {}, ownerReferences=[owner])  # the owned kind queues "app"
        calls.wait(lambda items: ("app", ["p1"]) in items)
        seen = len(calls.snapshot())
        create(fake_api_server, Label, labels, "l1", {"for": "default/app"})  # the mapper queues "app"
        calls.wait(lambda items: len(items) > seen)
        assert ctl.keys_for(ctl.cached(Label).get("l1")) == ["default/app"]


def test_cache_resources_take_a_dynamic_kind_learnt_when_the_cache_starts(
    fake_api_server: FakeAPIServer, fake_kubeconfig: Path
) -> None:
    Gadget, gadgets = served(fake_api_server, "Gadget")
    create(fake_api_server, Gadget, gadgets, "kept", {"size": 1}, labels={"keep": "yes"})
    create(fake_api_server, Gadget, gadgets, "other", {"size": 2})
    cache = Cache(
        resources=[Gadget, ConfigMap],
        per_resource={Gadget: {"label_selector": "keep=yes"}},
        namespaces="default",
        mode="strict",
        tuning=FAST,
    )
    assert cache.informer_for(Gadget) is None and Gadget.plural is None  # nothing asked yet
    config = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=cache)
    try:
        with config:
            assert (Gadget.plural, Gadget.namespaced) == (gadgets, True)
            informer = cache.informer_for(Gadget)
            assert informer is not None and informer.has_synced()
            assert informer.key.label_selector == "keep=yes" and informer.key.namespace == "default"
            assert discovery_gets(fake_api_server, Gadget) == 1
            fake_api_server.clear_requests()
            assert [g.name for g in Gadget.list(label_selector="keep=yes")] == ["kept"]  # from the cache
            assert [r.verb for r in fake_api_server.requests if r.verb in ("get", "list")] == []
        with config:  # a second scope: the informer made at the first start is reused
            assert cache.informer_for(Gadget) is informer
    finally:
        config.close()
    assert discovery_gets(fake_api_server, Gadget) == 0  # not asked again by the second scope


def test_a_controller_shares_the_informer_of_a_dynamic_kind_its_configs_cache_lists(
    fake_api_server: FakeAPIServer, fake_kubeconfig: Path
) -> None:
    Gadget, gadgets = served(fake_api_server, "Gadget")
    create(fake_api_server, Gadget, gadgets, "g1", {})
    cache = Cache(resources=[Gadget], namespaces="default", tuning=FAST)
    config = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=cache)
    seen = Calls()
    ctl = Controller(Gadget, lambda gadget: seen.add(gadget.name), config=config)
    try:
        with ctl.start():
            seen.wait(lambda names: names == ["g1"])
            [source] = ctl.sources.values()
            assert source.shared and source.config is config
            assert cache.informer_for(Gadget) is not None
            lists = [r for r in fake_api_server.requests if r.verb == "list" and r.path.endswith(f"/{gadgets}")]
            assert len(lists) == 1  # one informer (synced: it listed), the cache's, none of the controller's own
    finally:
        config.close()


def test_a_kind_the_server_does_not_serve_fails_the_managers_start_with_the_clients_message(
    config: Config, make_cm: Any
) -> None:
    make_cm("a")
    Missing = unserved("Missing")
    with config, pytest.raises(ConfigError) as first_call:  # what its first API call says today
        Missing.list()
    for declare in (
        lambda: Controller(Missing, config=config),
        lambda: Controller(ConfigMap, config=config).owns(Missing),
        lambda: Controller(ConfigMap, config=config).watch(Missing, lambda obj: None),
    ):
        ctl = declare()
        ctl.reconcile(lambda obj: None)
        manager = Manager(ctl, config=config, health_port=0)
        with pytest.raises(ConfigError) as failed:
            manager.start()
        assert str(failed.value) == str(first_call.value)
        assert f"Missing ({Missing.api_version}) is not registered with the server" in str(failed.value)
        assert manager.threads() == [] and not ctl.running and ctl.sources == {}


def test_a_cache_with_a_kind_the_server_does_not_serve_refuses_its_scope(
    fake_api_server: FakeAPIServer, fake_kubeconfig: Path
) -> None:
    Missing = unserved("Missing")
    cache = Cache(resources=[Missing, ConfigMap], tuning=FAST)
    config = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=cache)
    try:
        with pytest.raises(ConfigError, match=r"Missing \(dyn-missing-\d+\.example\.com/v1\) is not registered"):
            config.__enter__()
        assert not cache.started and cache.informer_for(Missing) is None
        assert [r for r in fake_api_server.requests if r.verb in ("list", "watch")] == []  # nothing started
        with pytest.raises(ConfigError, match="is not registered"):
            cache.start()  # Cache.start() outside a scope learns the same way
        assert not cache.started
    finally:
        config.close()


def test_a_dynamic_kind_served_later_is_learnt_at_the_next_start(
    fake_api_server: FakeAPIServer, config: Config
) -> None:
    group = f"dyn-later-{next(_groups)}.example.com"
    Late = get_dynamic_resource("Late", f"{group}/v1")
    ctl = Controller(Late, config=config)
    seen = threading.Event()
    ctl.reconcile(lambda obj: seen.set())
    with pytest.raises(ConfigError, match="is not registered"):
        ctl.start()
    fake_api_server.register_resource(group, "v1", "Late", "lates")  # the CRD is installed now
    fake_api_server.create("lates", {"apiVersion": f"{group}/v1", "kind": "Late", "metadata": {"name": "l"}}, "default")
    with ctl.start():
        assert seen.wait(10)
    assert Late.plural == "lates"


def test_declaring_a_non_resource_is_still_a_typed_error() -> None:
    with pytest.raises(TypeError, match="not a resource class"):
        Controller(object)
    with pytest.raises(TypeError, match=r"owns\(\): .* not a resource class \(it has no api_version\)"):
        Controller(ConfigMap).owns(type("NoVersion", (), {"kind": "X"}))
