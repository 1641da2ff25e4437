"""A controller's owned and watched kinds held as metadata only (``.owns(Secret, metadata_only=True)``)."""

from __future__ import annotations

from _controller_support import Calls

from cloudcoil_cache.controller import Controller
from cloudcoil_cache.models import PartialObjectMetadata
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Secret

PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
PARTIAL = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


def _secret(server, name, owner=None, **meta):
    metadata = {"name": name, **meta}
    if owner is not None:
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": owner["metadata"]["name"]}
        metadata["ownerReferences"] = [{**ref, "uid": owner["metadata"]["uid"], "controller": True}]
    return server.create("secrets", {"metadata": metadata, "data": {"k": "dmFs"}}, "default")


def test_owned_secrets_held_as_metadata_queue_their_owner(config, fake_api_server, make_cm):
    parent = make_cm("parent")
    ctl = Controller(ConfigMap, config=config).owns(Secret, metadata_only=True)
    meta = PartialObjectMetadata.of(Secret)
    assert ctl.owned_kinds == (meta,) and meta.plural == "secrets"  # RBAC: list and watch secrets
    calls = Calls()

    @ctl.reconcile()
    def reconcile(cm, ctx):
        child = ctx.cached(meta).get("child")
        calls.add((cm.name, None if child is None else (type(child).__name__, child.metadata.labels)))

    with ctl:
        calls.wait(lambda c: ("parent", None) in c)
        _secret(fake_api_server, "child", owner=parent)
        calls.wait(lambda c: ("parent", ("SecretMetadata", None)) in c)  # the child's add queued its owner
        fake_api_server.patch("secrets", "child", {"metadata": {"labels": {"v": "2"}}}, "default")
        calls.wait(lambda c: ("parent", ("SecretMetadata", {"v": "2"})) in c)  # so did its update
        child = ctl.cached(meta).get("child")
        assert child is not None and "data" not in child.to_dict()
        with config:
            assert child.full().data == {"k": "dmFs"}  # the whole Secret: one get away
    secret_reads = [r for r in fake_api_server.requests if r.path.endswith("/secrets")]
    informer_lists = [r for r in secret_reads if r.verb == "list"]
    assert informer_lists and all(r.headers["Accept"].startswith(PARTIAL_LIST) for r in informer_lists)
    assert all(r.headers["Accept"].startswith(PARTIAL) for r in secret_reads if r.verb == "watch")


def test_a_watch_mapper_gets_metadata_objects(config, fake_api_server, make_cm):
    make_cm("target")
    ctl = Controller(ConfigMap, config=config)
    mapped = Calls()
    calls = Calls()

    @ctl.watch(Secret, metadata_only=True)
    def to_target(secret):
        mapped.add(type(secret).__name__)
        return f"default/{secret.metadata.annotations['target']}"

    @ctl.reconcile()
    def reconcile(cm, ctx):
        calls.add(cm.name)

    with ctl:
        calls.wait(lambda c: c.count("target") == 1)
        _secret(fake_api_server, "s", annotations={"target": "target"})
        calls.wait(lambda c: c.count("target") == 2)
    assert mapped.snapshot() == ["SecretMetadata"]
    assert ctl.watched_kinds == (PartialObjectMetadata.of(Secret),)


def test_reading_the_whole_kind_of_a_metadata_source_names_what_can_be_read(config, make_cm):
    make_cm("p")
    ctl = Controller(ConfigMap, config=config).owns(Secret, metadata_only=True)
    errors = Calls()

    @ctl.reconcile()
    def reconcile(cm, ctx):
        try:
            ctx.cached(Secret)
        except ValueError as exc:
            errors.add(str(exc))

    with ctl:
        errors.wait(lambda c: len(c) == 1)
    assert "PartialObjectMetadata.of(Secret)" in errors.snapshot()[0]
