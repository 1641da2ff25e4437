"""``Tuning(streaming_lists=True)``: the sync is one WATCH with ``sendInitialEvents=true`` (KEP-3157),
over the fake API server; a server without the feature makes the informer LIST+WATCH for good."""

from __future__ import annotations

import logging
from typing import Any

import attrs
import pytest
from cluster_support import FAST, Recorder, relist_after_410_deleting, seed

from cloudcoil_cache._listwatch._request import watch_params
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod

PODS = "/api/v1/pods"
STREAMING = attrs.evolve(FAST, streaming_lists=True)
LOGGER = "cloudcoil_cache.caching._reflector"


def lists(server: FakeAPIServer) -> list[Any]:
    return [r for r in server.requests if r.verb == "list" and r.path == PODS]


def streaming_watches(server: FakeAPIServer) -> list[Any]:
    return [r for r in server.requests if r.verb == "watch" and r.query.get("sendInitialEvents") == "true"]


def informer_of(config: Config) -> Any:
    return config.cache.get_informer(Pod)  # type: ignore[union-attr]


def contents(config: Config) -> dict[str, tuple[str, str]]:
    return {p.name: (p.metadata.resource_version, p.metadata.uid) for p in informer_of(config).list()}


def synced_events(server: FakeAPIServer, make_config: Any, tuning: Any) -> tuple[dict[str, Any], list[Any], Any]:
    """Sync an informer with ``tuning``, then see a create, an update and a delete arrive."""
    config = make_config(resources=[Pod], tuning=tuning)
    rec = Recorder()
    rec.hook(informer_of(config))
    with config:
        rec.wait(lambda ev: len(ev) >= 6)
        synced = contents(config)
        server.create("pods", make_pod("late", "default"))
        server.patch("pods", "pod-1", {"metadata": {"labels": {"run": str(tuning.streaming_lists)}}}, "default")
        server.delete("pods", "pod-2", "default")
        rec.wait(lambda ev: "pod-2" in [v.metadata.name for k, v in ev if k == "delete"])
        status = informer_of(config).status()
        after = contents(config)
    kinds = [(k, (v[1] if isinstance(v, tuple) else v).metadata.name) for k, v in rec.events]
    return {"synced": synced, "after": after}, kinds, status


def test_watch_params_ask_for_a_streaming_list():
    params = watch_params(resource_version="", timeout_seconds=5, send_initial_events=True)
    assert params["sendInitialEvents"] == "true"
    assert params["resourceVersionMatch"] == "NotOlderThan"
    assert params["allowWatchBookmarks"] == "true"
    assert "sendInitialEvents" not in watch_params(resource_version="5", allow_bookmarks=True)


def test_a_streaming_sync_is_one_watch_and_gives_the_cache_and_events_of_list_watch(server, make_config):
    seed(server, 6)
    server.clear_requests()
    streamed, streamed_events, status = synced_events(server, make_config, STREAMING)
    # no LIST: one watch carried the sync and the events after it
    assert lists(server) == []
    (watch,) = [r for r in server.requests if r.verb == "watch" and r.path == PODS]
    assert watch.query.get("sendInitialEvents") == "true"
    assert watch.query.get("resourceVersionMatch") == "NotOlderThan"
    assert watch.query.get("allowWatchBookmarks") == "true"
    assert status.last_error is None and status.relist_count == 1 and status.synced
    # the same again, with LIST+WATCH, from the state the first run left
    server.delete("pods", "late", "default")
    server.create("pods", make_pod("pod-2", "default", index=2))
    server.clear_requests()
    listed, listed_events, _ = synced_events(server, make_config, FAST)
    assert len(lists(server)) == 1 and streaming_watches(server) == []
    assert set(streamed["synced"]) == set(listed["synced"]) == {f"pod-{i}" for i in range(6)}
    assert set(streamed["after"]) == set(listed["after"])
    assert sorted(streamed_events) == sorted(listed_events)
    assert sorted(k for k, _ in streamed_events) == ["add"] * 7 + ["delete", "update"]


def test_a_relist_after_410_is_a_streaming_list_and_hands_out_the_deletes_it_finds(server, make_config):
    seed(server, 3)
    config = make_config(resources=[Pod], tuning=STREAMING)
    rec = Recorder()
    rec.hook(informer_of(config))
    with config:
        rec.wait(lambda ev: len(ev) >= 3)
        relist_after_410_deleting(server, rec, "pod-0")
        assert set(contents(config)) == {"pod-1", "pod-2"}
        assert lists(server) == [] and streaming_watches(server)
        status = informer_of(config).status()
        assert status.relist_count == 2


@pytest.mark.parametrize("mode", ["refused", "ignored"])
def test_a_server_without_streaming_lists_gets_list_watch_for_good_and_no_error(server, make_config, caplog, mode):
    if mode == "refused":
        server.watch_list_enabled = False  # kube-apiserver 1.27-1.33 with the WatchList gate off: 422
    else:
        server.watch_list_unknown = True  # a server before the parameters existed: a plain watch
    seed(server, 4)
    server.clear_requests()
    caplog.set_level(logging.INFO, logger=LOGGER)
    errors: list[BaseException] = []
    config = make_config(resources=[Pod], tuning=STREAMING)
    rec = Recorder()
    rec.hook(informer_of(config))
    informer_of(config).watch_error_handler = lambda name, exc: errors.append(exc)
    with config:
        rec.wait(lambda ev: len(ev) >= 4)
        assert set(contents(config)) == {f"pod-{i}" for i in range(4)}
        assert rec.count("add") == 4  # the ignored watch's ADDED events never reached a handler
        server.create("pods", make_pod("late", "default"))
        rec.wait(lambda ev: "late" in [o.metadata.name for k, o in ev if k == "add"])
        assert len(streaming_watches(server)) == 1 and len(lists(server)) == 1
        status = informer_of(config).status()
        assert status.last_error is None and status.relist_count == 1 and errors == []
        # a relist (410) lists: the informer does not ask again
        server.stall_watches()
        server.delete("pods", "pod-0", "default")
        server.compact()
        server.clear_faults()
        server.drop_watches()
        rec.wait(lambda ev: "pod-0" in [o.metadata.name for k, o in ev if k == "delete"])
        assert len(streaming_watches(server)) == 1 and len(lists(server)) == 2
    said = [r for r in caplog.records if "streaming lists unavailable" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.INFO
