"""Harness self-checks (not part of cloudcoil's suite): run with ./run.sh fake selftest/test_harness_selftest.py."""

import threading

import pytest


@pytest.mark.configure_test_cluster(cluster_name="x", version="v1", provider="kind", remove=False)
def test_marker_accepted_and_cluster_is_fresh(test_config, cc_cluster):
    status, body = cc_cluster.request("GET", "/api/v1/configmaps")
    assert status == 200, body
    found = sorted(f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in body["items"])
    print("configmaps at test start:", found)
    assert all(name.startswith("kube-") for name in found), found  # only the server's own, none left by tests
    status, body = cc_cluster.request("GET", "/api/v1/namespaces/default/services/kubernetes")
    assert status == 200, body


def test_leak_is_reported():
    stop = threading.Event()
    threading.Thread(target=stop.wait, args=(7,), name="selftest-leaker", daemon=True).start()


async def test_asyncio_auto_mode():
    import asyncio

    await asyncio.sleep(0)
