"""Helpers for the client tests: small pods, the Widget custom resource, request-log lookups."""

from __future__ import annotations

from typing import Any

from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.models.kubernetes.core.v1 import Container, Pod, PodSpec
from cloudcoil_cache.resources import GenericResource
from cloudcoil_cache.testing import FakeAPIServer, RecordedRequest

Widget = GenericResource.define(api_version="example.com/v1", kind="Widget", plural="widgets", namespaced=True)


def pod(
    name: str,
    namespace: str | None = None,
    *,
    labels: dict[str, str] | None = None,
    image: str = "nginx:1.27",
    **meta: Any,
) -> Pod:
    """A small editable Pod with one container ``web``."""
    return Pod(
        metadata=ObjectMeta(name=name, namespace=namespace, labels=labels, **meta),
        spec=PodSpec(containers=[Container(name="web", image=image)]),
    )


def last(server: FakeAPIServer, verb: str) -> RecordedRequest:
    """The most recent request with this Kubernetes verb."""
    matching = [r for r in server.requests if r.verb == verb]
    assert matching, f"no {verb} request was logged"
    return matching[-1]
