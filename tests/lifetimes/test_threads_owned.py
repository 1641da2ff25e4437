"""One lifecycle: every thread the library starts is a runnable's, registered with its owner, and joined on stop.

A representative workload over the fake API server (a cached Config with informers and a handler, a
Manager with a controller, leader election, a health server and an admission webhook server, the
asyncio adapter, a watch with a stop event) is sampled at each step: every thread alive that the test
did not have before (other than the fake server's own) must be in ``_runnable.library_threads()``.
When everything is stopped, none of the threads the library started is alive (no grace join here:
``no_leaked_threads`` would hide a thread left to end on its own).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import ssl
import threading
import urllib.request
from pathlib import Path
from typing import Any

from cluster_support import FAST

from cloudcoil_cache import _runnable
from cloudcoil_cache.admission import AdmissionWebhook, WebhookServer
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, LeaderElection, Manager
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.testing import FakeAPIServer

WAIT = 10.0


class Sampler:
    """Every thread seen alive that the test did not start: the library's (registered) or the fake server's."""

    def __init__(self) -> None:
        self.before = set(threading.enumerate())
        self.seen: dict[threading.Thread, str] = {}  # library threads, with their owners
        self.unowned: set[str] = set()

    def sample(self, step: str) -> None:
        owners = _runnable.library_threads()
        for thread in threading.enumerate():
            if thread in self.before or thread.name.startswith("fake-apiserver"):
                continue
            if thread in owners:
                self.seen[thread] = owners[thread]
            elif thread.is_alive():
                self.unowned.add(f"{thread.name} (at {step})")


def _review(name: str) -> bytes:
    request = {
        "uid": "u1",
        "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "operation": "CREATE",
        "namespace": "default",
        "name": name,
        "userInfo": {"username": "test"},
        "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}},
    }
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}).encode()


def _admit(server: WebhookServer, name: str) -> dict[str, Any]:
    context = ssl.create_default_context(cadata=server.ca_bundle.decode())
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=context, timeout=WAIT)
    try:
        conn.request("POST", "/validate", body=_review(name), headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == 200
        return json.loads(response.read())  # type: ignore[no-any-return]
    finally:
        conn.close()


def test_every_library_thread_is_owned_by_a_runnable_and_joined_on_stop(
    fake_api_server: FakeAPIServer, fake_kubeconfig: Path
) -> None:
    started_before = _runnable.started_count()
    sampler = Sampler()
    fake_api_server.create("configmaps", {"metadata": {"name": "one", "namespace": "default"}}, "default")
    config = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=Cache(resources=[], tuning=FAST))
    try:
        # a cache: an informer (reflector thread) and a handler (its lane's thread)
        assert config.cache is not None
        informer = config.cache.get_informer(ConfigMap, sync=True)
        added = threading.Event()
        informer.on_add(lambda cm: added.set())  # type: ignore[union-attr]
        assert isinstance(config.cache, _runnable.Runnable)
        with config:
            assert added.wait(WAIT)
            sampler.sample("cache")
            names = sorted(t.name.partition("#")[0] for t in config.cache.threads())
            assert names == ["cloudcoil-handlers-configmaps@*", "cloudcoil-reflector-configmaps@*"], names

            # a Manager: a controller (workers), leader election, a health server, an admission webhook
            reconciled = threading.Event()
            controller = Controller(ConfigMap, config=config)
            controller.reconcile(lambda cm: reconciled.set())
            webhook = AdmissionWebhook(config=config, max_concurrency=2)
            validated: list[str] = []

            @webhook.validating(ConfigMap, path="/validate")
            def validate(request: Any) -> None:
                validated.append(threading.current_thread().name)

            server = WebhookServer(webhook, port=0, max_concurrency=2)
            election = LeaderElection(
                "owned-threads", namespace="default", lease_duration=4, renew_deadline=3, retry_period=0.5
            )
            manager = Manager(controller, webhooks=server, config=config, leader_election=election, health_port=0)
            with manager:
                assert reconciled.wait(WAIT)
                with urllib.request.urlopen(f"http://127.0.0.1:{manager.health_port}/readyz", timeout=WAIT) as answer:
                    assert answer.status == 200
                assert isinstance(server, _runnable.Runnable) and server.ready()
                review = _admit(server, "two")
                assert review["response"]["allowed"] is True and validated
                sampler.sample("manager")
            sampler.sample("manager stopped")

            # the asyncio adapter: reads through the library's executors; a watch with a stop event
            async def use_async() -> None:
                assert [cm.name for cm in await ConfigMap.async_list()] == ["one"]
                # an async scope: entered and left on the library's executors
                other = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=Cache(tuning=FAST))
                async with other:
                    assert [cm.name for cm in await ConfigMap.async_list()] == ["one"]
                    sampler.sample("async")

            asyncio.run(use_async())
            stop = threading.Event()
            for event in ConfigMap.watch(namespace="default", _stop_event=stop):
                sampler.sample("watch")
                stop.set()
                break
    finally:
        config.close()
    sampler.sample("closed")
    assert config.cache.threads() == []
    assert not sampler.unowned, f"threads started outside cloudcoil_cache._runnable: {sorted(sampler.unowned)}"
    owners = set(sampler.seen.values())
    expected_owners = (
        "informer",
        "handler lane",
        "controller",
        "leader election",
        "health server",
        "webhook server",
        "cloudcoil-admission-loop",
        "cloudcoil-control pool",
        "watch of ConfigMap",
    )
    for expected in expected_owners:
        assert any(owner.startswith(expected) for owner in owners), (expected, owners)
    assert _runnable.started_count() - started_before >= len(sampler.seen)
    # a watch's stop-event relay is the one thread no owner joins (a watch's close() never waits):
    # it ends by itself within 0.5 s of the watch (a bound here, with room for a loaded machine)
    detached = [t for t in sampler.seen if getattr(t, "detached", False)]
    assert [t.name for t in detached] == ["cloudcoil-watch-stop-ConfigMap"]
    for thread in detached:
        thread.join(WAIT)
    alive = sorted(f"{t.name} ({owner})" for t, owner in sampler.seen.items() if t.is_alive())
    assert not alive, f"library threads still running after everything was stopped: {alive}"
