"""``Config.refresh_api_resources()`` and its async twin: discovery read again, dynamic kinds (re)bound."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import Forbidden
from cloudcoil_cache.resources import Resource, get_dynamic_resource
from cloudcoil_cache.testing import FakeAPIServer

_groups = itertools.count()


def _group() -> str:
    """A group of the test's own: dynamic classes are per process, shared by every test."""
    return f"r{next(_groups)}.refresh.example.com"


def _crd(group: str, kind: str = "Gadget", plural: str = "gadgets", **options: Any) -> dict[str, Any]:
    scope = options.get("scope", "Namespaced")
    subresources = options.get("subresources", {"status": {}})
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": plural, "kind": kind},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": subresources,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }


def _discovery_gets(server: FakeAPIServer, group: str) -> int:
    return sum(1 for r in server.requests if r.path == f"/apis/{group}/v1")


def test_a_kind_served_after_its_class_was_made_is_bound_by_a_refresh(server: FakeAPIServer, config: Config) -> None:
    group = _group()
    Gadget = get_dynamic_resource("Gadget", f"{group}/v1")
    config.refresh_api_resources()  # nothing served yet: it stays unbound, no error
    assert Gadget.plural is None and _discovery_gets(server, group) == 1
    server.create("customresourcedefinitions", _crd(group, subresources={"status": {}, "scale": _SCALE}))

    config.refresh_api_resources()

    assert (Gadget.plural, Gadget.namespaced, Gadget.subresources) == ("gadgets", True, {"status", "scale"})
    assert _discovery_gets(server, group) == 2
    with config:  # bound already: the create sends no discovery request
        Gadget(metadata={"name": "g", "namespace": "default"}, spec={"size": 1}).create()
    assert _discovery_gets(server, group) == 2
    assert server.get(f"gadgets.{group}", "g", "default")["spec"] == {"size": 1}


_SCALE = {"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size"}


def test_a_crd_made_again_with_another_scope_and_subresources_is_rebound(server: FakeAPIServer, config: Config) -> None:
    group = _group()
    server.create("customresourcedefinitions", _crd(group, subresources={"status": {}, "scale": _SCALE}))
    Gadget = get_dynamic_resource("Gadget", f"{group}/v1")
    with config:
        Gadget(metadata={"name": "g", "namespace": "default"}).create()  # bound at first use
    assert (Gadget.namespaced, Gadget.subresources) == (True, {"status", "scale"})
    server.delete("customresourcedefinitions", f"gadgets.{group}")
    server.create("customresourcedefinitions", _crd(group, scope="Cluster", subresources={}))

    config.refresh_api_resources()

    assert (Gadget.plural, Gadget.namespaced, Gadget.subresources) == ("gadgets", False, frozenset())
    with config:
        Gadget(metadata={"name": "c"}).create()
    assert server.get(f"gadgets.{group}", "c")["metadata"]["name"] == "c"


def test_a_kind_no_longer_served_keeps_its_binding_and_a_declared_plural_is_never_changed(
    server: FakeAPIServer, config: Config
) -> None:
    group = _group()
    server.create("customresourcedefinitions", _crd(group))
    Gadget = get_dynamic_resource("Gadget", f"{group}/v1")

    class Declared(Resource):  # a user's class that declares what discovery would say otherwise
        api_version: str = f"{group}/v1"
        kind: str = "Gadget"
        plural = "widgets"
        namespaced = False

    config.refresh_api_resources()
    server.delete("customresourcedefinitions", f"gadgets.{group}")
    config.refresh_api_resources()  # the group version is gone (404): nothing changes

    assert (Gadget.plural, Gadget.namespaced) == ("gadgets", True)
    assert (Declared.plural, Declared.namespaced) == ("widgets", False)


def test_a_failing_group_version_is_raised_after_the_others_are_refreshed(
    server: FakeAPIServer, config: Config
) -> None:
    failing, working = "a" + _group(), "b" + _group()  # the failing one is read first
    for group in (failing, working):
        server.create("customresourcedefinitions", _crd(group))
    Broken = get_dynamic_resource("Gadget", f"{failing}/v1")
    Fine = get_dynamic_resource("Gadget", f"{working}/v1")
    server.fail_next(1, 403, path=f"/apis/{failing}/v1")

    with pytest.raises(Forbidden):
        config.refresh_api_resources()

    assert Broken.plural is None and Fine.plural == "gadgets"


def test_the_async_twin_refreshes_off_the_event_loop(server: FakeAPIServer, config: Config) -> None:
    group = _group()
    server.create("customresourcedefinitions", _crd(group))
    Gadget = get_dynamic_resource("Gadget", f"{group}/v1")
    config.initialize()

    async def main() -> int:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        ticker = asyncio.create_task(tick())
        await config.async_refresh_api_resources()  # the loop keeps running while the server holds the answer
        ticker.cancel()
        return ticks

    with server.delay(0.5):
        ticks = asyncio.run(main())
    assert ticks >= 10
    assert Gadget.plural == "gadgets" and _discovery_gets(server, group) == 1
