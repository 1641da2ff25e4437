"""Cache(transform=...): applied to every object before it is stored (list and watch), results sealed."""

from __future__ import annotations

import threading
from typing import Any

from cluster_support import seed

from cloudcoil_cache.caching import strip_managed_fields
from cloudcoil_cache.errors import ReadOnlyError
from cloudcoil_cache.models import is_sealed
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod
from cloudcoil_cache.testing import make_pod


def test_strip_managed_fields_drops_them_from_listed_and_watched_objects_and_handlers_see_that(server, make_config):
    seed(server, 2)
    assert server.get("pods", "pod-0", "default")["metadata"].get("managedFields")
    config = make_config(resources=[Pod], transform=strip_managed_fields)
    view = config.cache.get_informer(Pod, sync=True)  # type: ignore[union-attr]
    seen: list[Any] = []
    got = threading.Event()

    @view.on_add
    def added(pod: Any) -> None:
        seen.append(pod)
        if pod.metadata.name == "late":
            got.set()

    with config:
        server.create("pods", make_pod("late", "default"), "default")
        assert got.wait(10)
        for pod in [*Pod.list(namespace="default").items, *seen]:
            assert pod.metadata.managed_fields is None
            assert is_sealed(pod)
            try:
                pod.metadata.labels["x"] = "y"
            except ReadOnlyError:
                pass
            else:
                raise AssertionError("a transformed cached object must stay read-only")
        assert Pod.get("late", namespace="default").spec.containers  # everything else is kept


def test_a_transform_that_raises_is_logged_and_the_object_stored_unchanged(server, make_config, caplog):
    server.create("configmaps", {"metadata": {"name": "a"}, "data": {"k": "v"}}, "default")

    def broken(obj: Any) -> Any:
        raise RuntimeError("boom")

    config = make_config(resources=[ConfigMap], per_resource={ConfigMap: {"transform": broken}})
    with config:
        assert ConfigMap.get("a", namespace="default").data == {"k": "v"}
    assert "transform raised" in caplog.text


def test_strip_managed_fields_of_a_sealed_object_shares_everything_else():
    pod = Pod.from_dict_sealed(make_pod("a", "default"))
    stripped = strip_managed_fields(pod)
    assert pod.metadata.managed_fields and stripped.metadata.managed_fields is None
    assert is_sealed(stripped) and is_sealed(stripped.metadata)
    assert stripped.spec is pod.spec and stripped.metadata.labels is pod.metadata.labels  # shared, not copied
    assert stripped.to_dict()["metadata"] == {
        k: v for k, v in pod.to_dict()["metadata"].items() if k != "managedFields"
    }
    editable = Pod.from_dict(make_pod("b", "default"))
    assert strip_managed_fields(editable).metadata.managed_fields is None
