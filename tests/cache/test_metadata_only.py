"""Metadata-only informers (``Cache(metadata_only=[Secret])``) over real HTTP against the fake API server."""

from __future__ import annotations

import threading
import types

import pytest
from cluster_support import FAST, wait_until
from metadata_support import LIST_ACCEPT, WATCH_ACCEPT, check_media_types, check_metadata_informer

from cloudcoil_cache._listwatch._admit import identity_check
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.caching._metadata import SharedValues
from cloudcoil_cache.client import Config
from cloudcoil_cache.models import PartialObjectMetadata
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Secret


@pytest.fixture
def cfg(kubeconfig):
    made: list[Config] = []

    def make(cache: bool = True, **options):
        config = Config(kubeconfig=kubeconfig, cache=Cache(tuning=FAST, **options) if cache else False)
        made.append(config)
        return config

    yield make
    for config in made:
        config.close()


@pytest.mark.parametrize(
    "options",
    [{"metadata_only": [Secret]}, {"per_resource": {Secret: {"metadata_only": True}}}],
    ids=["metadata_only", "per_resource"],
)
def test_a_metadata_only_informer_holds_partial_objects_and_typed_reads_go_live(server, cfg, options):
    check_metadata_informer(cfg, "default", **options)
    watched = [r for r in server.requests if r.path.endswith("/secrets") and r.method == "GET"]
    lists = [r for r in watched if r.query.get("watch") != "1"]
    watches = [r for r in watched if r.query.get("watch") == "1"]
    # the informer's LIST asks for metadata; the typed Secret.list a whole list (plain JSON)
    assert sorted(r.headers["Accept"].split(",")[0] for r in lists) == ["application/json", LIST_ACCEPT]
    assert watches and all(r.headers["Accept"].startswith(WATCH_ACCEPT) for r in watches)


def test_the_fake_serves_the_media_types_as_kube_apiserver(server, cfg):
    check_media_types(cfg(cache=False), "default")


def test_a_kind_cached_whole_and_another_as_metadata_side_by_side(server, cfg):
    config = cfg(resources=[ConfigMap], metadata_only=[Secret], mode="strict")
    with config:
        ConfigMap(metadata={"name": "c", "namespace": "default"}, data={"x": "1"}).create()
        Secret(metadata={"name": "s", "namespace": "default"}).create()
        assert config.cache.wait(10)
        assert ConfigMap.get("c", "default").data == {"x": "1"}  # served whole from the cache
        status = {i.kind: i for i in config.cache.status().informers}
        assert set(status) == {"ConfigMap", "Secret"} and status["Secret"].synced
        assert config.cache.informer_for(Secret) is None  # no whole Secret informer
        assert config.cache.informer_for(PartialObjectMetadata.of(Secret)) is not None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"metadata_only": Secret}, "expected a list of resource classes"),
        ({"metadata_only": ["Secret"]}, "is not a resource class"),
        ({"metadata_only": [PartialObjectMetadata.of(Secret)]}, r"name the kind itself \(metadata_only=\[Secret\]\)"),
        ({"per_resource": {Secret: {"metadata_only": "yes"}}}, "expected True"),
    ],
)
def test_bad_metadata_only_options_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        Cache(**options)


def test_metadata_classes_are_one_per_kind_and_keep_the_kinds_identity():
    meta = PartialObjectMetadata.of(Secret)
    assert PartialObjectMetadata.of(Secret) is meta and PartialObjectMetadata.of(meta) is meta
    assert (meta.kind, meta.api_version, meta.plural, meta.namespaced, meta.metadata_of) == (
        "Secret",
        "v1",
        "secrets",
        True,
        Secret,
    )
    generic = PartialObjectMetadata.from_dict(
        {"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": {"name": "x"}}
    )
    assert generic.to_dict() == {
        "apiVersion": "meta.k8s.io/v1",
        "kind": "PartialObjectMetadata",
        "metadata": {"name": "x"},
    }
    with pytest.raises(TypeError, match="names no kind"):
        generic.full()
    with pytest.raises(ValueError, match="expected a resource class"):
        PartialObjectMetadata.of("Secret")


def test_the_identity_check_of_a_metadata_watch_admits_partial_objects_and_the_kind_only():
    admit = identity_check(Secret, "ns", metadata_only=True)
    meta = {"name": "a", "namespace": "ns"}
    assert admit({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta}) is None
    assert admit({"kind": "Secret", "apiVersion": "v1", "metadata": meta}) is None  # a server ignoring the type
    assert "ConfigMap" in admit({"kind": "ConfigMap", "apiVersion": "v1", "metadata": meta})
    assert "outside the watched namespace" in admit(
        {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": {"name": "a", "namespace": "x"}}
    )
    whole = identity_check(Secret, "ns")  # a whole informer refuses partial objects
    assert "PartialObjectMetadata" in whole(
        {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta}
    )


def test_objects_of_a_metadata_informer_share_their_common_strings(server, cfg):
    config = cfg(metadata_only=[Secret])
    with config:
        view = config.cache.get_informer(Secret)
        added: list[str] = []
        cond = threading.Condition()

        def on_add(obj):
            with cond:
                added.append(obj.name)
                cond.notify_all()

        view.on_add(on_add)
        for name in ("a", "b"):
            owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "u-1"}
            meta = {"name": name, "namespace": "default", "labels": {"app": "web"}, "ownerReferences": [owner]}
            Secret(metadata=meta, data={"k": "dmFs"}).create()
        wait_until(cond, lambda: sorted(added) == ["a", "b"])
        a, b = view.get("a", "default").metadata, view.get("b", "default").metadata
        assert a.namespace is b.namespace and a.labels is b.labels  # equal values are held once
        assert a.owner_references is b.owner_references
        assert a.name is not b.name and a.managed_fields is None


def test_shared_values_drop_what_no_object_holds_any_more():
    shared = SharedValues(limit=4)

    def obj(labels):
        return types.SimpleNamespace(
            metadata=types.SimpleNamespace(labels=labels, annotations=None, owner_references=None)
        )

    kept = shared.share(obj({"keep": "1"}))
    for i in range(20):  # distinct labels of objects dropped at once (deleted)
        shared.share(obj({"n": str(i)}))
    assert len(shared._held) <= 4
    again = shared.share(obj({"keep": "1"}))
    assert again.metadata.labels is kept.metadata.labels  # a held value still in use stays shared
