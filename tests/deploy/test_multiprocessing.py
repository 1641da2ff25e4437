"""multiprocessing children (issue 33): a ``fork`` child of a process whose default Config caches pods
resumes that cache (no LIST) and sees what changes after the fork; ``forkserver`` and ``spawn``
children inherit nothing and run a Config of their own; the parent's watch is undisturbed."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Iterator

import pytest
from _deploy_support import api_requests
from apps import mp_tasks
from cluster_support import FAST, seed

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork and forkserver are POSIX only")


@pytest.fixture
def preloaded(tmp_path: Path) -> Iterator[tuple[FakeAPIServer, str, Config]]:
    with FakeAPIServer() as server:
        seed(server, 5)
        kubeconfig = str(server.write_kubeconfig(tmp_path / "kubeconfig"))
        config = Config(kubeconfig=kubeconfig, namespace="default", cache=Cache(resources=[Pod], tuning=FAST))
        config.set_default()
        try:
            yield server, kubeconfig, config
        finally:
            config.close()


def test_a_fork_child_resumes_the_default_cache_and_sees_later_changes(preloaded):
    server, _, config = preloaded
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=mp_tasks.names_from_the_default, args=("after-fork", 10.0, out), name="deploy-fork")
    child.start()
    try:
        server.create("pods", make_pod("after-fork", "default"), "default")
        result = out.get(timeout=30)
    finally:
        child.join(30)
    assert child.exitcode == 0
    assert result["inherited"] and result["arrived"] and "after-fork" in result["names"]
    assert result["state"] == "current"
    assert api_requests(server, "list", "/api/v1/pods") == 1  # the parent's: the child watched from its copy
    parent = config.cache.status().informers[0]  # type: ignore[union-attr]
    assert parent.state == "current" and parent.relist_count == 1 and parent.last_error is None
    out.close()
    out.join_thread()


@pytest.mark.parametrize("method", ["forkserver", "spawn"])
def test_children_that_inherit_nothing_run_a_config_of_their_own(preloaded, method):
    server, kubeconfig, _ = preloaded
    ctx = multiprocessing.get_context(method)
    out = ctx.Queue()
    child = ctx.Process(target=mp_tasks.names_with_a_config_of_its_own, args=(kubeconfig, out), name=f"deploy-{method}")
    child.start()
    try:
        result = out.get(timeout=60)
    finally:
        child.join(30)
    assert child.exitcode == 0 and len(result["names"]) == 5
    assert api_requests(server, "list", "/api/v1/pods") == 1  # the parent's
    assert api_requests(server, "list") == 1  # the child's own (it caches "default" only)
    out.close()
    out.join_thread()
