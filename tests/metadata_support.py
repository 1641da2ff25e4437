"""The metadata-only informer scenario, run against the fake API server and kube-apiserver alike."""

from __future__ import annotations

import json
import threading
from typing import Any, Callable

import pytest
from cluster_support import wait_until

from cloudcoil_cache._listwatch import ListWatch
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import APIError, CacheUnavailableError
from cloudcoil_cache.models import PartialObjectMetadata
from cloudcoil_cache.models.kubernetes.core.v1 import Secret

LIST_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
WATCH_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


def raw_get(config: Config, path: str, accept: str, params: dict[str, str] | None = None) -> Any:
    """One GET through the library's transport with ``accept``: the decoded JSON body."""
    return json.loads(config.transport.request("GET", path, params=params, headers={"Accept": accept}).content)


def check_media_types(config: Config, namespace: str) -> None:
    """LIST, GET and WATCH answer PartialObjectMetadata as kube-apiserver does; a mismatched shape is 406."""
    with config:
        Secret(metadata={"name": "m1", "namespace": namespace, "labels": {"a": "1"}}, data={"k": "dmFs"}).create()
    path = f"/api/v1/namespaces/{namespace}/secrets"
    listed = raw_get(config, path, LIST_ACCEPT)
    assert (listed["kind"], listed["apiVersion"]) == ("PartialObjectMetadataList", "meta.k8s.io/v1")
    assert listed["metadata"]["resourceVersion"]
    [item] = listed["items"]
    assert (item["kind"], item["apiVersion"]) == ("PartialObjectMetadata", "meta.k8s.io/v1")
    assert set(item) == {"kind", "apiVersion", "metadata"}  # no data, no type
    assert item["metadata"]["name"] == "m1" and item["metadata"]["labels"] == {"a": "1"}
    one = raw_get(config, f"{path}/m1", WATCH_ACCEPT)
    assert (one["kind"], set(one)) == ("PartialObjectMetadata", {"kind", "apiVersion", "metadata"})
    with pytest.raises(APIError) as refused:  # a list asked as one object
        raw_get(config, path, WATCH_ACCEPT)
    assert refused.value.code == 406
    with pytest.raises(APIError) as refused:  # one object asked as a list
        raw_get(config, f"{path}/m1", LIST_ACCEPT)
    assert refused.value.code == 406
    watch = ListWatch(config.transport, PartialObjectMetadata.of(Secret), namespace=namespace, metadata_only=True)
    with watch.watch(resource_version="0", timeout_seconds=5, read_timeout=10) as stream:
        event = next(iter(stream))  # the ADDED of the listed state (resourceVersion 0)
    assert event.type == "ADDED"
    assert isinstance(event.object, PartialObjectMetadata) and event.object.name == "m1"


def check_metadata_informer(make_config: Callable[..., Config], namespace: str, **cache_options: Any) -> None:
    """A metadata-only informer: its objects are PartialObjectMetadata.of(Secret) (no data), its
    events follow the server, typed reads of Secret go to the API server (strict: refused)."""
    with make_config(cache=False):
        Secret(metadata={"name": "s1", "namespace": namespace}, data={"k": "dmFs"}).create()
    config = make_config(namespaces=[namespace], **cache_options)
    with config:
        view = config.cache.get_informer(Secret)
        assert view is not None
        seen: list[tuple[str, Any]] = []
        cond = threading.Condition()

        def note(kind: str) -> Callable[..., None]:
            def handler(*objs: Any) -> None:
                with cond:
                    seen.append((kind, objs[-1]))
                    cond.notify_all()

            return handler

        view.add_event_handler(note("add"), note("update"), note("delete"))
        wait_until(cond, lambda: any(k == "add" for k, _ in seen))
        meta_class = PartialObjectMetadata.of(Secret)
        [cached] = view.list()
        assert type(cached).__name__ == "SecretMetadata" and isinstance(cached, meta_class)
        assert cached.name == "s1" and cached.metadata.uid
        assert not hasattr(cached, "data") or getattr(cached, "data", None) is None
        assert "data" not in cached.to_dict() and cached.to_dict()["kind"] == "Secret"
        assert cached.metadata.managed_fields is None  # dropped (the server sends them: whole.metadata has)

        # typed reads of the kind never answer a partial object: they go live (whole Secrets)
        whole = Secret.get("s1", namespace)
        assert isinstance(whole, Secret) and whole.data == {"k": "dmFs"} and whole.metadata.managed_fields
        assert [s.data for s in Secret.list(namespace=namespace).items] == [{"k": "dmFs"}]
        with config.cache.strict_mode(), pytest.raises(CacheUnavailableError, match="metadata only"):
            Secret.get("s1", namespace)
        assert cached.full().data == {"k": "dmFs"}  # the whole object, one get away

        # the watch: a label change is an update of the metadata, a delete a delete
        live = Secret.get("s1", namespace)
        live.metadata.labels = {"tier": "db"}
        live.update()
        wait_until(cond, lambda: any(k == "update" and o.metadata.labels == {"tier": "db"} for k, o in seen))
        Secret.delete("s1", namespace)
        wait_until(cond, lambda: any(k == "delete" for k, _ in seen))
        assert view.list() == []
        assert all(isinstance(o, meta_class) for _, o in seen)
