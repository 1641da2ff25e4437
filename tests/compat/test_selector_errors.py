"""An invalid selector fails a cached read the way the API server fails a live one: 400 BadRequest."""

from __future__ import annotations

import pytest
from cluster_support import seed

from cloudcoil_cache.errors import BadRequest, InvalidSelector
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod


@pytest.mark.parametrize("selector", ["app in (a", "=x", "!", "a b"])
def test_a_bad_label_selector_is_a_bad_request_from_the_cache_and_from_the_server(server, make_config, selector):
    seed(server, 1)
    config = make_config(resources=[Pod])  # ConfigMaps are read live
    with config:
        with pytest.raises(BadRequest) as cached:
            Pod.list(namespace="default", label_selector=selector)
        with pytest.raises(BadRequest) as live:
            ConfigMap.list(namespace="default", label_selector=selector)
    assert isinstance(cached.value, InvalidSelector) and isinstance(cached.value, ValueError)
    assert cached.value.code == live.value.code == 400
    assert selector in str(cached.value)
    assert not [
        r
        for r in server.requests
        if r.verb == "list" and r.path.endswith("/pods") and r.query.get("labelSelector") == selector
    ]  # refused before any request


def test_a_bad_field_selector_is_a_bad_request_too(server, make_config):
    config = make_config(resources=[Pod])
    with config:
        with pytest.raises(BadRequest) as cached:
            Pod.list(namespace="default", field_selector="metadata.name")
    assert isinstance(cached.value, ValueError) and "invalid field selector" in str(cached.value)
