"""Issue 22's end-to-end admission scenarios (``_scenarios``) against FakeAPIServer: our webhook stack
installed through the client and called by the fake, as tests/real/test_real_admission.py does with
kube-apiserver."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from admission import _scenarios as scenarios

from cloudcoil_cache.testing import FakeAPIServer


@pytest.fixture
def fake() -> Iterator[FakeAPIServer]:
    """One per test: stopping it ends the threads serving the informers' watches."""
    with FakeAPIServer(namespace_lifecycle=True) as server:
        yield server


@pytest.fixture
def cluster(fake: FakeAPIServer, tmp_path: Path) -> Iterator[scenarios.Cluster]:
    kubeconfig = str(fake.write_kubeconfig(tmp_path / "kubeconfig"))
    cluster = scenarios.Cluster("fake", fake.url, kubeconfig)
    yield cluster
    cluster.close()


def test_a_cached_reference(cluster: scenarios.Cluster) -> None:
    scenarios.cached_reference(cluster)


def test_mutation_dry_run_and_warnings(cluster: scenarios.Cluster) -> None:
    scenarios.mutation_dry_run_and_warnings(cluster)


def test_failure_policy(cluster: scenarios.Cluster) -> None:
    scenarios.failure_policy(cluster)


@pytest.mark.slow  # load: both files would add more than 30 s to the default run
def test_certificate_rotation_under_load(cluster: scenarios.Cluster) -> None:
    figures = scenarios.rotation_under_load(cluster, per_phase=100)  # the fake handshakes on every call
    print("rotation (fake):", figures)


@pytest.mark.slow  # load: both files would add more than 30 s to the default run
def test_every_replica_serves_while_the_lease_moves(cluster: scenarios.Cluster) -> None:
    figures = scenarios.every_replica(cluster)
    print("every replica (fake):", figures)
