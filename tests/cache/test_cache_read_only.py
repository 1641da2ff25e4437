"""Objects served from the cache are shared and read-only; copies are editable and can be written back."""

from __future__ import annotations

from typing import Any, Callable

import pytest
from cluster_support import Recorder, seed

from cloudcoil_cache.errors import ReadOnlyError
from cloudcoil_cache.models.kubernetes.core.v1 import Container, Pod


def _set_attribute(pod: Any) -> None:
    pod.spec = None


def _set_nested_model_attribute(pod: Any) -> None:
    pod.spec.containers[0].image = "evil:latest"


def _set_metadata_shortcut_field(pod: Any) -> None:
    pod.metadata.name = "renamed"


def _delete_attribute(pod: Any) -> None:
    del pod.metadata.labels


def _append_to_list(pod: Any) -> None:
    pod.spec.containers.append(Container(name="extra", image="busybox"))


def _assign_list_item(pod: Any) -> None:
    pod.spec.containers[0] = Container(name="extra", image="busybox")


def _extend_list_in_place(pod: Any) -> None:
    pod.spec.containers += [Container(name="extra", image="busybox")]


def _set_dict_item(pod: Any) -> None:
    pod.metadata.labels["app"] = "evil"


def _delete_dict_item(pod: Any) -> None:
    del pod.metadata.annotations["prometheus.io/port"]


def _update_dict(pod: Any) -> None:
    pod.metadata.labels.update({"x": "y"})


def _pop_dict(pod: Any) -> None:
    pod.metadata.labels.pop("app")


def _set_item_of_free_form_dict_in_a_list(pod: Any) -> None:
    pod.spec.containers[0].resources.limits["cpu"] = "64"


MUTATIONS: list[Any] = [
    pytest.param(_set_attribute, id="attribute"),
    pytest.param(_set_nested_model_attribute, id="nested-model-attribute"),
    pytest.param(_set_metadata_shortcut_field, id="metadata-field"),
    pytest.param(_delete_attribute, id="delete-attribute"),
    pytest.param(_append_to_list, id="list-append"),
    pytest.param(_assign_list_item, id="list-item-assignment"),
    pytest.param(_extend_list_in_place, id="list-plus-equals"),
    pytest.param(_set_dict_item, id="dict-item"),
    pytest.param(_delete_dict_item, id="dict-item-deletion"),
    pytest.param(_update_dict, id="dict-update"),
    pytest.param(_pop_dict, id="dict-pop"),
    pytest.param(_set_item_of_free_form_dict_in_a_list, id="dict-inside-list-item"),
]


@pytest.mark.parametrize("mutate", MUTATIONS)
@pytest.mark.parametrize("read", ["get", "list", "informer"])
def test_mutating_a_cached_object_raises_read_only_error_naming_copy_and_leaves_the_cache_intact(
    server, make_config, mutate: Callable[[Any], None], read: str
):
    seed(server, 1, app="web")
    config = make_config(resources=[Pod], mode="strict")
    with config:
        if read == "get":
            pod = Pod.get("pod-0")
        elif read == "list":
            pod = Pod.list().items[0]
        else:
            pod = config.cache.get_informer(Pod).get("pod-0", namespace="default")  # type: ignore[union-attr]
        before = pod.to_dict()
        with pytest.raises(ReadOnlyError) as caught:
            mutate(pod)
        again = Pod.get("pod-0")
        assert again is pod  # shared: reads copy nothing
        assert again.to_dict() == before
    assert ".copy()" in str(caught.value)
    assert isinstance(caught.value, TypeError)


def test_a_copy_of_a_cached_object_is_editable_and_can_be_sent_with_update(server, make_config):
    seed(server, 1, app="web")
    config = make_config(resources=[Pod], mode="strict")
    rec = Recorder()
    rec.hook(config.cache.get_informer(Pod))  # type: ignore[union-attr]
    with config:
        cached = Pod.get("pod-0")
        editable = cached.copy()
        editable.metadata.labels["app"] = "api"
        editable.spec.containers[-1].image = "busybox:debug"  # a pod's image may change; its containers not
        editable.metadata.annotations = {"edited": "yes"}
        written = editable.update()
        assert written.metadata.labels["app"] == "api"
        assert cached.metadata.labels["app"] == "web"  # the shared object did not change
        rec.wait(
            lambda ev: any(
                k == "update" and v[1].metadata.resource_version == written.metadata.resource_version for k, v in ev
            )
        )
        fresh = Pod.get("pod-0")
    assert fresh.metadata.labels["app"] == "api"
    assert [c.image for c in fresh.spec.containers][-1] == "busybox:debug"
    assert server.get("pods", "pod-0")["metadata"]["annotations"] == {"edited": "yes"}


def test_evolve_returns_an_editable_copy_with_fields_replaced(server, make_config):
    seed(server, 1)
    config = make_config(resources=[Pod], mode="strict")
    with config:
        cached = Pod.get("pod-0")
        changed = cached.evolve(spec=None)
        changed.metadata.name = "other"
        assert cached.spec is not None and cached.metadata.name == "pod-0"
    assert changed.spec is None
