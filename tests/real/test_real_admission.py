"""Issue 22's end-to-end admission scenarios (tests/admission/_scenarios.py) against kube-apiserver: our
AdmissionWebhook on a WebhookServer, installed through the client, called by the real API server.
tests/admission/test_admission_end_to_end.py runs the same scenarios against FakeAPIServer."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from admission import _scenarios as scenarios

from cloudcoil_cache.testing import RealAPIServer


@pytest.fixture
def cluster(real: RealAPIServer, tmp_path: Path) -> Iterator[scenarios.Cluster]:
    kubeconfig = real.write_kubeconfig(tmp_path / "kubeconfig")
    cluster = scenarios.Cluster(
        "real",
        real.url,
        kubeconfig,
        token=real.tokens["admin"],
        context=real.ssl_context(),
        kubectl=real.kubectl if real.kubectl_path is not None else None,
    )
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
    figures = scenarios.rotation_under_load(cluster, per_phase=300)  # about 10 s of load
    print("rotation (real):", figures)


@pytest.mark.slow  # load: both files would add more than 30 s to the default run
def test_every_replica_serves_while_the_lease_moves(cluster: scenarios.Cluster) -> None:
    figures = scenarios.every_replica(cluster)
    print("every replica (real):", figures)
