"""The controller layer against a real kube-apiserver + etcd (the real tier; skipped without binaries)."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path
from typing import Iterator

import pytest
from _controller_support import Calls
from cluster_support import FAST

from cloudcoil_cache.apimachinery import ObjectMeta, OwnerReference
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, LeaderElection, Manager
from cloudcoil_cache.models.kubernetes.coordination.v1 import Lease
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap

pytestmark = pytest.mark.real
_namespaces = itertools.count()


@pytest.fixture
def real_config(real_api_server, tmp_path: Path) -> Iterator[Config]:
    name = f"controller-{next(_namespaces)}"
    status, body = real_api_server.request(
        "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    assert status == 201, body
    kubeconfig = real_api_server.write_kubeconfig(tmp_path / "kubeconfig", namespace=name)
    config = Config(kubeconfig=kubeconfig, namespace=name, cache=Cache(resources=[], tuning=FAST))
    yield config
    config.close()


def test_mirror_controller_on_a_real_server(real_config):
    ns = real_config.namespace
    ctl = Controller(ConfigMap, config=real_config, label_selector="mirror=yes").owns(ConfigMap)
    seen = Calls()

    @ctl.reconcile()
    def sync(cm, ctx):
        copy = ctx.cached(ConfigMap).get(f"{cm.name}-copy")
        seen.add((cm.name, copy.data if copy is not None else None))
        if copy is None:
            owner = OwnerReference(
                api_version="v1", kind="ConfigMap", name=cm.name, uid=cm.metadata.uid, controller=True
            )
            ConfigMap(
                metadata=ObjectMeta(name=f"{cm.name}-copy", namespace=cm.namespace, owner_references=[owner]),
                data=cm.data,
            ).create()
        elif copy.data != cm.data:
            copy.data = cm.data
            copy.update()

    with real_config:
        ConfigMap(metadata=ObjectMeta(name="app", namespace=ns, labels={"mirror": "yes"}), data={"v": "1"}).create()
    with Manager(ctl, config=real_config):
        seen.wait(lambda s: ("app", {"v": "1"}) in s, timeout=30)  # the copy's event brought the owner back
        with real_config:
            source = ConfigMap.get("app", namespace=ns).copy()
            source.data = {"v": "2"}
            source.update()
        seen.wait(lambda s: ("app", {"v": "2"}) in s, timeout=30)
    with real_config:
        with real_config.cache.pause():
            assert ConfigMap.get("app-copy", namespace=ns).data == {"v": "2"}


def test_leader_election_on_a_real_lease_hands_over_on_release(real_config):
    ns = real_config.namespace
    calls = Calls()
    managers = []
    for identity in ("one", "two"):
        ctl = Controller(ConfigMap, config=real_config)
        ctl.reconcile(lambda cm, ctx, identity=identity: calls.add(identity))
        managers.append(
            Manager(
                ctl,
                config=real_config,
                leader_election=LeaderElection(
                    "real-lease", identity=identity, lease_duration=4, renew_deadline=3, retry_period=0.3
                ),
            )
        )
    first_leads, second_leads = threading.Event(), threading.Event()
    managers[0].leader_election.on_started_leading = first_leads.set
    managers[1].leader_election.on_started_leading = second_leads.set
    try:
        managers[0].start()
        assert first_leads.wait(30)
        managers[1].start()
        with real_config, real_config.cache.pause():
            lease = Lease.get("real-lease", namespace=ns)
        assert lease.spec.holder_identity == "one" and lease.spec.lease_transitions == 0
        assert managers[1].leader_election.leader == "one" or not second_leads.is_set()
        managers[0].stop()  # releases: the standby takes over at its next attempt
        assert second_leads.wait(10)
        with real_config, real_config.cache.pause():
            lease = Lease.get("real-lease", namespace=ns)
        assert lease.spec.holder_identity == "two" and lease.spec.lease_transitions == 1
        assert lease.spec.lease_duration_seconds == 4
    finally:
        for manager in managers:
            manager.stop()
    with real_config, real_config.cache.pause():
        assert not Lease.get("real-lease", namespace=ns).spec.holder_identity
