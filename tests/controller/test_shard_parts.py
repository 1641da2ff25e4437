"""Sharding's parts without replicas: Lease states, widest() with a shard requirement, bad arguments named."""

from __future__ import annotations

import pytest

from cloudcoil_cache.controller import Controller, LeaderElection, Manager, Ring
from cloudcoil_cache.controller._informers import Scope, widest
from cloudcoil_cache.controller._shard_lease import DEAD, EXPIRED, READY, member_state
from cloudcoil_cache.controller._sharding import default_identity
from cloudcoil_cache.models.kubernetes.coordination.v1 import Lease
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Secret


def _lease(name: str, holder: str | None, duration: int = 10) -> Lease:
    spec = {"leaseDurationSeconds": duration} | ({"holderIdentity": holder} if holder is not None else {})
    return Lease.model_validate({"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def test_lease_states() -> None:
    assert member_state(_lease("r-0", "r-0"), observed_at=100.0, now=105.0) == READY
    assert member_state(_lease("r-0", "r-0"), observed_at=100.0, now=110.0) == EXPIRED
    assert member_state(_lease("r-0", ""), observed_at=100.0, now=100.0) == DEAD  # released
    assert member_state(_lease("r-0", None), observed_at=100.0, now=100.0) == DEAD
    assert member_state(_lease("r-0", "someone-else"), observed_at=100.0, now=100.0) == DEAD


def test_widest_keeps_the_shard_requirement_and_refuses_two() -> None:
    shard = "shard.cloudcoil.dev/w=r-0"
    primary = Scope(ConfigMap, "default", f"app=x,{shard}", shard)
    owned = Scope(ConfigMap, "default", shard, shard)
    assert widest([primary, owned]) == Scope(ConfigMap, "default", shard, shard)  # not "no selector"
    assert widest([primary]) == primary
    assert widest([Scope(ConfigMap, "default", "a=b"), Scope(ConfigMap, "default")]).label_selector is None
    with pytest.raises(ValueError, match="shard requirements"):
        widest([owned, Scope(ConfigMap, "default", "shard.cloudcoil.dev/v=r-0", "shard.cloudcoil.dev/v=r-0")])


def test_a_sharded_controllers_selectors_and_names() -> None:
    ring = Ring("widgets", identity="r-0")
    assert (ring.shard_label, ring.drain_label) == ("shard.cloudcoil.dev/widgets", "drain.cloudcoil.dev/widgets")
    assert ring.selector() == "shard.cloudcoil.dev/widgets=r-0"
    assert Ring("widgets", identity="r-0", labels=False).selector() is None
    assert ring.lease.name == "r-0" and ring.sharder_election.name == "widgets-sharder"
    identity = default_identity()
    assert len(identity) <= 63 and identity == identity.lower()
    assert Ring("widgets").identity != Ring("widgets").identity


@pytest.mark.parametrize(
    ("options", "error", "text"),
    [
        ({"name": "Widgets"}, ValueError, "DNS label"),
        ({"name": "w", "identity": "A_B"}, ValueError, "identity"),
        ({"name": "w", "tokens": 0}, ValueError, "tokens"),
        ({"name": "w", "labels": "yes"}, TypeError, "labels"),
        ({"name": "w", "lease_duration": 5, "renew_deadline": 5}, ValueError, "lease_duration"),
        ({"name": "w", "resync_period": 0}, ValueError, "resync_period"),
    ],
)
def test_bad_ring_arguments_are_named(options: dict, error: type[Exception], text: str) -> None:
    name = options.pop("name")
    with pytest.raises(error, match=text):
        Ring(name, **options)


def test_bad_sharding_declarations_are_named() -> None:
    with pytest.raises(TypeError, match="expects a Ring"):
        Controller(ConfigMap, sharding="widgets")  # type: ignore[arg-type]
    a, b = Ring("a", identity="r-0"), Ring("b", identity="r-0")
    one, two = Controller(ConfigMap, sharding=a), Controller(Secret, sharding=b)
    with pytest.raises(ValueError, match="several rings"):
        Manager(one, two)
    with pytest.raises(ValueError, match="already sharded"):
        Manager(one, sharding=b)
    with pytest.raises(ValueError, match="exclude each other"):
        Manager(Controller(ConfigMap, sharding=a, name="x"), leader_election=LeaderElection("l"))
    with pytest.raises(ValueError, match="not sharded"):
        Manager(Controller(ConfigMap, sharding=a, name="y"), Controller(Secret))


def test_membership_on_an_injected_clock_a_lease_expires_a_release_is_dead_at_once(fake_api_server, config) -> None:
    from cloudcoil_cache.controller._shard_lease import Membership
    from cloudcoil_cache.testing import FakeClock

    def lease(name: str, holder: str, renew: str = "2026-01-01T00:00:00.000000Z") -> dict:
        return {
            "metadata": {"name": name, "namespace": "default", "labels": {"cloudcoil.dev/ring": "w"}},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15, "renewTime": renew},
        }

    fake_api_server.create("leases", lease("r-0", "r-0"), "default")
    fake_api_server.create("leases", lease("r-1", "r-1"), "default")
    other = lease("x-0", "x-0")
    other["metadata"]["labels"] = {"cloudcoil.dev/ring": "another"}
    fake_api_server.create("leases", other, "default")  # another ring's: not a member
    clock = FakeClock()
    membership = Membership("w", "default", tokens=100, clock=clock)
    seen: list[tuple[str, ...]] = []
    membership.listeners.append(lambda ring: seen.append(ring.members))
    membership.start(config)
    try:
        assert membership.wait_for(lambda ring: ring.members == ("r-0", "r-1"), 10)
        # r-1 keeps renewing (its record changes), r-0 stops: after 15 s on the clock, r-0 is out
        clock.advance(10)
        fake_api_server.patch("leases", "r-1", {"spec": {"renewTime": "2026-01-01T00:00:10.000000Z"}}, "default")
        renewed_at = clock.now()  # the change is observed at this time on the ring's clock
        assert membership.wait_for(lambda ring: membership._leases["r-1"][1] == renewed_at, 10)
        clock.advance(6)
        assert membership.wait_for(lambda ring: ring.members == ("r-1",), 10)
        assert membership.states() == {"r-0": "expired", "r-1": "ready"}
        # a release (empty holder) is out at once, with no time passing
        fake_api_server.patch("leases", "r-1", {"spec": {"holderIdentity": ""}}, "default")
        assert membership.wait_for(lambda ring: ring.members == (), 10)
        assert membership.states()["r-1"] == "dead"
        assert seen[-1] == ()
    finally:
        membership.stop()
