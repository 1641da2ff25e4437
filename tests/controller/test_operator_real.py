"""The Widget operator against a real kube-apiserver + etcd (the real tier; skipped without binaries):
its finalizer, status subresource writes, server-side applied child and events.k8s.io Events as the
real server validates them."""

from __future__ import annotations

import itertools
import json
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest
from _operator_support import WIDGETS, Passes, Widget, conditions, widget_crd
from cluster_support import FAST
from test_operator_story import FINALIZER, widget_operator

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.models.kubernetes.events.v1 import Event

pytestmark = pytest.mark.real
_namespaces = itertools.count()


def _wait_established(real: Any, name: str) -> None:
    """Watch the CRD until its Established condition is True (no polling)."""
    request = urllib.request.Request(
        f"{real.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        f"?watch=true&fieldSelector=metadata.name%3D{name}&timeoutSeconds=30",
        headers={"Authorization": f"Bearer {real.tokens['admin']}"},
    )
    with urllib.request.urlopen(request, timeout=35, context=real.ssl_context()) as stream:
        for line in stream:
            found = (json.loads(line)["object"].get("status") or {}).get("conditions") or []
            if any(c["type"] == "Established" and c["status"] == "True" for c in found):
                return
    raise AssertionError(f"CRD {name} not established within 30 s")


@pytest.fixture
def real_config(real_api_server: Any, tmp_path: Path) -> Iterator[Config]:
    status, body = real_api_server.request(
        "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widget_crd()
    )
    assert status in (201, 409), body  # 409: an earlier test of the session installed it
    _wait_established(real_api_server, WIDGETS)
    name = f"operator-{next(_namespaces)}"
    status, body = real_api_server.request(
        "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    assert status == 201, body
    kubeconfig = real_api_server.write_kubeconfig(tmp_path / "kubeconfig", namespace=name)
    config = Config(kubeconfig=kubeconfig, namespace=name, cache=Cache(resources=[], tuning=FAST))
    yield config
    config.close()


def test_the_widget_operator_on_a_real_server(real_config: Config) -> None:
    ns = real_config.namespace
    ctl, finalized = widget_operator(real_config)
    ctl.observer = passes = Passes()
    widgets = Widget.client(real_config)
    created = widgets.create(Widget.from_dict({"metadata": {"name": "w1", "namespace": ns}, "spec": {"size": 2}}))

    def live() -> dict[str, Any]:
        return dict(widgets.live_get("w1", ns).to_dict())

    with ctl.start():
        passes.wait_for(lambda: conditions(live()).get("Ready", ("",))[0] == "True", timeout=60)
        obj = live()
        assert obj["metadata"]["finalizers"] == [FINALIZER]
        assert obj["status"]["size"] == 2 and obj["status"]["observedGeneration"] == 1
        assert conditions(obj)["Synced"] == ("True", "ChildApplied", "size 2")
        cm = ConfigMap.client(real_config).live_get("w1", ns)
        assert cm.data == {"size": "2"} and cm.metadata.owner_references[0].uid == created.metadata.uid
        [event] = Event.client(real_config).live_list(ns).items
        assert (event.reason, event.type, event.reporting_controller) == ("ChildApplied", "Normal", "widget")

        widgets.patch("w1", {"spec": {"size": 4}}, namespace=ns)
        passes.wait_for(lambda: live()["status"].get("observedGeneration") == 2, timeout=60)
        assert ConfigMap.client(real_config).live_get("w1", ns).data == {"size": "4"}

        widgets.delete("w1", ns)

        def gone() -> bool:
            try:
                live()
            except ResourceNotFound:
                return True
            return False

        passes.wait_for(lambda: bool(finalized) and gone(), timeout=60)
    assert finalized == ["w1"]
