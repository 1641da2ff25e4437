"""``Tuning(page_size=0)``: unpaginated LISTs (client-go's choice against a watch cache), over the fake API server."""

from __future__ import annotations

import logging
import urllib.request
from typing import Any

import attrs
from cluster_support import FAST, Recorder, relist_after_410_deleting, seed

from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod

PODS = "/api/v1/pods"
UNPAGINATED = attrs.evolve(FAST, page_size=0)


def lists(server: FakeAPIServer) -> list[Any]:
    return [r for r in server.requests if r.verb == "list" and r.path == PODS]


def informer_of(config: Config) -> Any:
    return config.cache.get_informer(Pod)  # type: ignore[union-attr]


def store_names(config: Config) -> set[str]:
    return {p.name for p in informer_of(config).list()}


def test_the_first_list_is_one_consistent_unpaginated_request_then_the_watch_continues(server, make_config):
    seed(server, 5)
    config = make_config(resources=[Pod], tuning=UNPAGINATED)
    rec = Recorder()
    rec.hook(informer_of(config))
    with config:
        (first,) = lists(server)
        # no limit, and no resourceVersion: a consistent read (kube-apiserver 1.31+ serves it from
        # its watch cache), never "0" (any: possibly older than a write this process made)
        assert "limit" not in first.query and first.query.get("resourceVersion", "") == ""
        assert store_names(config) == {f"pod-{i}" for i in range(5)}
        server.create("pods", make_pod("late", "default"))
        rec.wait(lambda ev: "late" in [o.metadata.name for k, o in ev if k == "add"])
        assert len(lists(server)) == 1


def test_a_relist_at_the_last_rv_is_unpaginated_not_older_than(server, make_config):
    seed(server, 3)
    config = make_config(resources=[Pod], tuning=UNPAGINATED)
    rec = Recorder()
    rec.hook(informer_of(config))
    with config:
        rec.wait(lambda ev: len(ev) >= 3)
        relist_after_410_deleting(server, rec, "pod-0")
        relist = lists(server)[0]
        # a concrete RV without a limit means "not older than" (served from the watch cache)
        assert relist.query.get("resourceVersion") not in (None, "", "0")
        assert "limit" not in relist.query and "resourceVersionMatch" not in relist.query
        assert store_names(config) == {"pod-1", "pod-2"}


def _body_bytes(server: FakeAPIServer, query: str) -> int:
    with urllib.request.urlopen(f"{server.url}{PODS}{query}", timeout=10) as response:
        return len(response.read())


def test_the_list_is_decoded_while_it_is_read_so_max_list_bytes_bounds_only_what_is_unparsed(
    server, make_config, caplog
):
    seed(server, 250)
    whole = _body_bytes(server, "")
    server.clear_requests()
    # the body is three times the bound, but it is cut into batches of at most half of it
    tuning = attrs.evolve(UNPAGINATED, max_list_bytes=whole // 3)
    config = make_config(resources=[Pod], tuning=tuning)
    with caplog.at_level(logging.WARNING, logger="cloudcoil_cache.caching._reflector"), config:
        assert len(store_names(config)) == 250
        (only,) = lists(server)
        assert "limit" not in only.query
    assert "max_list_bytes" not in caplog.text
