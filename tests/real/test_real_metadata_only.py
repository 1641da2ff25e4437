"""Metadata-only informers on kube-apiserver: the same scenario as on the fake (tests/metadata_support.py)."""

from __future__ import annotations

from metadata_support import check_media_types, check_metadata_informer

from cloudcoil_cache.models.kubernetes.core.v1 import Secret


def test_kube_apiserver_answers_the_metadata_media_types_as_the_fake(make_config, namespace):
    check_media_types(make_config(cache=False), namespace)


def test_a_metadata_only_informer_on_kube_apiserver(make_config, namespace):
    check_metadata_informer(make_config, namespace, metadata_only=[Secret])
