"""Active-active sharding over the fake API server: replicas in one process, each with its own Config and Manager."""

from __future__ import annotations

import collections
import json
import threading
from typing import Iterator

import pytest
from _shard_support import SHARD, PassLog, Replica, configmaps, desired, settled
from cluster_support import FAST
from testing.webhook_helpers import AdmissionServer, configuration

from cloudcoil_cache.apimachinery import ObjectMeta, OwnerReference
from cloudcoil_cache.caching import Cache, NamespaceSelector
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, Ring
from cloudcoil_cache.controller._ring import HashRing, hash_key
from cloudcoil_cache.controller._sharder import FOLLOW, Sharded, Sharder
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Secret, ServiceAccount
from cloudcoil_cache.testing import FakeAPIServer, FakeClock

pytestmark = pytest.mark.xdist_group("sharding")  # several replicas each: not beside each other

N = 300
NAMES = ["replica-a", "replica-b", "replica-c"]


@pytest.fixture
def replicas(fake_kubeconfig) -> Iterator[list[Replica]]:
    made: list[Replica] = []
    yield made
    for replica in made:
        replica.stop()


def _seed(server: FakeAPIServer, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        server.create("configmaps", {"metadata": {"name": f"w-{i}", "namespace": "default"}, "data": {}}, "default")


def _start(replicas: list[Replica], kubeconfig, log: PassLog, names: list[str], **options) -> list[Replica]:
    started = [Replica(str(kubeconfig), name, log, **options) for name in names]
    replicas.extend(started)
    for replica in started:
        replica.start()
    return started


def _shares(server: FakeAPIServer) -> collections.Counter[str]:
    return collections.Counter((cm["metadata"].get("labels") or {}).get(SHARD) for cm in configmaps(server))


def test_three_replicas_reconcile_every_object_in_balanced_shares_never_at_once(
    fake_api_server, fake_kubeconfig, replicas
):
    _seed(fake_api_server, N)
    log = PassLog()
    _start(replicas, fake_kubeconfig, log, NAMES)  # one after the other: the first ones get all, then drain
    log.wait(lambda: settled(fake_api_server, log, NAMES), 60, "every object on its shard, reconciled there")
    shares = _shares(fake_api_server)
    assert set(shares) == set(NAMES)
    for name in NAMES:
        assert abs(shares[name] - N / 3) <= 0.15 * N / 3, shares
    assert not log.overlaps()
    # each replica caches only its share
    for replica in replicas:
        status = replica.controller.status()
        assert status.sharding is not None
        assert status.sharding.members == tuple(NAMES)
        assert status.sharding.share == shares[replica.name]
        held = replica.controller.sources[replica.controller.kind].view.list()
        assert {cm.metadata.labels[SHARD] for cm in held} == {replica.name}
    # whoever ran the sharder assigned them; the replicas that joined first let objects go through drains
    assert sum(r.controller.status().sharding.drains for r in replicas) > 0
    # the sharder caches only what has no shard label: nothing, once all are assigned
    sharders = [r.ring.sharder for r in replicas if r.ring.sharder is not None]
    assert len(sharders) <= 1 and all(sharder.held() == 0 for sharder in sharders)


def test_a_stopped_replica_releases_and_a_killed_one_expires_and_their_objects_move(
    fake_api_server, fake_kubeconfig, replicas
):
    _seed(fake_api_server, 150)
    log = PassLog()
    a, b, c = _start(replicas, fake_kubeconfig, log, NAMES)
    log.wait(lambda: settled(fake_api_server, log, NAMES), 60, "settled on three")
    assert not log.overlaps()
    # a graceful stop releases the Lease (empty holder): the others move its objects at once
    c.stop()
    lease = fake_api_server.get("leases", "replica-c", "default")
    assert not lease["spec"].get("holderIdentity")
    log.wait(lambda: settled(fake_api_server, log, NAMES[:2]), 30, "settled on two after a stop")
    # a killed replica: its Lease expires (lease_duration on the others' clocks), then its objects move
    b_objects = [
        cm["metadata"]["name"] for cm in configmaps(fake_api_server) if cm["metadata"]["labels"][SHARD] == "replica-b"
    ]
    assert b_objects
    b.kill()
    log.wait(lambda: not b.controller.running, 10, "the killed replica's workers stopped (its writes fenced)")
    log.wait(lambda: settled(fake_api_server, log, NAMES[:1]), 30, "settled on one after a kill")
    assert all(log.last_by(f"default/{name}") == "replica-a" for name in b_objects)
    assert not log.overlaps()
    assert a.ring.membership.states()["replica-b"] == "expired"
    assert a.ring.membership.states()["replica-c"] == "dead"


def test_a_fourth_replica_takes_about_a_quarter_each_through_a_drain(fake_api_server, fake_kubeconfig, replicas):
    _seed(fake_api_server, N)
    log = PassLog()
    finalized: list[str] = []  # leaving a replica's selector arrives as DELETED: never a deletion
    _start(replicas, fake_kubeconfig, log, NAMES, finalizer=finalized)
    log.wait(lambda: settled(fake_api_server, log, NAMES), 60, "settled on three")
    before = {cm["metadata"]["name"]: cm["metadata"]["labels"][SHARD] for cm in configmaps(fake_api_server)}
    drains_before = sum(r.controller.status().sharding.drains for r in replicas)
    four = [*NAMES, "replica-d"]
    _start(replicas, fake_kubeconfig, log, ["replica-d"], finalizer=finalized)
    log.wait(lambda: settled(fake_api_server, log, four), 60, "settled on four")
    after = {cm["metadata"]["name"]: cm["metadata"]["labels"][SHARD] for cm in configmaps(fake_api_server)}
    moved = [name for name in before if before[name] != after[name]]
    assert all(after[name] == "replica-d" for name in moved)
    assert 0.15 * N <= len(moved) <= 0.35 * N
    # each move went through a drain acknowledged by its old replica
    drains = sum(r.controller.status().sharding.drains for r in replicas[:3]) - drains_before
    assert drains == len(moved)
    assert not log.overlaps()
    assert finalized == []
    assert all(cm["metadata"]["finalizers"] == ["example.com/cleanup"] for cm in configmaps(fake_api_server))
    for name in moved:  # the old replica's passes all ended before the new one's first began
        passes = log.passes[f"default/{name}"]
        old_end = max(p[2] for p in passes if p[0] == before[name])
        new_start = min(p[1] for p in passes if p[0] == "replica-d")
        assert old_end <= new_start


def test_objects_created_without_a_webhook_are_assigned_by_the_sharder_and_metrics_show_the_ring(
    fake_api_server, fake_kubeconfig, replicas
):
    log = PassLog()
    made = [Replica(str(fake_kubeconfig), name, log, health=True) for name in NAMES[:2]]
    replicas.extend(made)
    for replica in made:
        replica.start()
    _seed(fake_api_server, 40)  # no webhook: created without a shard label
    log.wait(lambda: settled(fake_api_server, log, NAMES[:2]), 30, "assigned and reconciled")
    # the sharder's counts are on the replica that ran it
    sharder = max(made, key=lambda r: r.controller.status().sharding.assigned)
    assert sharder.controller.status().sharding.assigned >= 40
    shares = _shares(fake_api_server)
    for replica in made:
        text = replica.metrics()
        assert 'cloudcoil_cache_shard_members{ring="widgets"} 2.0' in text
        assert f'cloudcoil_cache_shard_lease_held{{identity="{replica.name}",ring="widgets"}} 1.0' in text
        assert f'cloudcoil_cache_shard_objects{{name="widgets",ring="widgets"}} {float(shares[replica.name])}' in text
    assigned = sharder.controller.status().sharding.assigned
    assert (
        f'cloudcoil_cache_sharder_writes_total{{ring="widgets",what="assigned"}} {float(assigned)}' in sharder.metrics()
    )


def test_fallback_mode_without_labels_reconciles_each_key_on_its_hash_owner(fake_api_server, fake_kubeconfig, replicas):
    _seed(fake_api_server, 60)
    log = PassLog()
    made = [Replica(str(fake_kubeconfig), name, log, labels=False) for name in NAMES[:2]]
    replicas.extend(made)
    for replica in made:
        replica.start()
    log.wait(
        lambda: all(log.last_by(f"default/w-{i}") == desired(NAMES[:2], f"w-{i}") for i in range(60)),
        30,
        "each key reconciled by its hash owner",
    )
    # no labels written: every replica watches all
    assert all(SHARD not in (cm["metadata"].get("labels") or {}) for cm in configmaps(fake_api_server))
    for replica in made:
        assert len(replica.controller.sources[replica.controller.kind].view.list()) == 60
        assert replica.controller.status().sharding.mode == "hash"


def test_the_webhook_labels_objects_as_they_are_created_and_the_sharder_covers_while_it_is_down(
    fake_api_server, fake_kubeconfig, replicas, config
):
    log = PassLog()
    a = Replica(str(fake_kubeconfig), NAMES[0], log, webhook=True)
    b = Replica(str(fake_kubeconfig), NAMES[1], log)
    replicas.extend([a, b])
    a.start()
    b.start()
    log.wait(lambda: a.ring.members == tuple(NAMES[:2]), 20, "both members seen by the webhook's replica")
    assert a.webhook is not None and a.server is not None
    fake_api_server.create("namespaces", {"metadata": {"name": "default"}})  # its selector names the namespace
    a.webhook.install(config, name="shards.example.com", server=a.server)
    for i in range(20):  # through the API (the webhook is called), not the fake's direct object API
        made = ConfigMap.client(config).create(ConfigMap(metadata=ObjectMeta(name=f"hooked-{i}", namespace="default")))
        assert made.metadata.labels[SHARD] == desired(NAMES[:2], f"hooked-{i}")  # labelled in the CREATE
    log.wait(lambda: settled(fake_api_server, log, NAMES[:2]), 30, "reconciled where the webhook put them")
    fake_api_server.create("namespaces", {"metadata": {"name": "elsewhere"}})  # not the controller's namespace
    other = ConfigMap.client(config).create(ConfigMap(metadata=ObjectMeta(name="other", namespace="elsewhere")))
    assert SHARD not in (other.metadata.labels or {})
    # the sharder had nothing to assign (its counts are on whichever replica ran it)
    assert sum(r.controller.status().sharding.assigned for r in replicas) == 0
    # the webhook goes down with its replica (failurePolicy Ignore: objects are created unlabelled)
    a.stop()
    for i in range(20):
        made = ConfigMap.client(config).create(
            ConfigMap(metadata=ObjectMeta(name=f"unhooked-{i}", namespace="default"))
        )
        assert SHARD not in (made.metadata.labels or {})
    log.wait(lambda: settled(fake_api_server, log, NAMES[1:2]), 30, "the sharder assigned them")
    assert not log.overlaps()


def test_a_standalone_controller_in_a_ring_of_one_holds_every_object_and_releases_its_lease(
    fake_api_server, config, make_cm
):
    for i in range(10):
        make_cm(f"solo-{i}")
    log = PassLog()
    ring = Ring("solo", identity="solo-0", lease_duration=4, renew_deadline=3, retry_period=0.3, resync_period=1)
    ctl = Controller(ConfigMap, config=config, sharding=ring)
    ctl.reconcile(log.reconcile("solo-0"))
    with ctl:
        assert ctl.running  # a standalone start returns with the workers running
        log.wait(lambda: all(log.last_by(f"default/solo-{i}") == "solo-0" for i in range(10)), 20, "all reconciled")
        status = ctl.status().sharding
        assert (status.holds, status.members, status.share) == (True, ("solo-0",), 10)
        labels = [cm["metadata"]["labels"] for cm in configmaps(fake_api_server)]
        assert all(lbl == {"shard.cloudcoil.dev/solo": "solo-0"} for lbl in labels)
    assert not fake_api_server.get("leases", "solo-0", "default")["spec"].get("holderIdentity")
    assert fake_api_server.get("leases", "solo-0", "default")["metadata"]["labels"] == {"cloudcoil.dev/ring": "solo"}


def test_the_sharders_whole_look_moves_a_child_to_its_owners_shard(fake_api_server, config, make_cm) -> None:
    """A child (a Secret controlled by a ConfigMap) labelled with a dead shard follows its owner's shard at
    the sharder's look at every object that assigns the owner (read from raw metadata pages); one of another
    owner kind is left."""
    owner = make_cm("owner-0")
    label = "shard.cloudcoil.dev/kin"
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner-0", "uid": owner["metadata"]["uid"]}
    other = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "owner-0", "uid": "u-1"}
    for name, owner_ref in (("child", ref), ("stranger", other)):
        meta = {"name": name, "namespace": "default", "labels": {label: "gone"}}
        meta["ownerReferences"] = [{**owner_ref, "controller": True}]
        fake_api_server.create("secrets", {"metadata": meta, "data": {}}, "default")
    # (no second whole look: the unlabelled owner is assigned, and its child follows it, in the first)
    ring = Ring("kin", identity="kin-0", lease_duration=4, renew_deadline=3, retry_period=0.3, resync_period=300)
    ctl = Controller(ConfigMap, config=config, sharding=ring).owns(Secret)
    ctl.reconcile(lambda ctx: None)

    def labels(name: str) -> dict[str, str]:
        return fake_api_server.get("secrets", name, "default")["metadata"].get("labels") or {}

    with ctl:
        PassLog().wait(lambda: labels("child").get(label) == "kin-0", 20, "the child moved to its owner's shard")
        assert fake_api_server.get("configmaps", "owner-0", "default")["metadata"]["labels"][label] == "kin-0"
        assert labels("stranger") == {label: "gone"}
        assert ctl.status().sharding.moves >= 1


def test_an_owner_assigned_from_the_unlabelled_ones_brings_its_labelled_child_at_the_follow_look(
    fake_api_server, config, make_cm
) -> None:
    """An unlabelled owner is assigned at once; its child labelled with another (live) shard follows at one
    look at that kind ``FOLLOW`` seconds later on the sharder's clock, not at once and not at the resync."""
    ring = HashRing(("kin-0", "kin-1"), 100)
    name = next(f"o-{i}" for i in range(100) if ring.owner(hash_key("", "ConfigMap", "default", f"o-{i}")) == "kin-0")
    label = "shard.cloudcoil.dev/kin"
    cond = threading.Condition()
    counted: list[str] = []

    def count(what: str) -> None:
        with cond:
            counted.append(what)
            cond.notify_all()

    def wait_count(n: int) -> list[str]:
        with cond:
            assert cond.wait_for(lambda: len(counted) >= n, 20), counted
            return list(counted)

    clock = FakeClock()
    sharder = Sharder(
        "kin",
        [Sharded(ConfigMap, "default", (Secret,))],
        members=lambda: ring,
        clock=clock,
        resync_period=300,
        counted=count,
    )
    sharder.start(config)
    try:
        assert clock.wait_for_sleepers(1)  # the first whole look is done (nothing to do)
        owner = make_cm(name)
        ref = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": name,
            "uid": owner["metadata"]["uid"],
            "controller": True,
        }
        meta = {"name": "child", "namespace": "default", "labels": {label: "kin-1"}, "ownerReferences": [ref]}
        fake_api_server.create("secrets", {"metadata": meta, "data": {}}, "default")
        assert wait_count(1) == ["assigned"]
        assert fake_api_server.get("configmaps", name, "default")["metadata"]["labels"] == {label: "kin-0"}
        assert fake_api_server.get("secrets", "child", "default")["metadata"]["labels"] == {label: "kin-1"}
        assert clock.wait_for_sleepers(1)
        clock.advance(FOLLOW)
        assert wait_count(2) == ["assigned", "moved"]
        assert fake_api_server.get("secrets", "child", "default")["metadata"]["labels"] == {label: "kin-0"}
    finally:
        sharder.stop()


def test_a_ring_over_a_namespace_selector_reconciles_and_labels_only_the_selected_namespaces(
    fake_api_server, fake_kubeconfig
) -> None:
    """A sharded controller over ``Cache(namespaces=NamespaceSelector(...))``: its own (label-selected)
    informers follow the selector themselves (nothing else starts the Config's cache), and the sharder
    lists and labels only the namespaces of the set, following it."""
    for ns, labels in (("a", {"team": "x"}), ("b", {})):
        fake_api_server.create("namespaces", {"metadata": {"name": ns, "labels": labels}})
        fake_api_server.create("configmaps", {"metadata": {"name": f"cm-{ns}", "namespace": ns}, "data": {}}, ns)
    cache = Cache(resources=[ConfigMap], namespaces=NamespaceSelector("team=x"), tuning=FAST)
    config = Config(kubeconfig=str(fake_kubeconfig), namespace="default", cache=cache)
    ring = Ring("sel", identity="sel-0", lease_duration=4, renew_deadline=3, retry_period=0.3, resync_period=300)
    ctl = Controller(ConfigMap, config=config, sharding=ring).owns(Secret)
    log = PassLog()
    ctl.reconcile(log.reconcile("sel-0"))
    label = "shard.cloudcoil.dev/sel"

    def labels(ns: str) -> dict[str, str]:
        return fake_api_server.get("configmaps", f"cm-{ns}", ns)["metadata"].get("labels") or {}

    try:
        with ctl:
            log.wait(lambda: log.last_by("a/cm-a") == "sel-0", 20, "cm-a reconciled")
            assert ctl.status().namespaces == ("a",)
            assert labels("a") == {label: "sel-0"}
            assert labels("b") == {}  # outside the set: the sharder never wrote it
            fake_api_server.patch("namespaces", "b", {"metadata": {"labels": {"team": "x"}}})
            log.wait(lambda: log.last_by("b/cm-b") == "sel-0", 20, "cm-b reconciled once b is selected")
            assert labels("b") == {label: "sel-0"}
    finally:
        config.close()


def test_a_reconciles_creates_carry_the_shard_the_webhook_would_give(fake_api_server, config) -> None:
    """In a ring of kin-0 (this replica) and kin-1 (another's Lease): a reconcile's plain ``create`` of a
    primary-kind object sends the member the ring gives its own key, of a child of an owned kind its
    owner's shard, of another kind nothing; generateName and labels given by the caller are left alone."""
    label = "shard.cloudcoil.dev/kin"
    lease = {
        "metadata": {"name": "kin-1", "namespace": "default", "labels": {"cloudcoil.dev/ring": "kin"}},
        "spec": {"holderIdentity": "kin-1", "leaseDurationSeconds": 600, "renewTime": "2026-01-01T00:00:00.000000Z"},
    }
    fake_api_server.create("leases", lease, "default")
    both = HashRing(("kin-0", "kin-1"), 400)

    def named(member: str, prefix: str) -> str:
        return next(
            f"{prefix}-{i}"
            for i in range(200)
            if both.owner(hash_key("", "ConfigMap", "default", f"{prefix}-{i}")) == member
        )

    parent, ours, theirs = named("kin-0", "parent"), named("kin-0", "ours"), named("kin-1", "theirs")
    fake_api_server.create("configmaps", {"metadata": {"name": parent, "namespace": "default"}}, "default")
    ring = Ring("kin", identity="kin-0", lease_duration=4, renew_deadline=3, retry_period=0.3)
    ctl = Controller(ConfigMap, config=config, sharding=ring).owns(Secret).owns(ConfigMap)
    done = threading.Event()

    @ctl.reconcile()
    def reconcile(cm, ctx):
        if cm.name != parent or done.is_set():
            return None
        ref = OwnerReference(api_version="v1", kind="ConfigMap", name=parent, uid=cm.metadata.uid, controller=True)
        for name in (ours, theirs):
            ConfigMap(metadata=ObjectMeta(name=name, namespace="default", owner_references=[ref])).create()
        ConfigMap(metadata=ObjectMeta(generate_name="gen-", namespace="default")).create()
        ConfigMap(metadata=ObjectMeta(name="mine", namespace="default", labels={label: "kin-1"})).create()
        Secret(metadata=ObjectMeta(name="child", namespace="default", owner_references=[ref])).create()
        ServiceAccount(metadata=ObjectMeta(name="sa", namespace="default", owner_references=[ref])).create()
        done.set()
        return None

    with ctl:
        assert ctl.status().sharding.members == ("kin-0", "kin-1")
        assert done.wait(20)
    sent = {}
    for r in fake_api_server.requests:
        if r.verb == "create" and r.path.endswith(("/configmaps", "/secrets", "/serviceaccounts")):
            meta = json.loads(r.body)["metadata"]
            sent[meta.get("name") or meta["generateName"]] = (meta.get("labels") or {}).get(label)
    assert sent == {
        ours: "kin-0",  # (a ConfigMap child of a ConfigMap is a primary: its own key decides)
        theirs: "kin-1",
        "gen-": None,  # no name, no key: the sharder assigns it
        "mine": "kin-1",  # the caller's own label
        "child": "kin-0",  # the owner's shard
        "sa": None,  # not a kind of the controller
    }


class _TimeoutsClock(FakeClock):
    """A FakeClock that keeps the timeout of every wait (what the sharder sleeps before its next look)."""

    def __init__(self) -> None:
        super().__init__()
        self.timeouts: list[float | None] = []

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        self.timeouts.append(timeout)
        return super().wait(event, timeout)


def test_the_sharders_looks_back_off_while_a_write_is_refused_and_recover_once_it_goes_through(
    fake_api_server, config
) -> None:
    """A validating webhook refuses every label write to one object (of a dead shard): the sharder's
    whole looks come 0.5 s, 1, 2, 4 ... up to 30 s apart on its clock, each trying that write once; once
    the webhook is gone, the write goes through and the next look is at the resync."""
    label = "shard.cloudcoil.dev/kin"
    fake_api_server.create(
        "configmaps",
        {"metadata": {"name": "locked", "namespace": "default", "labels": {label: "gone", "locked": "y"}}},
        "default",
    )
    with AdmissionServer(read_url=fake_api_server.url) as hook:
        refuse = configuration(
            "ValidatingWebhookConfiguration",
            "refuse.probe.io",
            hook.url("/deny"),
            hook.ca_bundle,
            operations=("UPDATE",),
            object_selector={"matchLabels": {"locked": "y"}},
        )
        fake_api_server.create("validatingwebhookconfigurations", refuse)
        clock = _TimeoutsClock()
        counted: list[str] = []
        sharder = Sharder(
            "kin",
            [Sharded(ConfigMap, "default")],
            members=lambda: HashRing(("kin-0",), 100),
            clock=clock,
            resync_period=300,
            counted=counted.append,
        )

        def refused(n: int) -> None:
            assert hook.wait_for(lambda path, request: True, 20, since=n - 1), f"refused write {n}"

        sharder.start(config)
        try:
            expected = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
            for n, pause in enumerate(expected, start=1):
                refused(n)  # this look's one write, refused
                assert clock.wait_for_sleepers(1)
                assert clock.timeouts[-1] == pytest.approx(pause), clock.timeouts
                assert len(hook.reviews) == n  # (one write per look: no retry in between)
                clock.advance(pause)
            refused(len(expected) + 1)
            assert counted == []
            assert fake_api_server.get("configmaps", "locked", "default")["metadata"]["labels"][label] == "gone"
            fake_api_server.delete("validatingwebhookconfigurations", "refuse.probe.io")
            assert clock.wait_for_sleepers(1)
            clock.advance(30.0)
            PassLog().wait(lambda: counted == ["moved"], 20, "the write went through once the webhook was gone")
            assert fake_api_server.get("configmaps", "locked", "default")["metadata"]["labels"][label] == "kin-0"
            assert clock.wait_for_sleepers(1)
            assert clock.timeouts[-1] == pytest.approx(300), clock.timeouts  # back to the resync
        finally:
            sharder.stop()
