"""cloudcoil's client API end to end, against the real kube-apiserver and against the fake alike (issue 19).

Each test runs twice (``target``: "real", skipped without binaries, and "fake"): dynamic resources,
``parse_file`` of a CRD with a scale subresource, ``save``, ``wait_for``, ``delete_all``, a watch
that outlives a quiet stream, and a user's annotated ``Resource`` subclass written, cached and read.
"""

from __future__ import annotations

import itertools
import threading
from contextlib import closing
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple

import pytest

import cloudcoil_cache.models.kubernetes as k8s
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import WaitTimeout
from cloudcoil_cache.resources import Resource, get_dynamic_resource, parse_file
from cloudcoil_cache.testing import FakeAPIServer, RealAPIServer

_groups = itertools.count()


class Target(NamedTuple):
    kubeconfig: str
    namespace: str


@pytest.fixture(scope="module", autouse=True)
def _real_server_first(request: pytest.FixtureRequest) -> None:
    """Start the session's real server (when there are binaries) before any test's thread check."""
    try:
        request.getfixturevalue("real_api_server")
    except pytest.skip.Exception:
        pass  # no binaries: the "real" runs skip, saying why; the "fake" ones run


@pytest.fixture(params=["real", "fake"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Target]:
    if request.param == "real":
        real: RealAPIServer = request.getfixturevalue("real")
        namespace: str = request.getfixturevalue("namespace")
        yield Target(real.write_kubeconfig(tmp_path / "kubeconfig", namespace=namespace), namespace)
        return
    with FakeAPIServer(bookmark_interval=0.5) as fake:
        yield Target(fake.write_kubeconfig(tmp_path / "kubeconfig"), "default")


@pytest.fixture
def config(target: Target) -> Iterator[Config]:
    made = Config(kubeconfig=target.kubeconfig, namespace=target.namespace)
    try:
        yield made
    finally:
        made.close()


def _crd_yaml(path: Path, group: str) -> Path:
    path.write_text(f"""
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: webservices.{group}
spec:
  group: {group}
  scope: Namespaced
  names: {{plural: webservices, singular: webservice, kind: WebService, listKind: WebServiceList}}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources:
      status: {{}}
      scale: {{specReplicasPath: .spec.size, statusReplicasPath: .status.currentSize}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
""")
    return path


def _established(event: str, crd: Any) -> bool:
    conditions = (crd.status.conditions if crd.status else None) or []
    return event in ("ADDED", "MODIFIED") and any(c.type == "Established" and c.status == "True" for c in conditions)


def _served(cls: Any, namespace: str) -> Callable[[], bool]:
    def check() -> bool:
        try:
            cls.list(namespace=namespace)
        except Exception:  # discovery of a just-established CRD lags by a moment on kube-apiserver
            return False
        return True

    return check


def _until(check: Callable[[], bool], timeout: float = 15.0) -> None:
    stop = threading.Event()
    for _ in range(int(timeout / 0.1)):
        if check():
            return
        stop.wait(0.1)  # nothing to watch for: a bounded poll
    raise AssertionError("condition not met in time")


def test_a_crd_from_parse_file_is_established_and_its_dynamic_kind_scales(
    target: Target, config: Config, tmp_path: Path
) -> None:
    group = f"t{next(_groups)}-{target.namespace}.cloudcoil.dev"
    with config:
        crd = parse_file(_crd_yaml(tmp_path / "crd.yaml", group))
        assert isinstance(crd, k8s.apiextensions.v1.CustomResourceDefinition)
        crd = crd.create()
        try:
            crd.wait_for(_established, timeout=30)
            WebService = get_dynamic_resource("WebService", f"{group}/v1alpha1")
            _until(_served(WebService, target.namespace))
            created = WebService(
                metadata={"name": "web", "namespace": target.namespace}, spec={"image": "nginx", "size": 3}
            ).create()
            assert created["spec"]["size"] == 3
            created["status"] = {"currentSize": 3, "phase": "Running"}
            assert "status" in created.model_dump(mode="json", by_alias=True)
            assert created.update_status()["status"]["currentSize"] == 3
            assert created.scale(replicas=5)["spec"]["size"] == 5
            assert WebService.get("web", target.namespace)["spec"]["size"] == 5
            WebService.delete("web", target.namespace)
        finally:
            crd.remove()


def test_save_creates_then_updates_and_dynamic_objects_edit_in_place(target: Target, config: Config) -> None:
    with config:
        cm = k8s.core.v1.ConfigMap(metadata={"name": "saved", "namespace": target.namespace}, data={"k": "v"})
        saved = cm.save()
        saved.data["k"] = "v2"  # type: ignore[index]
        assert saved.save().data == {"k": "v2"}
        Dynamic = get_dynamic_resource("ConfigMap", "v1")
        fetched = Dynamic.get("saved", target.namespace)
        fetched["data"]["extra"] = "x"
        assert fetched.update().raw["data"] == {"k": "v2", "extra": "x"}
        assert saved.fetch().data == {"k": "v2", "extra": "x"}
        saved.remove()


def test_wait_for_sees_a_change_and_times_out_promptly(target: Target, config: Config) -> None:
    with config:
        cm = k8s.core.v1.ConfigMap(
            metadata={"name": "waited", "namespace": target.namespace}, data={"k": "initial"}
        ).create()
        changed = threading.Event()

        def change() -> None:
            with config:
                edited = cm.model_copy(deep=True)
                edited.data = {"k": "updated"}
                edited.update()
            changed.set()

        thread = threading.Thread(target=change, name="test-changer")
        thread.start()
        try:
            got = cm.wait_for(lambda event, obj: event == "MODIFIED" and obj.data.get("k") == "updated", timeout=10)
            assert got.data == {"k": "updated"}
        finally:
            thread.join(10)
        assert changed.is_set()
        with pytest.raises(WaitTimeout):
            cm.wait_for(lambda event, _: event == "DELETED", timeout=1)
        cm.remove()


def test_delete_all_by_label_and_a_watch_that_outlives_a_quiet_stream(target: Target, config: Config) -> None:
    with config:
        for i in range(3):
            k8s.core.v1.ConfigMap(
                metadata={"name": f"bulk-{i}", "namespace": target.namespace, "labels": {"bulk": "yes"}}
            ).create()
        k8s.core.v1.ConfigMap(metadata={"name": "kept", "namespace": target.namespace}).create()
        k8s.core.v1.ConfigMap.delete_all(namespace=target.namespace, label_selector="bulk=yes")
        _until(lambda: not k8s.core.v1.ConfigMap.list(namespace=target.namespace, label_selector="bulk=yes").items)

        stop = threading.Event()
        events: list[tuple[str, str | None]] = []
        seen = threading.Event()
        client = config.client_for(k8s.core.v1.ConfigMap, cached=False)
        start_rv = k8s.core.v1.ConfigMap.get("kept", target.namespace).metadata.resource_version  # type: ignore[union-attr]

        def watch() -> None:
            # timeout_seconds=1: the server ends each watch after a second of silence; it is re-opened
            with closing(
                client.watch(
                    namespace=target.namespace,
                    field_selector="metadata.name=late",
                    resource_version=start_rv,
                    timeout_seconds=1,
                    _stop_event=stop,
                )
            ) as stream:
                for event, obj in stream:
                    events.append((event, obj.metadata.name if obj.metadata else None))
                    if event == "ADDED":
                        seen.set()

        thread = threading.Thread(target=watch, name="test-watch")
        thread.start()
        try:
            # outlive a few server-ended, quiet watches before anything happens
            assert not seen.wait(2.5)
            k8s.core.v1.ConfigMap(metadata={"name": "late", "namespace": target.namespace}).create()
            assert seen.wait(15), events
        finally:
            stop.set()
            thread.join(10)
        assert not thread.is_alive()
        assert ("ADDED", "late") in events


def test_a_users_annotated_class_is_written_cached_and_read(target: Target, tmp_path: Path) -> None:
    group = f"g{next(_groups)}-{target.namespace}.cloudcoil.dev"
    live = Config(kubeconfig=target.kubeconfig, namespace=target.namespace)
    try:
        with live:
            crd: Any = k8s.apiextensions.v1.CustomResourceDefinition.model_validate(
                {
                    "metadata": {"name": f"gizmos.{group}"},
                    "spec": {
                        "group": group,
                        "scope": "Namespaced",
                        "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"},
                        "versions": [
                            {
                                "name": "v1",
                                "served": True,
                                "storage": True,
                                "schema": {
                                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                                },
                            }
                        ],
                    },
                }
            ).create()
            crd.wait_for(_established, timeout=30)
    finally:
        live.close()

    class Widget(Resource):  # a cloudcoil user's CRD model: annotated fields, no plural
        api_version: str = f"{group}/v1"
        kind: str = "Gizmo"
        spec: dict[str, Any] | None = None

    config = Config(kubeconfig=target.kubeconfig, namespace=target.namespace, cache=Cache())
    try:
        with config:
            _until(_served(Widget, target.namespace))
            Widget(metadata={"name": "w1"}, spec={"size": 2}).create()
            assert (Widget.plural, Widget.namespaced) == ("gizmos", True)
            assert Widget.get("w1").spec == {"size": 2}  # cached: read-your-writes
            assert [w.name for w in Widget.list()] == ["w1"]
            assert config.cache.informer_for(Widget) is not None  # type: ignore[union-attr]
            Widget.delete("w1")
            crd.remove()
    finally:
        config.close()
