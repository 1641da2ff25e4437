"""Fixtures for the controller tests: a Config on the fake API server whose caches use fast timings."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from cluster_support import FAST

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, Ring
from cloudcoil_cache.testing import FakeAPIServer


@pytest.fixture
def config(fake_kubeconfig: Path) -> Iterator[Config]:
    """A Config (namespace ``default``) with an empty cache of fast timings, which the controllers'
    own caches inherit."""
    cfg = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=Cache(resources=[], tuning=FAST))
    yield cfg
    cfg.close()


#: ``CLOUDCOIL_TEST_RING_OF_ONE=1``: every Controller a test makes without ``sharding=`` is sharded by a
#: ring of one replica (one ring per test), so the whole controller suite shows what a ring of one
#: changes (issue 36: "a ring of one replica behaves exactly like today's unsharded controller").
RING_OF_ONE = os.environ.get("CLOUDCOIL_TEST_RING_OF_ONE") == "1"


_UNSET: Any = object()


def _solo_ring() -> Ring:
    return Ring("solo", identity="solo-0", lease_duration=4, renew_deadline=3, retry_period=0.3, resync_period=1)


@pytest.fixture(autouse=RING_OF_ONE)
def every_controller_a_ring_of_one(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """(Only with ``CLOUDCOIL_TEST_RING_OF_ONE=1``.) ``Controller(...)`` without ``sharding=`` gets the
    test's ring of one: a configuration the test did not write, not a change of what the code does.
    The sharding tests themselves (``test_shard*.py``) build their own rings and are left as they are."""
    if request.path.name.startswith("test_shard"):
        return
    made = Controller.__init__
    ring: list[Ring] = []

    @functools.wraps(made)
    def init(self: Controller, *args: Any, sharding: Any = _UNSET, **options: Any) -> None:
        if sharding is _UNSET:  # (an explicit sharding=None, as the sharding fixture's "unsharded", is kept)
            ring[:] = ring or [_solo_ring()]
            sharding = ring[0]
        made(self, *args, sharding=sharding, **options)

    monkeypatch.setattr(Controller, "__init__", init)


@pytest.fixture(params=["unsharded", "ring-of-one"])
def sharding(request: pytest.FixtureRequest) -> Ring | None:
    """Run a test unsharded and again as a ring of one replica (``Controller(sharding=...)``): a ring
    of one must behave as the unsharded controller (objects are labelled by its sharder first)."""
    if request.param == "unsharded":
        return None
    return _solo_ring()


@pytest.fixture
def make_cm(fake_api_server: FakeAPIServer) -> Callable[..., dict[str, Any]]:
    """``make_cm(name, data=None, labels=None, owner=None, namespace="default")`` creates a ConfigMap on
    the server; ``owner`` (a server dict) adds a controller ownerReference to it."""

    def make(
        name: str,
        data: dict[str, str] | None = None,
        labels: dict[str, str] | None = None,
        owner: dict[str, Any] | None = None,
        namespace: str = "default",
        **owner_ref: Any,
    ) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name, "namespace": namespace}
        if labels:
            meta["labels"] = labels
        if owner is not None:
            ref = {
                "apiVersion": owner.get("apiVersion", "v1"),
                "kind": owner.get("kind", "ConfigMap"),
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
            }
            ref.update(owner_ref)
            meta["ownerReferences"] = [ref]
        return fake_api_server.create("configmaps", {"metadata": meta, "data": data or {}}, namespace)

    return make
