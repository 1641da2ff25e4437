"""First contact with a kind: creating and deleting a few dozen objects through a cached Config grows
the process by a few hundred gc-tracked objects at most, and later rounds by about none.

The API server runs in another process, so only the client's objects are counted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cloudcoil_cache.testing import FakeAPIServer

_ROUNDS = r"""
import gc, json, sys
import cloudcoil_cache.models.kubernetes as k8s
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config

config = Config(kubeconfig=sys.argv[1], cache=Cache(resources=[k8s.core.v1.ConfigMap]))
growth = []
with config:
    ns = k8s.core.v1.Namespace(metadata={"generateName": "memory-"}).create().name
    gc.collect()
    before = len(gc.get_objects())
    for round_ in range(4):
        for batch in range(3):
            made = [k8s.core.v1.ConfigMap(metadata={"name": f"m-{round_}-{batch}-{i}", "namespace": ns},
                                          data={"batch": str(batch)}).create() for i in range(10)]
            for cm in made:
                cm.remove()
            del made, cm
            # a cached read after our own deletes waits until the informer has seen them
            assert not k8s.core.v1.ConfigMap.list(namespace=ns).items
        gc.collect()
        now = len(gc.get_objects())
        growth.append(now - before)
        before = now
print(json.dumps(growth))
"""


@pytest.mark.slow
def test_first_contact_costs_a_few_hundred_objects_and_later_rounds_about_none(tmp_path: Path) -> None:
    with FakeAPIServer() as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        # the server's own objects live in this process; the client's in the child
        done = subprocess.run([sys.executable, "-c", _ROUNDS, kubeconfig], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    first, *later = json.loads(done.stdout.strip().splitlines()[-1])
    assert first <= 500, f"first round of 30 creates and deletes left {first} more gc-tracked objects"
    assert sum(later[1:]) / len(later[1:]) <= 60, f"later rounds left {later} more gc-tracked objects"
