"""The cache decodes a new version of an object sharing the unchanged parts of the stored one; what
it stores is always exactly the server's object (with the transform applied)."""

from __future__ import annotations

import threading
from typing import Any

from cluster_support import seed

from cloudcoil_cache.caching import strip_managed_fields
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import make_pod


def _updates(view: Any) -> tuple[list[tuple[Any, Any]], threading.Condition]:
    seen: list[tuple[Any, Any]] = []
    cond = threading.Condition()

    @view.on_update
    def updated(old: Any, new: Any) -> None:
        with cond:
            seen.append((old, new))
            cond.notify_all()

    return seen, cond


def _wait(cond: threading.Condition, pred: Any) -> None:
    with cond:
        assert cond.wait_for(pred, 10)


def _patch_status(server: Any, name: str, phase: str) -> dict[str, Any]:
    return server.patch("pods", name, {"status": {"phase": phase}}, "default", subresource="status")


def test_updates_share_the_stored_spec_and_equal_the_servers_object(server, make_config, without_content_sharing):
    seed(server, 3)
    config = make_config(resources=[Pod])
    view = config.cache.get_informer(Pod, sync=True)  # type: ignore[union-attr]
    seen, cond = _updates(view)
    with config:
        # the first list's objects have their fingerprints: their first update shares already
        first = _patch_status(server, "pod-1", "Failed")
        _wait(cond, lambda: seen)
        assert seen[0][1] == Pod.from_dict_sealed(first) and seen[0][1].spec is seen[0][0].spec
        assert seen[0][1].status is not seen[0][0].status
        second = _patch_status(server, "pod-1", "Succeeded")
        _wait(cond, lambda: len(seen) == 2)
        old, new = seen[1]
        assert new.spec is old.spec and new.status.phase == "Succeeded" != old.status.phase
        assert new == Pod.from_dict_sealed(second) and Pod.get("pod-1", namespace="default") is new
        changed = server.patch("pods", "pod-1", {"spec": {"activeDeadlineSeconds": 60}}, "default")
        _wait(cond, lambda: len(seen) == 3)
        old, new = seen[2]
        assert new.spec is not old.spec and new.spec.active_deadline_seconds == 60
        assert new.status is old.status and new == Pod.from_dict_sealed(changed)


def test_an_object_added_after_the_sync_shares_from_its_first_update(server, make_config, without_content_sharing):
    seed(server, 1)
    config = make_config(resources=[Pod])
    view = config.cache.get_informer(Pod, sync=True)  # type: ignore[union-attr]
    seen, cond = _updates(view)
    with config:
        server.create("pods", make_pod("late", "default"), "default")
        updated = _patch_status(server, "late", "Failed")
        _wait(cond, lambda: seen)
        old, new = seen[0]
        assert new.spec is old.spec and new == Pod.from_dict_sealed(updated)


def _relist(server: Any, cond: threading.Condition, seen: list[Any], name: str, phase: str) -> None:
    server.stall_watches()  # the change below reaches the cache only through the relist
    _patch_status(server, name, phase)
    server.compact()
    server.clear_requests()
    count = len(seen)
    server.drop_watches()  # the re-watch is told 410 Gone: the informer relists
    _wait(cond, lambda: len(seen) > count)
    assert [r for r in server.requests if r.verb == "list"]  # it came from a relist
    server.resume_watches()


def test_a_relist_keeps_the_values_of_unchanged_objects(server, make_config, without_content_sharing):
    seed(server, 3)
    config = make_config(resources=[Pod])
    view = config.cache.get_informer(Pod, sync=True)  # type: ignore[union-attr]
    seen, cond = _updates(view)
    with config:
        _relist(server, cond, seen, "pod-2", "Failed")
        before = {p.metadata.name: p for p in Pod.list(namespace="default").items}
        _relist(server, cond, seen, "pod-1", "Failed")
        after = {p.metadata.name: p for p in Pod.list(namespace="default").items}
        assert after["pod-1"].status.phase == "Failed" and after["pod-1"].status is not before["pod-1"].status
        for name in ("pod-0", "pod-1", "pod-2"):
            assert after[name].spec is before[name].spec
            assert after[name] == Pod.from_dict_sealed(server.get("pods", name, "default"))
        assert after["pod-0"].status is before["pod-0"].status


def test_with_strip_managed_fields_the_stored_objects_are_the_decoded_ones(
    server, make_config, without_content_sharing
):
    seed(server, 2)
    config = make_config(resources=[Pod], transform=strip_managed_fields)
    view = config.cache.get_informer(Pod, sync=True)  # type: ignore[union-attr]
    seen, cond = _updates(view)
    with config:
        _patch_status(server, "pod-0", "Failed")
        _patch_status(server, "pod-0", "Succeeded")
        _wait(cond, lambda: len(seen) == 2)
        old, new = seen[1]
        assert old.metadata.managed_fields is None and new.metadata.managed_fields is None
        assert new.spec is old.spec  # the transform ran on the JSON: nothing rebuilt the objects after
        assert server.get("pods", "pod-0", "default")["metadata"]["managedFields"]


def test_a_transform_that_changes_the_spec_sees_every_version_as_the_server_sent_it(server, make_config):
    seed(server, 2)

    def tag(pod: Any) -> Any:  # not idempotent: a stored (tagged) spec reused would be tagged twice
        return pod.evolve(spec=pod.spec.evolve(node_name=f"{pod.spec.node_name}+tag"))

    config = make_config(resources=[Pod], transform=tag)
    view = config.cache.get_informer(Pod, sync=True)  # type: ignore[union-attr]
    seen, cond = _updates(view)
    with config:
        node = server.get("pods", "pod-0", "default")["spec"].get("nodeName")
        assert Pod.get("pod-0", namespace="default").spec.node_name == f"{node}+tag"
        _patch_status(server, "pod-0", "Failed")
        _wait(cond, lambda: seen)
        assert seen[0][1].spec.node_name == f"{node}+tag" and seen[0][1].status.phase == "Failed"


def test_an_update_shares_the_managed_fields_entries_of_the_managers_that_did_not_write(
    server, make_config, without_content_sharing
):
    seed(server, 2)
    server.patch("pods", "pod-0", {"metadata": {"labels": {"team": "a"}}}, "default", field_manager="labeller")
    config = make_config(resources=[Pod])
    view = config.cache.get_informer(Pod, sync=True)  # type: ignore[union-attr]
    seen, cond = _updates(view)

    def kubelet(status: dict[str, Any]) -> dict[str, Any]:
        return server.patch(
            "pods", "pod-0", {"status": status}, "default", subresource="status", field_manager="kubelet"
        )

    with config:
        # the first list's entries have no fingerprints: its first update decodes them in full
        kubelet({"phase": "Failed"})
        _wait(cond, lambda: seen)
        first = {id(e) for e in seen[0][1].metadata.managed_fields}
        assert not first & {id(e) for e in seen[0][0].metadata.managed_fields}
        updated = kubelet({"message": "the kubelet's entry now owns one more field"})
        _wait(cond, lambda: len(seen) == 2)
        old, new = seen[1]
        assert new == Pod.from_dict_sealed(updated) and Pod.get("pod-0", namespace="default") is new
        before = {(e.manager, e.subresource): e for e in old.metadata.managed_fields}
        after = {(e.manager, e.subresource): e for e in new.metadata.managed_fields}
        assert after.keys() == before.keys() >= {("kubelet", "status"), ("labeller", None)} and len(after) >= 3
        for owner, entry in after.items():  # only the kubelet wrote: every other entry is shared
            assert (entry is before[owner]) == (owner != ("kubelet", "status")), owner
        assert after["kubelet", "status"] != before["kubelet", "status"]
