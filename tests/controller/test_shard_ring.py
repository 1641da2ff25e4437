"""The shard ring: XXH64 against known vectors, the key strings, and how much a join or a leave moves."""

from __future__ import annotations

import collections
import random
import string

import pytest

from cloudcoil_cache.controller._ring import HashRing, hash_key, owner_hash_key, xxh64
from cloudcoil_cache.models.kubernetes.apps.v1 import Deployment
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap


@pytest.mark.parametrize(
    ("data", "digest"),
    [
        (b"", 0xEF46DB3751D8E999),
        (b"a", 0xD24EC4F1A98C6E5B),
        (b"abc", 0x44BC2CF5AD770999),
        (b"Nobody inspects the spammish repetition", 0xFBCEA83C8A378BF1),  # > 32 bytes: the stripes
        # checked against the xxhash package (xxhash 3.5.0's xxh64_intdigest), which is no dependency
        (b"x" * 100, 0x92F0DE5A88A3C094),
        (bytes(range(200)), 0x50DC1079B99E879C),
        (b"/ConfigMap/default/obj-1", 0x61EF06F9630CD41F),
    ],
)
def test_xxh64_known_vectors(data: bytes, digest: int) -> None:
    assert xxh64(data) == digest


def test_keys_follow_timebertt() -> None:
    assert hash_key("apps", "Deployment", "ns", "web") == "apps/Deployment/ns/web"
    assert hash_key("", "ConfigMap", "default", "a") == "/ConfigMap/default/a"
    assert hash_key(None, "Namespace", None, "x") == "/Namespace//x"
    child = ConfigMap.model_validate(
        {
            "metadata": {
                "name": "child",
                "namespace": "ns",
                "ownerReferences": [
                    {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "u", "controller": True}
                ],
            }
        }
    )
    assert owner_hash_key(child, Deployment) == "apps/Deployment/ns/web"
    assert owner_hash_key(child, ConfigMap) is None  # not controlled by a ConfigMap
    # a child in a CREATE request may carry no namespace: the request's is used; with none, no key
    unplaced = ConfigMap.model_validate({"metadata": {**child.model_dump()["metadata"], "namespace": None}})
    assert owner_hash_key(unplaced, Deployment, "req-ns") == "apps/Deployment/req-ns/web"
    assert owner_hash_key(unplaced, Deployment) is None
    assert owner_hash_key(child, Deployment, "req-ns") == "apps/Deployment/ns/web"  # its own first


def test_empty_ring_and_bad_tokens() -> None:
    assert HashRing([]).owner("k") is None
    assert not HashRing([])
    with pytest.raises(ValueError, match="tokens"):
        HashRing(["a"], tokens=0)


def test_tokens_are_member_plus_index() -> None:
    ring = HashRing(["a", "b"], tokens=2)
    points = sorted((xxh64(f"{m}{i}".encode()), m) for m in "ab" for i in range(2))
    key_hash = xxh64(b"some-key")
    expected = next((m for h, m in points if h >= key_hash), points[0][1])
    assert ring.owner("some-key") == expected


def test_shares_are_balanced_and_a_join_moves_about_one_in_n() -> None:
    keys = [hash_key("example.com", "Widget", "default", f"w-{i}") for i in range(6000)]
    three = HashRing(["r-0", "r-1", "r-2"])
    before = {k: three.owner(k) for k in keys}
    shares = collections.Counter(before.values())
    for member in three.members:
        assert abs(shares[member] / len(keys) - 1 / 3) < 0.15 / 3 * 2  # 400 tokens: within ±10% here
    four = HashRing(["r-0", "r-1", "r-2", "r-3"])
    after = {k: four.owner(k) for k in keys}
    moved = [k for k in keys if before[k] != after[k]]
    assert all(after[k] == "r-3" for k in moved)  # only to the new member
    assert 0.18 < len(moved) / len(keys) < 0.32  # about 1/4
    # a leave moves exactly the leaver's keys
    two = HashRing(["r-0", "r-2"])
    assert all(two.owner(k) == before[k] for k in keys if before[k] != "r-1")


def test_the_default_400_tokens_keep_random_identities_shares_even() -> None:
    """40 sets of 3 random identities over 3,000 keys: at 400 tokens (the default) every share is within
    ±15% of 1/3; at 100 (timebertt's) 9 sets of the 40 miss it."""
    keys = [hash_key("example.com", "Widget", "default", f"w{i:05d}") for i in range(3000)]
    rng = random.Random(36)
    sets = [
        [f"{''.join(rng.choice(string.ascii_lowercase) for _ in range(6))}-{rng.randrange(10**5)}" for _ in range(3)]
        for _ in range(40)
    ]

    def uneven(tokens: int | None) -> int:
        missed = 0
        for members in sets:
            ring = HashRing(members) if tokens is None else HashRing(members, tokens)
            shares = collections.Counter(ring.owner(k) for k in keys)
            missed += any(abs(shares[m] / len(keys) - 1 / 3) > 0.15 / 3 for m in members)
        return missed

    assert HashRing(["a"]).tokens == 400
    assert uneven(None) == 0
    assert uneven(100) == 9
